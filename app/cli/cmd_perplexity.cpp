// perplexity: exp(mean negative log-likelihood) of a text, evaluated in chunks of the context
// length like llama.cpp's perplexity tool (BOS at each chunk start, the second half scored).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "engine/runtime/session.h"

namespace inferscope::cli {

namespace {

// Negative log-likelihood of `target` under one row of logits.
double token_nll(const float* logits, int64_t n_vocab, int32_t target) {
  float max = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) max = std::max(max, logits[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  return std::log(sum) - (static_cast<double>(logits[target]) - max);
}

}  // namespace

int run_perplexity(int argc, char** argv) {
  Args args(argc, argv, "perplexity", "Computes the perplexity of a model over a text file.",
            {kModelOption,
             {"text", "FILE", "text file to score"},
             {"context", "N", "tokens per chunk (default 512, at most the model's context)"},
             kThreadsOption,
             kMmapOption,
             kCacheTypeKOption,
             kCacheTypeVOption,
             kBackendOption,
             kDeviceOption});
  if (!args.ok()) return args.exit_code();
  KvTypes kv_types;
  read_kv_types(args, &kv_types);
  const int threads = read_threads(args);
  int64_t n_ctx = args.integer("context", 512, 8, int64_t(1) << 20);
  if (!args.has("text")) args.fail("--text FILE is required");
  BackendChoice backend;
  if (!args.ok() || !check_backend(args, &backend)) return args.exit_code();

  std::ifstream in(args.string("text"), std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "error: cannot read %s\n", args.string("text").c_str());
    return 1;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  auto model = load_model_from_args(args);
  if (!model) return 1;
  const Tokenizer& tok = model->tokenizer();
  std::vector<int32_t> tokens = tok.encode(buf.str(), true, false);
  n_ctx = std::min({n_ctx, model->config().n_ctx_train, static_cast<int64_t>(tokens.size())});
  if (n_ctx < 2) {
    std::fprintf(stderr, "error: the text has too few tokens (%zu)\n", tokens.size());
    return 1;
  }
  SessionOptions so;
  so.n_threads = threads;
  so.n_ctx = n_ctx;
  so.kv_types = kv_types;
  so.backend = backend;
  auto session = Session::create(model, so);
  if (!session) {
    std::fprintf(stderr, "error: %s\n", session.message().c_str());
    return 1;
  }
  const size_t n_chunks = tokens.size() / static_cast<size_t>(n_ctx);
  const int64_t n_vocab = model->config().n_vocab;
  const int64_t first_scored = n_ctx >= 16 ? n_ctx / 2 : 0;
  std::fprintf(stderr, "%zu tokens, %zu chunks of %lld, scoring positions %lld..%lld of each\n", tokens.size(),
               n_chunks, (long long)n_ctx, (long long)first_scored + 1, (long long)n_ctx - 1);
  double nll_sum = 0.0, nll_sq = 0.0;
  int64_t count = 0;
  std::vector<float> logits;
  for (size_t c = 0; c < n_chunks; ++c) {
    std::vector<int32_t> chunk(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
    if (tok.add_bos() && tok.bos_id() >= 0) chunk[0] = tok.bos_id();
    Status st = (*session)->evaluate(chunk, logits);
    if (!st) {
      std::fprintf(stderr, "\nerror: %s\n", st.message().c_str());
      return 1;
    }
    for (int64_t j = first_scored; j + 1 < n_ctx; ++j) {
      const double nll = token_nll(logits.data() + j * n_vocab, n_vocab, chunk[static_cast<size_t>(j + 1)]);
      nll_sum += nll;
      nll_sq += nll * nll;
      ++count;
    }
    char text[96];
    std::snprintf(text, sizeof text, "%zu/%zu chunks, perplexity %.4f", c + 1, n_chunks, std::exp(nll_sum / count));
    draw_progress_bar(static_cast<int64_t>(c + 1), static_cast<int64_t>(n_chunks), text);
  }
  const double mean = nll_sum / count;
  const double var = std::max(0.0, nll_sq / count - mean * mean);
  const double ppl = std::exp(mean);
  const double err = ppl * std::sqrt(var / std::max<int64_t>(1, count - 1));
  std::fprintf(stderr, "\n");
  std::printf("perplexity: %.4f +/- %.4f over %lld scored tokens\n", ppl, err, (long long)count);
  return 0;
}

}  // namespace inferscope::cli
