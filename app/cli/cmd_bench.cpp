// bench: prefill (pp) and decode (tg) tokens/s like llama-bench, next to the decode bound
// that the memory bandwidth measured in the same run allows. Each run is recorded in the shared
// database (bench_record.h) unless --no-record.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/bench_parallel.h"
#include "app/cli/profile_text.h"
#include "app/cli/bench_prefix.h"
#include "app/cli/bench_record.h"
#include "app/cli/bench_verify.h"
#include "app/cli/bench_tokens.h"
#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/metrics/memory_bandwidth.h"
#include "engine/runtime/session.h"

namespace inferscope::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Summary s;
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return s;
}

// Weight bytes one decode step reads: every matrix once (only the routed share of the
// experts), the output projection, one embedding row.
double weight_bytes_per_token(const Model& m) {
  const ModelConfig& c = m.config();
  const ModelWeights& w = m.weights();
  double bytes = static_cast<double>(w.output.bytes()) + static_cast<double>(w.token_embd.row_bytes);
  const double expert_share = c.is_moe() ? static_cast<double>(c.n_expert_used) / c.n_expert : 1.0;
  for (const LayerWeights& l : w.layers) {
    for (const WeightMatrix* x : {&l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_gate, &l.ffn_up, &l.ffn_down, &l.ffn_gate_inp,
                                  &l.ffn_gate_shexp, &l.ffn_up_shexp, &l.ffn_down_shexp}) {
      bytes += static_cast<double>(x->bytes());
    }
    for (const WeightMatrix* x : {&l.ffn_gate_exps, &l.ffn_up_exps, &l.ffn_down_exps}) {
      bytes += expert_share * static_cast<double>(x->bytes());
    }
  }
  return bytes;
}

// The CPU kernel each weight type of the model runs for prefill (n_prompt tokens) and decode (one),
// at this CPU's SIMD level: [{type, prefill, decode}], one entry per type.
nlohmann::json cpu_kernels(const Model& m, int64_t n_prompt) {
  nlohmann::json out = nlohmann::json::array();
  for (const WeightKernels& k : cpu_weight_kernels(m.weights(), n_prompt)) {
    out.push_back({{"type", k.type}, {"prefill", k.prefill}, {"decode", k.decode}});
  }
  return out;
}

struct BenchFigures {
  bool ok = false;
  Summary prefill, decode;  // tokens/s
  OpProfile prefill_profile, decode_profile;
  double dispatches_per_token = 0, submissions_per_token = 0;  // of decode, on device backends
  double graph_launches_per_token = 0;                          // of decode, CUDA graphs
  double decode_threads_reduced = 0;  // automatic threads: share of decode's pool time on fewer than all
};

// The pool's time in run() so far: {on fewer than all its threads, in all} (automatic threads).
std::pair<double, double> pool_seconds(const ThreadPool& pool) {
  double reduced = 0, total = 0;
  for (int active = 1; active <= pool.size(); ++active) {
    const double s = std::chrono::duration<double>(pool.busy_time(active)).count();
    total += s;
    if (active < pool.size()) reduced += s;
  }
  return {reduced, total};
}

// Prefill of n_prompt tokens from an empty context, and n_gen decode steps after `depth`
// tokens of context (filled once; each repetition decodes from there), `reps` times each after
// one warm-up.
BenchFigures measure(Session& session, const Model& model, int64_t n_prompt, int64_t n_gen, int64_t depth, int reps) {
  ForwardExecutor& fp = session.executor();
  const int64_t n_vocab = model.config().n_vocab;
  const std::vector<int32_t> prompt = bench_tokens(n_prompt, n_vocab);
  const std::vector<int32_t> gen = bench_tokens(n_gen, n_vocab);
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  auto run_prefill = [&]() -> double {
    fp.clear();
    const auto t0 = Clock::now();
    if (!fp.forward(0, prompt, false, logits.data())) return -1;
    return n_prompt / std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto run_decode = [&]() -> double {
    fp.truncate(0, depth);
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < n_gen; ++i) {
      if (!fp.forward(0, std::span<const int32_t>(&gen[static_cast<size_t>(i)], 1), false, logits.data())) return -1;
    }
    return n_gen / std::chrono::duration<double>(Clock::now() - t0).count();
  };
  BenchFigures f;
  std::vector<double> pp, tg;
  run_prefill();  // warm-up: page in the weights, settle the threads
  for (int r = 0; r < reps; ++r) {
    fp.profile().reset();
    pp.push_back(run_prefill());
    add_profile(f.prefill_profile, fp.profile());
  }
  fp.clear();
  const std::vector<int32_t> context = bench_tokens(depth, n_vocab);
  if (depth > 0 && !fp.forward(0, context, false, logits.data())) return f;
  run_decode();
  const auto [reduced_before, total_before] = pool_seconds(session.pool());
  for (int r = 0; r < reps; ++r) {
    fp.profile().reset();
    const ExecutorCounters before = fp.counters();
    tg.push_back(run_decode());
    const ExecutorCounters after = fp.counters();
    f.dispatches_per_token = static_cast<double>(after.dispatches - before.dispatches) / static_cast<double>(n_gen);
    f.submissions_per_token = static_cast<double>(after.submissions - before.submissions) / static_cast<double>(n_gen);
    f.graph_launches_per_token =
        static_cast<double>(after.graph_launches - before.graph_launches) / static_cast<double>(n_gen);
    add_profile(f.decode_profile, fp.profile());
  }
  const auto [reduced_after, total_after] = pool_seconds(session.pool());
  // Differences of running sums: clamped, as rounding can put an all-reduced share a hair above 1.
  if (total_after > total_before) {
    f.decode_threads_reduced = std::clamp((reduced_after - reduced_before) / (total_after - total_before), 0.0, 1.0);
  }
  f.ok = *std::min_element(pp.begin(), pp.end()) > 0 && *std::min_element(tg.begin(), tg.end()) > 0;
  if (f.ok) {
    f.prefill = summarize(pp);
    f.decode = summarize(tg);
  }
  return f;
}

// The KV configurations to measure: --cache-type-k and --cache-type-v as comma lists (like
// llama-bench), paired in order; a single entry pairs with every entry of the other list.
std::vector<KvTypes> kv_configurations(Args& args) {
  auto list = [&](const char* name) {
    std::vector<KvType> types;
    std::string text = args.string(name, "f16");
    for (size_t begin = 0; begin <= text.size();) {
      const size_t end = std::min(text.find(',', begin), text.size());
      auto t = parse_kv_type_name(text.substr(begin, end - begin));
      if (!t) args.fail("--" + std::string(name) + ": " + t.message());
      else types.push_back(*t);
      begin = end + 1;
    }
    return types;
  };
  const std::vector<KvType> k = list("cache-type-k"), v = list("cache-type-v");
  if (!args.ok()) return {};
  if (k.size() != v.size() && k.size() != 1 && v.size() != 1) {
    args.fail("--cache-type-k and --cache-type-v list different numbers of types");
    return {};
  }
  std::vector<KvTypes> out;
  for (size_t i = 0; i < std::max(k.size(), v.size()); ++i) {
    out.push_back({k[k.size() == 1 ? 0 : i], v[v.size() == 1 ? 0 : i]});
  }
  return out;
}

// Allocated minus used KV rows, over allocated, of the blocks the slots hold.
double kv_fragmentation(const KvBlockStats& b) {
  if (b.positions_in_blocks == 0) return 0.0;
  return static_cast<double>(b.positions_in_blocks - b.positions_held) / static_cast<double>(b.positions_in_blocks);
}

struct KvRun {
  KvTypes types;
  BenchFigures figures;
  MemoryUsage memory;
};

nlohmann::json kv_runs_json(const std::vector<KvRun>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const KvRun& r : runs) {
    out.push_back({{"cache_type_k", std::string(kernels::kv_type_name(r.types.k))},
                   {"cache_type_v", std::string(kernels::kv_type_name(r.types.v))},
                   {"prefill_tokens_per_s", r.figures.prefill.median},
                   {"decode_tokens_per_s", {{"median", r.figures.decode.median},
                                            {"min", r.figures.decode.min},
                                            {"max", r.figures.decode.max}}},
                   {"decode_ratio_to_first", r.figures.decode.median / runs.front().figures.decode.median},
                   {"kv_cache_bytes", r.memory.kv_cache_bytes}});
  }
  return out;
}

void print_kv_runs(const std::vector<KvRun>& runs, int64_t n_prompt, int64_t n_gen, int64_t depth) {
  std::printf("KV cache types, measured one after another in this run (decode after %lld tokens):\n",
              (long long)depth);
  for (const KvRun& r : runs) {
    std::printf("  %-16s pp%lld %7.1f  tg%lld %6.2f tokens/s (min %.2f, max %.2f)  %.3fx of %s  KV %s (%.1f%%)\n",
                kv_types_label(r.types).c_str(), (long long)n_prompt, r.figures.prefill.median, (long long)n_gen,
                r.figures.decode.median, r.figures.decode.min, r.figures.decode.max,
                r.figures.decode.median / runs.front().figures.decode.median, kv_types_label(runs.front().types).c_str(),
                format_bytes(r.memory.kv_cache_bytes).c_str(),
                100.0 * static_cast<double>(r.memory.kv_cache_bytes) /
                    static_cast<double>(runs.front().memory.kv_cache_bytes));
  }
}

}  // namespace

int run_bench(int argc, char** argv) {
  Args args(argc, argv, "bench", "Measures prefill and decode tokens/s and the memory-bandwidth bound.",
            {kModelOption,
             {"prompt-tokens", "N", "prefill length (default 128)"},
             {"gen-tokens", "N", "decode steps (default 64)"},
             {"reps", "N", "repetitions; the median is reported (default 5)"},
             {"depth", "N", "decode after N tokens of context, like llama-bench -d (default 0)"},
             {"cache-type-k", "LIST", "KV cache types of K, comma-separated: each is measured (default f16)"},
             {"cache-type-v", "LIST", "KV cache types of V, paired with those of K (default f16)"},
             kKvBlockSizeOption,
             kCacheBudgetOption,
             kNoPrefixCacheOption,
             kKvWindowOption,
             kKvSinksOption,
             kContextShiftOption,
             {"shared-prefix", "N", "instead: time to first token of prompts sharing N tokens, cold then cached"},
             {"new-tokens", "N", "with --shared-prefix: each prompt's own tokens after the shared ones (default 32)"},
             {"chats", "N", "with --shared-prefix: how many prompts share the prefix (default 2)"},
             {"parallel", "N", "instead: decode N sequences together, aggregate and per-sequence tokens/s against one alone"},
             {"verify", "N", "instead: the time of a speculative verification of N drafted tokens against a decode step"},
             kThreadsOption,
             kMmapOption,
             kBackendOption,
             kDeviceOption,
             {"vs-cpu", nullptr, "also run the CPU backend in the same run and print the ratio"},
             {"json", nullptr, "print one JSON object"},
             kDatabaseOption,
             kNoRecordOption});
  if (!args.ok()) return args.exit_code();
  const int64_t n_prompt = args.integer("prompt-tokens", 128, 1, 1 << 16);
  const int64_t n_gen = args.integer("gen-tokens", 64, 1, 1 << 16);
  const int reps = static_cast<int>(args.integer("reps", 5, 1, 1000));
  const int64_t depth = args.integer("depth", 0, 0, 1 << 20);
  const std::vector<KvTypes> kv_configs = kv_configurations(args);
  SessionOptions so;
  so.n_threads = read_threads(args);
  read_kv_pool_options(args, &so);
  if (!args.ok() || !check_backend(args, &so.backend)) return args.exit_code();
  auto model = load_model_from_args(args);
  if (!model) return 1;
  so.kv_types = kv_configs.front();
  if (args.has("shared-prefix")) return run_prefix_bench(args, model, so);
  if (args.has("parallel")) return run_parallel_bench(args, model, so);
  if (args.has("verify")) return run_verify_bench(args, model, so);
  so.n_ctx = std::max<int64_t>(n_prompt, depth + n_gen + 1);
  so.max_batch = std::max<int64_t>(n_prompt, 1);
  so.kv_types = kv_configs.front();
  const std::unique_ptr<Session> session = open_session(model, so);
  if (!session) return 1;
  const BenchFigures figures = measure(*session, *model, n_prompt, n_gen, depth, reps);
  if (!figures.ok) {
    std::fprintf(stderr, "error: forward pass failed\n");
    return 1;
  }
  // Every other KV configuration, one after another in this run (the weights stay loaded).
  std::vector<KvRun> kv_runs = {{kv_configs.front(), figures, session->memory()}};
  for (size_t i = 1; i < kv_configs.size(); ++i) {
    SessionOptions kv_options = so;
    kv_options.kv_types = kv_configs[i];
    const std::unique_ptr<Session> kv_session = open_session(model, kv_options);
    if (!kv_session) return 1;
    const BenchFigures f = measure(*kv_session, *model, n_prompt, n_gen, depth, reps);
    if (!f.ok) {
      std::fprintf(stderr, "error: forward pass failed with KV cache %s\n", kv_types_label(kv_configs[i]).c_str());
      return 1;
    }
    kv_runs.push_back({kv_configs[i], f, kv_session->memory()});
  }
  // The same model on the CPU backend, in the same run, for the ratio of the two.
  std::optional<BenchFigures> cpu;
  if (args.flag("vs-cpu") && !so.backend.on_cpu()) {
    SessionOptions cpu_options = so;
    cpu_options.backend = {};
    const std::unique_ptr<Session> cpu_session = open_session(model, cpu_options);
    if (!cpu_session) return 1;
    cpu = measure(*cpu_session, *model, n_prompt, n_gen, depth, reps);
  }
  ThreadPool all_threads(session->pool().size());  // the machine's bound, whatever "auto" chose
  const double bandwidth = measure_read_bandwidth(all_threads);
  const double bytes_per_token = weight_bytes_per_token(*model);
  const double bound = bandwidth / bytes_per_token;
  const Summary &spp = figures.prefill, &stg = figures.decode;
  const MemoryUsage mem = session->memory();
  nlohmann::json j = {
      {"model", args.string("model", default_model_path())},
      {"threads", session->pool().size()},
      {"threads_automatic", session->pool().adaptive()},
      {"decode_threads_reduced_share", figures.decode_threads_reduced},
      {"prompt_tokens", n_prompt},
      {"gen_tokens", n_gen},
      {"depth", depth},
      {"reps", reps},
      {"prefill_tokens_per_s", {{"median", spp.median}, {"min", spp.min}, {"max", spp.max}}},
      {"decode_tokens_per_s", {{"median", stg.median}, {"min", stg.min}, {"max", stg.max}}},
      {"bandwidth_gb_per_s", bandwidth / 1e9},
      {"weight_bytes_per_token", bytes_per_token},
      {"decode_bound_tokens_per_s", bound},
      {"decode_percent_of_bound", 100.0 * stg.median / bound},
      {"memory", memory_json(mem)},
      {"backend", session->executor().backend_name()},
      {"dispatches_per_token", figures.dispatches_per_token},
      {"submissions_per_token", figures.submissions_per_token},
      {"graph_launches_per_token", figures.graph_launches_per_token}};
  if (cpu) {
    j["cpu"] = {{"prefill_tokens_per_s", cpu->prefill.median}, {"decode_tokens_per_s", cpu->decode.median}};
    j["prefill_ratio_to_cpu"] = spp.median / cpu->prefill.median;
    j["decode_ratio_to_cpu"] = stg.median / cpu->decode.median;
  }
  if (kv_runs.size() > 1) j["kv_cache_runs"] = kv_runs_json(kv_runs);
  j["kv_fragmentation"] = kv_fragmentation(mem.kv_blocks);
  if (so.backend.on_cpu()) j["kernels"] = cpu_kernels(*model, n_prompt);
  if (args.flag("json")) {
    std::printf("%s\n", j.dump().c_str());
    record_bench_run(args, j);
    return 0;
  }
  std::printf("model: %s (%s of weights read per decoded token), %d threads%s\n",
              args.string("model", default_model_path()).c_str(), format_bytes(uint64_t(bytes_per_token)).c_str(),
              session->pool().size(), session->pool().adaptive() ? " (automatic)" : "");
  std::printf("pp%-5lld %9.1f tokens/s  (min %.1f, max %.1f over %d reps)\n", (long long)n_prompt, spp.median, spp.min,
              spp.max, reps);
  std::printf("tg%-5lld %9.1f tokens/s  (min %.1f, max %.1f over %d reps)%s\n", (long long)n_gen, stg.median,
              stg.min, stg.max, reps, depth > 0 ? (" after " + std::to_string(depth) + " tokens of context").c_str() : "");
  if (session->pool().adaptive() && session->pool().size() > 1) {
    std::printf("automatic threads: %.0f%% of decode on fewer than %d threads (while other programs kept cores busy)\n",
                100.0 * figures.decode_threads_reduced, session->pool().size());
  }
  std::printf("KV cache %s: %s for %lld positions (%s per position)\n", kv_types_label(mem.kv_types).c_str(),
              format_bytes(mem.kv_cache_bytes).c_str(), (long long)session->n_ctx(),
              format_bytes(mem.kv_cache_bytes / static_cast<uint64_t>(session->n_ctx())).c_str());
  std::printf("KV blocks of %d positions: %lld positions held in %lld rows of blocks (fragmentation %.2f%%)\n",
              mem.kv_blocks.block_size, (long long)mem.kv_blocks.positions_held,
              (long long)mem.kv_blocks.positions_in_blocks, 100.0 * kv_fragmentation(mem.kv_blocks));
  if (kv_runs.size() > 1) print_kv_runs(kv_runs, n_prompt, n_gen, depth);
  std::printf("time by op, prefill: %s\n", profile_text(figures.prefill_profile).c_str());
  std::printf("time by op, decode:  %s\n", profile_text(figures.decode_profile).c_str());
  if (so.backend.on_cpu()) {
    for (const nlohmann::json& k : j["kernels"]) {
      std::printf("kernel %s: prefill %s; decode %s\n", k["type"].get<std::string>().c_str(),
                  k["prefill"].get<std::string>().c_str(), k["decode"].get<std::string>().c_str());
    }
  }
  if (!so.backend.on_cpu()) {
    std::printf("backend %s: %.1f dispatches, %.2f submissions and %.2f graph launches per decoded token\n",
                session->executor().backend_name().c_str(), figures.dispatches_per_token,
                figures.submissions_per_token, figures.graph_launches_per_token);
  }
  if (cpu) {
    std::printf("cpu backend: pp %.1f, tg %.1f tokens/s -> %s/cpu: prefill %.3fx, decode %.3fx\n", cpu->prefill.median,
                cpu->decode.median, so.backend.backend.c_str(), spp.median / cpu->prefill.median,
                stg.median / cpu->decode.median);
  }
  if (so.backend.on_cpu()) {
    std::printf("memory bandwidth %.1f GB/s -> decode bound %.1f tokens/s; decode reaches %.1f%% of it\n",
                bandwidth / 1e9, bound, 100.0 * stg.median / bound);
  }
  record_bench_run(args, j);
  return 0;
}

}  // namespace inferscope::cli
