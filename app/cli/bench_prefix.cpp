#include "app/cli/bench_prefix.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/bench_tokens.h"
#include "app/cli/cli_common.h"
#include "app/cli/profile_text.h"

namespace inferscope::cli {

namespace {

struct ChatRun {
  double ttft_ms = 0;
  int64_t reused = 0;
  OpProfile profile;  // the request's time by op
};

// One prompt as a chat's first request: the cached prefix taken, the rest prefilled, up to the
// first token's logits.
bool first_token(ForwardExecutor& fp, const std::vector<int32_t>& prompt, std::vector<float>& logits, ChatRun* run) {
  fp.profile().reset();
  const auto t0 = std::chrono::steady_clock::now();
  run->reused = fp.reuse_prefix(0, prompt);
  const auto rest = std::span(prompt).subspan(static_cast<size_t>(run->reused));
  if (!fp.forward(0, rest, false, logits.data())) return false;
  run->ttft_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  add_profile(run->profile, fp.profile());
  return true;
}

}  // namespace

int run_prefix_bench(Args& args, std::shared_ptr<const Model> model, SessionOptions options) {
  const int64_t n_shared = args.integer("shared-prefix", 0, 1, 1 << 20);
  const int64_t n_new = args.integer("new-tokens", 32, 1, 1 << 20);
  const int chats = static_cast<int>(args.integer("chats", 2, 2, 64));
  if (!args.ok()) return args.exit_code();
  options.n_ctx = std::max(options.n_ctx, n_shared + n_new + 1);
  options.cache.prefix_cache = true;
  const std::unique_ptr<Session> session = open_session(model, options);
  if (!session) return 1;
  ForwardExecutor& fp = session->executor();
  const int64_t n_vocab = model->config().n_vocab;
  const std::vector<int32_t> shared = bench_tokens(n_shared, n_vocab);
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  std::vector<ChatRun> runs(static_cast<size_t>(chats));
  for (int c = 0; c < chats; ++c) {
    std::vector<int32_t> prompt = shared;
    const std::vector<int32_t> own = bench_tokens(n_new, n_vocab, c + 1);
    prompt.insert(prompt.end(), own.begin(), own.end());
    if (!first_token(fp, prompt, logits, &runs[static_cast<size_t>(c)])) {
      std::fprintf(stderr, "error: forward pass failed\n");
      return 1;
    }
  }
  double warm_ms = 0;
  for (int c = 1; c < chats; ++c) warm_ms += runs[static_cast<size_t>(c)].ttft_ms / (chats - 1);
  const KvBlockStats blocks = fp.kv_blocks();
  const double hit_rate =
      blocks.prefix_lookups > 0 ? static_cast<double>(blocks.prefix_hits) / static_cast<double>(blocks.prefix_lookups) : 0;
  if (args.flag("json")) {
    nlohmann::json list = nlohmann::json::array();
    for (const ChatRun& r : runs) list.push_back({{"ttft_ms", r.ttft_ms}, {"reused_tokens", r.reused}});
    const nlohmann::json j = {{"shared_prefix", n_shared},
                              {"new_tokens", n_new},
                              {"block_size", blocks.block_size},
                              {"cold_ttft_ms", runs.front().ttft_ms},
                              {"warm_ttft_ms", warm_ms},
                              {"reused_tokens", runs[1].reused},
                              {"ttft_ratio", runs.front().ttft_ms / warm_ms},
                              {"prefix_hit_rate", hit_rate},
                              {"chats", list},
                              {"backend", fp.backend_name()}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%d prompts of %lld shared + %lld own tokens, KV blocks of %d positions (%s):\n", chats,
              (long long)n_shared, (long long)n_new, blocks.block_size, fp.backend_name().c_str());
  for (int c = 0; c < chats; ++c) {
    const ChatRun& r = runs[static_cast<size_t>(c)];
    std::printf("  prompt %d: time to first token %9.1f ms, %lld tokens reused, %lld prefilled%s\n", c + 1, r.ttft_ms,
                (long long)r.reused, (long long)(n_shared + n_new - r.reused), c == 0 ? " (cold)" : "");
  }
  std::printf("cold / warm time to first token: %.1fx; prefix block hit rate %.1f%% (%lld of %lld lookups)\n",
              runs.front().ttft_ms / warm_ms, 100.0 * hit_rate, (long long)blocks.prefix_hits,
              (long long)blocks.prefix_lookups);
  for (int c : {0, 1}) {
    const ChatRun& r = runs[static_cast<size_t>(c)];
    double in_ops = 0;
    for (double s : r.profile.seconds) in_ops += s;
    std::printf("time by op, %s (%.1f of %.1f ms in ops): %s\n", c == 0 ? "cold" : "prompt 2", 1000.0 * in_ops,
                r.ttft_ms, profile_text(r.profile).c_str());
  }
  return 0;
}

}  // namespace inferscope::cli
