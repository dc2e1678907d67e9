// A read-only memory mapping of a whole file (POSIX mmap). Weights are used in place from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/core/status.h"

namespace inferscope {

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // Gives the pages of [begin, begin + bytes) (clamped to the mapping, widened to whole pages)
  // back to the system; reading them again faults them in from the file. For data copied out
  // of the mapping, so that it is not resident twice.
  void release(const uint8_t* begin, size_t bytes) const;

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

}  // namespace inferscope
