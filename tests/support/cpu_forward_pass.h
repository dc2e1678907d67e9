// The forward pass of a model over the CPU backend's ops on a pool of the test's, without the
// backend registry: what the model tests run against their references.
#pragma once

#include <memory>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"

namespace inferscope {

// `pool` must outlive the pass.
inline Result<std::unique_ptr<ForwardPass>> cpu_forward_pass(std::shared_ptr<const Model> model, ThreadPool& pool,
                                                             ForwardOptions options) {
  options.host_threads = &pool;
  auto ops = std::make_unique<CpuOps>(model, pool);
  return ForwardPass::create(std::move(model), std::move(ops), options);
}

}  // namespace inferscope
