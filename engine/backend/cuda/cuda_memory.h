// Device memory of the CUDA backend, tagged by use (weights, KV cache, scratch, staging) so that
// an allocation that fails names itself and what the device already holds, and the memory
// panel can say where the bytes went.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/core/status.h"

namespace inferscope::cuda {

enum class MemoryUse { Weights, Kv, Scratch, Staging };
inline constexpr size_t kMemoryUses = 4;
const char* memory_use_name(MemoryUse use);

class DeviceMemory;

// One allocation, freed with its owner. Staging memory is pinned host memory (cudaMallocHost)
// that the device reads and writes directly; the rest is device memory (cudaMalloc).
class DeviceBlock {
 public:
  DeviceBlock() = default;
  ~DeviceBlock();
  DeviceBlock(DeviceBlock&& other) noexcept;
  DeviceBlock& operator=(DeviceBlock&& other) noexcept;
  DeviceBlock(const DeviceBlock&) = delete;
  DeviceBlock& operator=(const DeviceBlock&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  uint64_t bytes() const { return bytes_; }

 private:
  friend class DeviceMemory;
  void release();
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
  MemoryUse use_ = MemoryUse::Scratch;
  DeviceMemory* owner_ = nullptr;
};

// Allocations of one device, counted per use. Outlives every block it handed out.
class DeviceMemory {
 public:
  // Fails with "cudaMalloc(<what>, N MiB): out of memory (cudaErrorMemoryAllocation); in use:
  // weights A MiB, KV cache B MiB, ...; the device has F MiB free of T MiB".
  Result<DeviceBlock> allocate(uint64_t bytes, MemoryUse use, const std::string& what);
  uint64_t in_use(MemoryUse use) const { return in_use_[static_cast<size_t>(use)]; }
  // "weights 3900 MiB, KV cache 1024 MiB, scratch 12 MiB, staging 1 MiB".
  std::string usage_text() const;

 private:
  friend class DeviceBlock;
  void freed(MemoryUse use, uint64_t bytes) { in_use_[static_cast<size_t>(use)] -= bytes; }
  std::array<uint64_t, kMemoryUses> in_use_{};
};

}  // namespace inferscope::cuda
