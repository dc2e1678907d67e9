// The Gated DeltaNet layers the GPU backends' kernels run (Vulkan: ops/vk_delta_net.h, CUDA:
// kernels/cuda/delta_net.h): a convolution of 2 .. kGpuMaxConvTaps taps (one invocation per
// channel keeps the last inputs in registers) and heads of at most kGpuMaxDeltaNetHeadDim
// values (a state row in registers), value heads a multiple of the key heads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/status.h"
#include "engine/model/model_config.h"

namespace inferscope {

inline constexpr int64_t kGpuMaxConvTaps = 8;
inline constexpr int64_t kGpuMaxDeltaNetHeadDim = 256;

// OK for a model without such layers, or one whose layers fit; else an error naming `backend`.
inline Status check_gpu_delta_net(const ModelConfig& c, std::string_view backend) {
  if (!c.is_hybrid()) return Status::ok();
  const DeltaNetShape& d = c.delta_net;
  if (d.conv_kernel >= 2 && d.conv_kernel <= kGpuMaxConvTaps && d.head_dim >= 1 &&
      d.head_dim <= kGpuMaxDeltaNetHeadDim && d.n_k_heads >= 1 && d.n_v_heads % d.n_k_heads == 0) {
    return Status::ok();
  }
  return Status::error(std::string(backend) + ": Gated DeltaNet layers of " + std::to_string(d.conv_kernel) +
                       " convolution taps, " + std::to_string(d.n_v_heads) + " value heads over " +
                       std::to_string(d.n_k_heads) + " key heads of " + std::to_string(d.head_dim) +
                       " values (at most " + std::to_string(kGpuMaxConvTaps) + " taps and " +
                       std::to_string(kGpuMaxDeltaNetHeadDim) + " values); the CPU backend runs them");
}

}  // namespace inferscope
