// The CUDA backend's forward pass on the CUDA emulator (kernels/cuda/emulator), and the CPU
// backend's, for the tests that hold one to the other and to llama.cpp's outputs.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <vector>

#include "engine/backend/backend_registry.h"
#include "engine/backend/cuda/cuda_ops.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"

namespace inferscope::cuda_test {

inline ForwardOptions small_forward(int64_t n_ctx = 128, int64_t max_batch = 32) {
  ForwardOptions o;
  o.n_ctx = n_ctx;
  o.max_batch = max_batch;
  return o;
}

inline Result<std::unique_ptr<ForwardPass>> cuda_forward(const std::shared_ptr<const Model>& model,
                                                         const ForwardOptions& options = small_forward(),
                                                         cuda::CudaOpsOptions ops = {}) {
  auto context = cuda::CudaContext::create(0);
  if (!context) return context.status();
  return ForwardPass::create(model, std::make_unique<cuda::CudaOps>(model, std::move(*context), ops), options);
}

// On one thread of a pool that lives as long as the process (the executor keeps a pointer).
inline std::unique_ptr<ForwardExecutor> cpu_forward(const std::shared_ptr<const Model>& model,
                                                    ForwardOptions options = small_forward()) {
  static ThreadPool pool(1);
  options.host_threads = &pool;
  auto fp = ForwardPass::open(model, BackendChoice{}, options);
  EXPECT_TRUE(fp) << fp.message();
  return fp ? std::move(*fp) : nullptr;
}

// Logits of every token of `tokens` fed to `slot`, `chunk` tokens per forward call.
inline std::vector<float> feed(ForwardExecutor& fp, int slot, std::span<const int32_t> tokens, size_t chunk,
                               int64_t width) {
  std::vector<float> logits(tokens.size() * static_cast<size_t>(width));
  for (size_t done = 0; done < tokens.size(); done += chunk) {
    const auto part = tokens.subspan(done, std::min(chunk, tokens.size() - done));
    const Status st = fp.forward(slot, part, true, logits.data() + done * static_cast<size_t>(width));
    EXPECT_TRUE(st) << st.message();
  }
  return logits;
}

// Greedy continuation of `prompt` for n tokens.
inline std::vector<int32_t> greedy(ForwardExecutor& fp, const std::vector<int32_t>& prompt, int n, int64_t n_vocab) {
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  std::vector<int32_t> out;
  Status st = fp.forward(0, prompt, false, logits.data());
  for (int i = 0; st && i < n; ++i) {
    const auto best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    out.push_back(best);
    st = fp.forward(0, std::span<const int32_t>(&best, 1), false, logits.data());
  }
  EXPECT_TRUE(st) << st.message();
  return out;
}

inline std::vector<int32_t> test_tokens(size_t n, int32_t salt, int64_t n_vocab) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((static_cast<int64_t>(i) * 7919 + salt) % n_vocab);
  return t;
}

}  // namespace inferscope::cuda_test
