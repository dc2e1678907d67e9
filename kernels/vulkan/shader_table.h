// The SPIR-V modules compiled from kernels/vulkan/shaders and embedded in the library
// (generated embedded_shaders.cpp, built by kernels/vulkan/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace inferscope::vulkan {

struct EmbeddedShader {
  const char* name;  // "matvec_q4_0", "rms_norm", ...
  const uint32_t* words;
  size_t word_count;
};

std::span<const EmbeddedShader> embedded_shaders();

}  // namespace inferscope::vulkan
