#include "engine/backend/cuda/cuda_memory.h"

#include <cuda_runtime.h>

#include <utility>

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {
namespace {

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

const char* memory_use_name(MemoryUse use) {
  switch (use) {
    case MemoryUse::Weights: return "weights";
    case MemoryUse::Kv: return "KV cache";
    case MemoryUse::Scratch: return "scratch";
    case MemoryUse::Staging: return "staging";
  }
  return "?";
}

DeviceBlock::~DeviceBlock() { release(); }

DeviceBlock::DeviceBlock(DeviceBlock&& other) noexcept { *this = std::move(other); }

DeviceBlock& DeviceBlock::operator=(DeviceBlock&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    use_ = other.use_;
    owner_ = std::exchange(other.owner_, nullptr);
  }
  return *this;
}

void DeviceBlock::release() {
  if (!ptr_) return;
  if (use_ == MemoryUse::Staging) {
    cudaFreeHost(ptr_);
  } else {
    cudaFree(ptr_);
  }
  if (owner_) owner_->freed(use_, bytes_);
  ptr_ = nullptr;
  bytes_ = 0;
}

std::string DeviceMemory::usage_text() const {
  std::string text;
  for (size_t u = 0; u < kMemoryUses; ++u) {
    if (!text.empty()) text += ", ";
    text += std::string(memory_use_name(static_cast<MemoryUse>(u))) + " " + mib(in_use_[u]);
  }
  return text;
}

Result<DeviceBlock> DeviceMemory::allocate(uint64_t bytes, MemoryUse use, const std::string& what) {
  DeviceBlock block;
  const uint64_t size = bytes == 0 ? 1 : bytes;
  const cudaError_t e = use == MemoryUse::Staging ? cudaMallocHost(&block.ptr_, size) : cudaMalloc(&block.ptr_, size);
  if (e != cudaSuccess) {
    cudaGetLastError();  // the error is reported here, not by the next launch
    std::string message = std::string(use == MemoryUse::Staging ? "cudaMallocHost" : "cudaMalloc") + "(" + what +
                          ", " + mib(bytes) + "): " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) +
                          "); in use: " + usage_text();
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess) {
      message += "; the device has " + mib(free_bytes) + " free of " + mib(total);
    }
    return Status::error(message);
  }
  block.bytes_ = bytes;
  block.use_ = use;
  block.owner_ = this;
  in_use_[static_cast<size_t>(use)] += bytes;
  return block;
}

}  // namespace inferscope::cuda
