#include "app/cli/bench_parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/bench_tokens.h"
#include "app/cli/profile_text.h"

namespace inferscope::cli {

namespace {

// Prefills n_seq sequences with their prompts, then times n_gen decode steps of all of them
// together; returns the steps' seconds, or a negative number when a forward call failed. The
// steps' time by op is added to `profile`.
double decode_seconds(ForwardExecutor& fp, int n_seq, int64_t n_prompt, int64_t n_gen, int64_t n_vocab,
                      OpProfile& profile) {
  fp.clear();
  std::vector<std::vector<int32_t>> prompts, next;
  std::vector<std::vector<float>> logits(static_cast<size_t>(n_seq), std::vector<float>(static_cast<size_t>(n_vocab)));
  std::vector<SequenceTokens> batch;
  for (int s = 0; s < n_seq; ++s) {
    prompts.push_back(bench_tokens(n_prompt, n_vocab, s + 1));
    next.push_back(bench_tokens(n_gen, n_vocab, s + 101));
  }
  for (int s = 0; s < n_seq; ++s) batch.push_back({s, prompts[static_cast<size_t>(s)], logits[static_cast<size_t>(s)].data()});
  if (!fp.forward_batch(batch)) return -1;
  fp.profile().reset();
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < n_gen; ++step) {
    for (int s = 0; s < n_seq; ++s) batch[static_cast<size_t>(s)].tokens = std::span(next[static_cast<size_t>(s)]).subspan(static_cast<size_t>(step), 1);
    if (!fp.forward_batch(batch)) return -1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  add_profile(profile, fp.profile());
  return seconds;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int run_parallel_bench(Args& args, std::shared_ptr<const Model> model, SessionOptions options) {
  const int n_seq = static_cast<int>(args.integer("parallel", 4, 1, 256));
  const int64_t n_prompt = args.integer("prompt-tokens", 128, 1, 1 << 16);
  const int64_t n_gen = args.integer("gen-tokens", 64, 1, 1 << 16);
  const int reps = static_cast<int>(args.integer("reps", 3, 1, 1000));
  if (!args.ok()) return args.exit_code();
  options.n_ctx = std::max(options.n_ctx, n_prompt + n_gen + 1);
  auto session = Session::create(model, options);
  if (session) {
    const Status slots = (*session)->reserve_sequences(n_seq);
    if (!slots) session = slots;
  }
  if (!session) {
    std::fprintf(stderr, "error: %s\n", session.message().c_str());
    return 1;
  }
  ForwardExecutor& fp = (*session)->executor();
  const int64_t n_vocab = model->config().n_vocab;
  std::vector<double> single, together;
  OpProfile single_profile, together_profile;
  for (int r = 0; r < reps; ++r) {
    const double one = decode_seconds(fp, 1, n_prompt, n_gen, n_vocab, single_profile);
    const double all = decode_seconds(fp, n_seq, n_prompt, n_gen, n_vocab, together_profile);
    if (one < 0 || all < 0) {
      std::fprintf(stderr, "error: forward pass failed\n");
      return 1;
    }
    single.push_back(static_cast<double>(n_gen) / one);
    together.push_back(static_cast<double>(n_gen) / all);
  }
  const double single_rate = median(single), per_sequence = median(together);
  const double aggregate = per_sequence * n_seq;
  if (args.flag("json")) {
    const nlohmann::json j = {{"parallel", n_seq},
                              {"prompt_tokens", n_prompt},
                              {"gen_tokens", n_gen},
                              {"reps", reps},
                              {"threads", (*session)->pool().size()},
                              {"single_decode_tokens_per_s", single_rate},
                              {"per_sequence_decode_tokens_per_s", per_sequence},
                              {"aggregate_decode_tokens_per_s", aggregate},
                              {"aggregate_ratio", aggregate / single_rate},
                              {"backend", fp.backend_name()}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%d sequences decoding together after %lld prompt tokens each, %lld steps, median of %d (%s):\n", n_seq,
              (long long)n_prompt, (long long)n_gen, reps, fp.backend_name().c_str());
  std::printf("  one sequence alone:  %8.2f tokens/s\n", single_rate);
  std::printf("  per sequence:        %8.2f tokens/s\n", per_sequence);
  std::printf("  aggregate:           %8.2f tokens/s (%.2fx the single sequence)\n", aggregate, aggregate / single_rate);
  std::printf("time by op, one alone: %s\n", profile_text(single_profile).c_str());
  std::printf("time by op, together:  %s\n", profile_text(together_profile).c_str());
  return 0;
}

}  // namespace inferscope::cli
