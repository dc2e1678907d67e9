// A GGUF file opened read-only through mmap: parsed metadata, tensor infos, and pointers to
// the tensor bytes. Every count, length, offset and shape is bounds-checked against the file;
// errors name the file, the field and what was expected (GGUF-FORMATS.md 1.9-1.10).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/core/status.h"
#include "engine/gguf/gguf_value.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope {
class MappedFile;
}

namespace inferscope::gguf {

struct TensorInfo {
  std::string name;
  int n_dims = 0;
  std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] innermost (row length), missing dims = 1
  kernels::GgmlType type = kernels::GgmlType::F32;
  uint64_t offset = 0;      // relative to the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  int64_t row_bytes = 0;    // bytes of one ne[0]-row
  const uint8_t* data = nullptr;  // points into the mapping

  std::string shape_string() const;  // "[64, 512]"
};

struct KeyValue {
  std::string key;
  Value value;
};

class File {
 public:
  // Maps and parses `path`. Fails cleanly on any truncated, corrupt or hostile content.
  static Result<std::shared_ptr<const File>> open(const std::string& path);
  // Parses a buffer (used by the fuzzer and by tests). `name` is used in error messages.
  static Result<std::shared_ptr<const File>> parse(std::vector<uint8_t> bytes, std::string name);
  // Parses bytes that `owner` keeps alive (held by the file), e.g. a model converted in memory
  // (engine/model/requantized_model.h); tensors point into them.
  static Result<std::shared_ptr<const File>> parse_owned(std::shared_ptr<const void> owner,
                                                         std::span<const uint8_t> bytes, std::string name);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t file_size() const { return size_; }
  uint64_t data_offset() const { return data_start_; }
  uint32_t alignment() const { return alignment_; }

  const std::vector<KeyValue>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters: an error names the file and key and what was expected when the key is
  // missing or has an incompatible type. Integers of any width are accepted when they fit.
  Result<std::string> get_string(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;
  Result<double> get_float(std::string_view key) const;  // FLOAT32/FLOAT64 (or integer)
  Result<bool> get_bool(std::string_view key) const;
  // Optional variants: the fallback when missing, an error only on a wrong type/range.
  Result<std::string> get_string_or(std::string_view key, std::string fallback) const;
  Result<int64_t> get_int_or(std::string_view key, int64_t fallback) const;
  Result<double> get_float_or(std::string_view key, double fallback) const;
  Result<bool> get_bool_or(std::string_view key, bool fallback) const;
  // Arrays with checked element types.
  Result<const std::vector<std::string>*> get_string_array(std::string_view key) const;
  Result<std::vector<float>> get_float_array(std::string_view key) const;
  // Integers, or booleans as 0 and 1.
  Result<std::vector<int64_t>> get_int_array(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

  // After the tensor data in [begin, begin + bytes) was copied elsewhere: lets the system take
  // back those pages of the file mapping (nothing for a file parsed from memory).
  void release_pages(const uint8_t* begin, size_t bytes) const;

  // Error text prefix "<path>: " used by code that validates this file's contents.
  std::string error_prefix() const { return path_ + ": "; }

 private:
  friend class Parser;
  File() = default;

  std::string path_;
  std::shared_ptr<MappedFile> mapping_;   // owns the bytes when opened from disk
  std::vector<uint8_t> owned_bytes_;      // owns the bytes when parsed from memory
  std::shared_ptr<const void> owner_;     // keeps the bytes of parse_owned alive
  uint32_t version_ = 0;
  uint64_t size_ = 0;
  uint64_t data_start_ = 0;
  uint32_t alignment_ = 32;
  std::vector<KeyValue> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace inferscope::gguf
