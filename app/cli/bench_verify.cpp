#include "app/cli/bench_verify.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/bench_tokens.h"
#include "app/cli/cli_common.h"

namespace inferscope::cli {

namespace {

// The median seconds of `reps` runs of `call`, each from a context of `kept` positions;
// negative when a call failed.
double median_seconds(ForwardExecutor& fp, int64_t kept, int reps, const std::function<Status()>& call) {
  std::vector<double> seconds;
  for (int r = 0; r <= reps; ++r) {  // the first run warms up
    fp.truncate(0, kept);
    const auto t0 = std::chrono::steady_clock::now();
    if (!call().is_ok()) return -1;
    if (r > 0) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace

int run_verify_bench(Args& args, std::shared_ptr<const Model> model, SessionOptions options) {
  const int64_t n_draft = args.integer("verify", 8, 1, 256);
  const int64_t n_prompt = args.integer("prompt-tokens", 128, 1, 1 << 16);
  const int reps = static_cast<int>(args.integer("reps", 9, 1, 1000));
  if (!args.ok()) return args.exit_code();
  const int64_t rows = n_draft + 1;
  options.n_ctx = std::max(options.n_ctx, n_prompt + rows);
  options.max_batch = std::max(options.max_batch, rows);
  const std::unique_ptr<Session> session = open_session(model, options);
  if (!session) return 1;
  ForwardExecutor& fp = session->executor();
  const int64_t n_vocab = model->config().n_vocab;
  const std::vector<int32_t> prompt = bench_tokens(n_prompt, n_vocab), draft = bench_tokens(rows, n_vocab, 1);
  std::vector<float> logits(static_cast<size_t>(rows * n_vocab));
  if (!fp.forward(0, prompt, false, logits.data())) {
    std::fprintf(stderr, "error: forward pass failed\n");
    return 1;
  }
  const std::span<const int32_t> one = std::span(draft).first(1);
  const double step = median_seconds(fp, n_prompt, reps, [&] { return fp.forward(0, one, false, logits.data()); });
  const double verify = median_seconds(fp, n_prompt, reps, [&] { return fp.verify(0, draft, logits.data()); });
  const double forward = median_seconds(fp, n_prompt, reps, [&] { return fp.forward(0, draft, true, logits.data()); });
  if (step < 0 || verify < 0 || forward < 0) {
    std::fprintf(stderr, "error: forward pass failed\n");
    return 1;
  }
  if (args.flag("json")) {
    const nlohmann::json j = {{"drafted_tokens", n_draft},
                              {"prompt_tokens", n_prompt},
                              {"reps", reps},
                              {"threads", session->pool().size()},
                              {"decode_step_ms", 1e3 * step},
                              {"verify_ms", 1e3 * verify},
                              {"forward_ms", 1e3 * forward},
                              {"verify_in_steps", verify / step},
                              {"forward_in_steps", forward / step},
                              {"backend", fp.backend_name()}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("after %lld tokens of context, median of %d (%s, %d threads):\n", (long long)n_prompt, reps,
              fp.backend_name().c_str(), session->pool().size());
  std::printf("  one decode step:                           %8.2f ms\n", 1e3 * step);
  std::printf("  verify of %lld drafted tokens (%lld rows):      %8.2f ms = %.2f steps (each row as decoding computes it)\n",
              (long long)n_draft, (long long)rows, 1e3 * verify, verify / step);
  std::printf("  the same rows through forward():           %8.2f ms = %.2f steps (the fastest kernels, other last bits)\n",
              1e3 * forward, forward / step);
  std::printf("  a draft of %lld pays off above %.2f accepted tokens per verification (drafting aside)\n",
              (long long)n_draft, verify / step - 1.0);
  return 0;
}

}  // namespace inferscope::cli
