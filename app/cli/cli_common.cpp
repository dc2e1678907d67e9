#include "app/cli/cli_common.h"

#include <cstdio>

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

bool check_backend(Args& args) {
  const std::string backend = args.string("backend", "cpu");
  if (backend == "cpu") return true;
  args.fail("backend '" + backend + "' is not available (available: cpu)");
  return false;
}

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= (uint64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(uint64_t(1) << 30));
  else if (bytes >= (uint64_t(1) << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
  else std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  return buf;
}

void print_memory(const MemoryUsage& m) {
  std::fprintf(stderr, "memory: weights %s, KV cache %s, scratch %s (peak RSS %s)\n",
               format_bytes(m.weights_bytes).c_str(), format_bytes(m.kv_cache_bytes).c_str(),
               format_bytes(m.scratch_bytes).c_str(), format_bytes(m.peak_rss_bytes).c_str());
}

nlohmann::json memory_json(const MemoryUsage& m) {
  return {{"weights_bytes", m.weights_bytes},
          {"kv_cache_bytes", m.kv_cache_bytes},
          {"scratch_bytes", m.scratch_bytes},
          {"peak_rss_bytes", m.peak_rss_bytes}};
}

}  // namespace inferscope::cli
