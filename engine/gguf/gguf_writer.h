// GGUF v3 writer (little-endian): metadata in insertion order, tensor infos with the packed,
// padded offsets that llama.cpp requires (GGUF-FORMATS.md 1.5-1.7), and tensor data streamed
// to disk so a multi-GB model is never held twice in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"
#include "engine/gguf/gguf_value.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope::gguf {

class File;
struct TensorInfo;
class Encoder;

// Value builders: the widened representation of gguf_value.h, tagged with the on-disk type.
Value make_u8(uint8_t v);
Value make_i8(int8_t v);
Value make_u16(uint16_t v);
Value make_i16(int16_t v);
Value make_u32(uint32_t v);
Value make_i32(int32_t v);
Value make_u64(uint64_t v);
Value make_i64(int64_t v);
Value make_f32(float v);
Value make_f64(double v);
Value make_bool(bool v);
Value make_string(std::string v);
// Arrays. `element` must match the overload: an integer type or BOOL for int64 elements (UINT64
// elements are stored bit-for-bit), FLOAT32/FLOAT64 for double elements.
Value make_array(ValueType element, std::vector<int64_t> elements);
Value make_array(ValueType element, std::vector<double> elements);
Value make_string_array(std::vector<std::string> elements);

// Receives a tensor's bytes in order, in pieces of any size.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status write(const void* data, size_t n) = 0;
};

// Produces one tensor's bytes at write time. It must write exactly the tensor's byte size
// (row_bytes(type, ne[0]) * ne[1] * ne[2] * ne[3]); the writer checks the count.
using TensorSource = std::function<Status(ByteSink& out)>;

class Writer {
 public:
  // Data alignment (a non-zero power of two). Explicitly setting it also writes the UINT32 key
  // general.alignment, as gguf-py does; without a call the default 32 applies and no key is
  // written. Adding general.alignment through add() has the same effect.
  void set_alignment(uint32_t alignment);
  uint32_t alignment() const;

  // Metadata keeps insertion order; adding an existing key replaces its value in place.
  void add(std::string key, Value value);
  void add_u8(std::string key, uint8_t v) { add(std::move(key), make_u8(v)); }
  void add_i8(std::string key, int8_t v) { add(std::move(key), make_i8(v)); }
  void add_u16(std::string key, uint16_t v) { add(std::move(key), make_u16(v)); }
  void add_i16(std::string key, int16_t v) { add(std::move(key), make_i16(v)); }
  void add_u32(std::string key, uint32_t v) { add(std::move(key), make_u32(v)); }
  void add_i32(std::string key, int32_t v) { add(std::move(key), make_i32(v)); }
  void add_u64(std::string key, uint64_t v) { add(std::move(key), make_u64(v)); }
  void add_i64(std::string key, int64_t v) { add(std::move(key), make_i64(v)); }
  void add_f32(std::string key, float v) { add(std::move(key), make_f32(v)); }
  void add_f64(std::string key, double v) { add(std::move(key), make_f64(v)); }
  void add_bool(std::string key, bool v) { add(std::move(key), make_bool(v)); }
  void add_string(std::string key, std::string v) { add(std::move(key), make_string(std::move(v))); }
  void add_string_array(std::string key, std::vector<std::string> v);
  void add_f32_array(std::string key, const std::vector<float>& v);
  void add_i32_array(std::string key, const std::vector<int32_t>& v);
  bool remove(std::string_view key);  // true when the key was present
  const Value* find(std::string_view key) const;
  size_t metadata_count() const { return metadata_.size(); }

  // Copies every key of `from` that starts with `prefix` (exact value types kept), e.g.
  // "tokenizer." for a model built around another file's vocabulary. Returns the count copied.
  size_t copy_metadata(const File& from, std::string_view prefix);

  // Tensors are written in the order added. `ne` is in ggml order (ne[0] = row length), 1 to 4
  // dimensions, written as given (trailing 1s are kept). Problems (bad name, shape, type or
  // byte count) are reported by write(), which names the tensor.
  void add_tensor(std::string name, std::vector<int64_t> ne, kernels::GgmlType type,
                  std::vector<uint8_t> bytes);
  // Bytes owned elsewhere; they must stay valid until write() returns.
  void add_tensor_view(std::string name, std::vector<int64_t> ne, kernels::GgmlType type,
                       std::span<const uint8_t> bytes);
  // Bytes produced when the file is written (streaming conversion / quantization).
  void add_tensor_source(std::string name, std::vector<int64_t> ne, kernels::GgmlType type,
                         TensorSource source);
  // A tensor of another opened file, copied straight from its mapping; `src` is kept alive.
  // An empty `new_name` keeps the original name.
  void add_tensor_copy(std::shared_ptr<const File> src, const TensorInfo& tensor,
                       std::string new_name = "");
  size_t tensor_count() const { return tensors_.size(); }

  // Layout: header, KV records, tensor infos, zero padding to the alignment, then each tensor's
  // bytes followed by zero padding to the alignment (the last one too, as gguf.cpp and gguf-py
  // do). A file without tensors ends right after its KV records, like llama.cpp's vocab files.
  // Writes the whole file to `path` (via a temporary file in the same folder, renamed into place
  // on success, so a failed write never leaves a half file under the final name).
  Status write(const std::string& path) const;
  // Writes to any sink (used by tests and the fuzz corpus generator).
  Status write_to(ByteSink& out, const std::string& name_for_errors) const;
  // Convenience: the whole file in memory.
  Result<std::vector<uint8_t>> write_to_memory() const;
  // The size write_to would produce, without running any tensor source.
  Result<uint64_t> byte_size(const std::string& name_for_errors) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> ne;
    kernels::GgmlType type = kernels::GgmlType::F32;
    std::vector<uint8_t> owned;
    std::span<const uint8_t> view;
    TensorSource source;
    std::shared_ptr<const File> keep_alive;
    enum class Kind { kOwned, kView, kSource } kind = Kind::kOwned;
  };
  struct Entry {
    std::string key;
    Value value;
  };

  Status validate(const std::string& name_for_errors, uint32_t* alignment,
                  std::vector<uint64_t>* n_bytes) const;
  // Header, KV records, tensor infos and the padding before the data section.
  Status write_header(Encoder& enc, uint32_t alignment, const std::vector<uint64_t>& n_bytes) const;

  std::vector<Entry> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace inferscope::gguf
