#include "app/cli/cli_common.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace inferscope::cli {

std::shared_ptr<const Model> load_model_from_args(Args& args) {
  const std::string path = args.string("model", default_model_path());
  ModelLoadOptions options;
  options.resident_weights = !args.flag("mmap");
  auto model = Model::load(path, options);
  if (!model) {
    std::fprintf(stderr, "error: %s\n", model.message().c_str());
    return nullptr;
  }
  return *model;
}

bool check_backend(Args& args, BackendChoice* choice) {
  const std::string name = args.string("backend", std::string(kCpuBackend));
  const std::vector<std::string> names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    args.fail("unknown backend '" + name + "' (available: " + known + ")");
    return false;
  }
  choice->backend = name;
  choice->device = static_cast<int>(args.integer("device", 0, 0, 1024));
  if (!args.ok() || choice->on_cpu()) return args.ok();
  const BackendDevices devices = list_backend_devices(name);
  if (!devices.unavailable_reason.empty()) {
    args.fail("the " + name + " backend is not available: " + devices.unavailable_reason);
    return false;
  }
  if (choice->device >= static_cast<int>(devices.devices.size())) {
    args.fail(name + " device " + std::to_string(choice->device) + " does not exist (" +
              std::to_string(devices.devices.size()) + " found; `inspect --devices` lists them)");
    return false;
  }
  return true;
}

void draw_progress_bar(int64_t done, int64_t total, const std::string& text) {
  constexpr int64_t kWidth = 40;
  const int64_t filled = std::clamp<int64_t>(kWidth * done / std::max<int64_t>(1, total), 0, kWidth);
  std::fprintf(stderr, "\r[%s%s] %s", std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(kWidth - filled), '.').c_str(), text.c_str());
  std::fflush(stderr);
}

int fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 1;
}

bool read_file(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buf;
  buf << in.rdbuf();
  *text = buf.str();
  return true;
}

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= (uint64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(uint64_t(1) << 30));
  else if (bytes >= (uint64_t(1) << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
  else std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  return buf;
}

int read_threads(Args& args) {
  if (args.string("threads") == "auto") return 0;
  return static_cast<int>(args.integer("threads", 0, 0, 1024));
}

void read_kv_types(Args& args, KvTypes* types) {
  for (auto [name, type] : {std::pair{"cache-type-k", &types->k}, {"cache-type-v", &types->v}}) {
    if (!args.has(name)) continue;
    auto parsed = parse_kv_type_name(args.string(name));
    if (parsed) *type = *parsed;
    else args.fail("--" + std::string(name) + ": " + parsed.message());
  }
}

std::vector<OptionSpec> session_option_specs() {
  return {kThreadsOption,      kMmapOption,       kContextOption,        kCacheTypeKOption,
          kCacheTypeVOption,   kKvBlockSizeOption, kCacheBudgetOption,   kNoPrefixCacheOption,
          kKvWindowOption,     kKvSinksOption,    kContextShiftOption,   kBackendOption,
          kDeviceOption};
}

bool read_session_options(Args& args, SessionOptions* options) {
  options->n_threads = read_threads(args);
  options->n_ctx = args.integer("context", 0, 0, int64_t(1) << 24);
  read_kv_types(args, &options->kv_types);
  read_kv_pool_options(args, options);
  return args.ok() && check_backend(args, &options->backend);
}

std::vector<OptionSpec> joined(std::vector<OptionSpec> first, const std::vector<OptionSpec>& then) {
  first.insert(first.end(), then.begin(), then.end());
  return first;
}

void read_kv_pool_options(Args& args, SessionOptions* options) {
  options->cache.kv_block_size = static_cast<int32_t>(args.integer("kv-block-size", kDefaultKvBlockSize, 1, 1 << 20));
  if (args.ok()) {
    const Status valid = check_kv_block_size(options->cache.kv_block_size);
    if (!valid) args.fail("--kv-block-size: " + valid.message());
  }
  options->cache.kv_cache_budget_bytes = static_cast<uint64_t>(args.integer("cache-budget", 0, 0, int64_t(1) << 30)) << 20;
  options->cache.prefix_cache = !args.flag("no-prefix-cache");
  options->cache.kv_window = args.integer("kv-window", 0, 0, int64_t(1) << 24);
  options->cache.kv_sinks = args.integer("kv-sinks", 4, 0, int64_t(1) << 24);
  options->cache.context_shift = args.flag("context-shift");
}

std::unique_ptr<Session> open_session(std::shared_ptr<const Model> model, const SessionOptions& options) {
  auto session = Session::create(std::move(model), options);
  if (!session) {
    std::fprintf(stderr, "error: %s\n", session.message().c_str());
    return nullptr;
  }
  return std::move(*session);
}

void print_memory(const MemoryUsage& m) {
  const std::string device =
      m.device_weights_bytes ? ", on the device: weights " + format_bytes(m.device_weights_bytes) : std::string();
  const std::string draft = m.draft_model_bytes ? ", draft model " + format_bytes(m.draft_model_bytes) : std::string();
  const std::string recurrent =
      m.recurrent_bytes ? ", recurrent state " + format_bytes(m.recurrent_bytes) : std::string();
  std::fprintf(stderr, "memory: weights %s, KV cache %s (%s)%s, scratch %s%s%s (peak RSS %s)\n",
               format_bytes(m.weights_bytes).c_str(), format_bytes(m.kv_cache_bytes).c_str(),
               kv_types_label(m.kv_types).c_str(), recurrent.c_str(), format_bytes(m.scratch_bytes).c_str(),
               device.c_str(), draft.c_str(), format_bytes(m.peak_rss_bytes).c_str());
}

nlohmann::json memory_json(const MemoryUsage& m) {
  const KvBlockStats& b = m.kv_blocks;
  return {{"weights_bytes", m.weights_bytes},
          {"kv_blocks", {{"block_size", b.block_size},
                         {"referenced", b.referenced},
                         {"cached", b.cached},
                         {"free", b.free},
                         {"positions_held", b.positions_held},
                         {"positions_in_blocks", b.positions_in_blocks},
                         {"prefix_hits", b.prefix_hits},
                         {"prefix_lookups", b.prefix_lookups}}},
          {"device_weights_bytes", m.device_weights_bytes},
          {"kv_cache_bytes", m.kv_cache_bytes},
          {"recurrent_bytes", m.recurrent_bytes},
          {"kv_cache_type_k", std::string(kernels::kv_type_name(m.kv_types.k))},
          {"kv_cache_type_v", std::string(kernels::kv_type_name(m.kv_types.v))},
          {"scratch_bytes", m.scratch_bytes},
          {"draft_model_bytes", m.draft_model_bytes},
          {"peak_rss_bytes", m.peak_rss_bytes}};
}

}  // namespace inferscope::cli
