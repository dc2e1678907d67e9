// GGUF v3 writer: validation of everything the reader will check, then a single sequential pass
// (header, KV records, tensor infos, padding, tensor data with padding after each tensor).
#include "engine/gguf/gguf_writer.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_set>
#include <utility>

#include "engine/gguf/gguf_file.h"

namespace inferscope::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr uint32_t kVersion = 3;
constexpr uint32_t kDefaultAlignment = 32;
constexpr size_t kMaxTensorName = 63;  // llama.cpp rejects names of 64 bytes or more
constexpr std::string_view kAlignmentKey = "general.alignment";

bool is_valid_type(ValueType t) { return static_cast<uint32_t>(t) <= static_cast<uint32_t>(ValueType::FLOAT64); }

bool is_integer_or_bool(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::UINT16: case ValueType::INT16:
    case ValueType::UINT32: case ValueType::INT32: case ValueType::UINT64: case ValueType::INT64:
    case ValueType::BOOL:
      return true;
    default:
      return false;
  }
}

bool is_real(ValueType t) { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; }

// Whether a widened integer is representable in the on-disk type (UINT64 is stored bit-for-bit).
bool integer_fits(ValueType t, int64_t v) {
  switch (t) {
    case ValueType::UINT8: return v >= 0 && v <= 0xFF;
    case ValueType::INT8: return v >= -128 && v <= 127;
    case ValueType::UINT16: return v >= 0 && v <= 0xFFFF;
    case ValueType::INT16: return v >= -32768 && v <= 32767;
    case ValueType::UINT32: return v >= 0 && v <= 0xFFFFFFFFll;
    case ValueType::INT32: return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    case ValueType::BOOL: return v == 0 || v == 1;
    default: return true;
  }
}

std::string type_label(ValueType t) {
  if (!is_valid_type(t)) return "type id " + std::to_string(static_cast<uint32_t>(t));
  return value_type_name(t);
}

}  // namespace

// Buffers the many small header writes in front of the real sink and counts the position
// (declared in gguf_writer.h for write_header).
class Encoder {
 public:
  explicit Encoder(ByteSink& out) : out_(out) { buffer_.reserve(kChunk); }

  Status bytes(const void* data, size_t n) {
    position_ += n;
    if (n >= kChunk) {
      INFERSCOPE_RETURN_IF_ERROR(flush());
      return out_.write(data, n);
    }
    if (buffer_.size() + n > kChunk) INFERSCOPE_RETURN_IF_ERROR(flush());
    const auto* p = static_cast<const uint8_t*>(data);
    buffer_.insert(buffer_.end(), p, p + n);
    return Status::ok();
  }
  template <class T>
  Status le(T v) {  // little-endian host assumed (x86-64 / aarch64); see static_assert below
    return bytes(&v, sizeof v);
  }
  Status string(std::string_view s) {
    INFERSCOPE_RETURN_IF_ERROR(le<uint64_t>(s.size()));
    return bytes(s.data(), s.size());
  }
  Status zeros(uint64_t n) {
    static const uint8_t kZeros[256] = {};
    while (n > 0) {
      size_t step = static_cast<size_t>(std::min<uint64_t>(n, sizeof kZeros));
      INFERSCOPE_RETURN_IF_ERROR(bytes(kZeros, step));
      n -= step;
    }
    return Status::ok();
  }
  Status flush() {
    if (buffer_.empty()) return Status::ok();
    Status st = out_.write(buffer_.data(), buffer_.size());
    buffer_.clear();
    return st;
  }
  uint64_t position() const { return position_; }
  void advance(uint64_t n) { position_ += n; }  // bytes written straight to the sink
  ByteSink& sink() { return out_; }

 private:
  static constexpr size_t kChunk = 1 << 20;
  ByteSink& out_;
  std::vector<uint8_t> buffer_;
  uint64_t position_ = 0;
};

namespace {

static_assert(std::endian::native == std::endian::little, "the GGUF writer assumes a little-endian host");

Status encode_scalar(Encoder& enc, ValueType t, int64_t integer, double real, const std::string& str) {
  switch (t) {
    case ValueType::UINT8: return enc.le(static_cast<uint8_t>(integer));
    case ValueType::INT8: return enc.le(static_cast<int8_t>(integer));
    case ValueType::UINT16: return enc.le(static_cast<uint16_t>(integer));
    case ValueType::INT16: return enc.le(static_cast<int16_t>(integer));
    case ValueType::UINT32: return enc.le(static_cast<uint32_t>(integer));
    case ValueType::INT32: return enc.le(static_cast<int32_t>(integer));
    case ValueType::UINT64: return enc.le(static_cast<uint64_t>(integer));
    case ValueType::INT64: return enc.le(static_cast<int64_t>(integer));
    case ValueType::FLOAT32: return enc.le(static_cast<float>(real));
    case ValueType::FLOAT64: return enc.le(real);
    case ValueType::BOOL: return enc.le(static_cast<uint8_t>(integer != 0 ? 1 : 0));
    case ValueType::STRING: return enc.string(str);
    case ValueType::ARRAY: break;
  }
  return Status::error("internal: encode_scalar on an array");
}

Status encode_value(Encoder& enc, const Value& v) {
  INFERSCOPE_RETURN_IF_ERROR(enc.le(static_cast<uint32_t>(v.type)));
  if (v.type != ValueType::ARRAY) return encode_scalar(enc, v.type, v.integer, v.real, v.string);
  INFERSCOPE_RETURN_IF_ERROR(enc.le(static_cast<uint32_t>(v.array_type)));
  static const std::string kEmpty;
  if (v.array_type == ValueType::STRING) {
    INFERSCOPE_RETURN_IF_ERROR(enc.le<uint64_t>(v.strings.size()));
    for (const std::string& s : v.strings) INFERSCOPE_RETURN_IF_ERROR(enc.string(s));
  } else if (is_real(v.array_type)) {
    INFERSCOPE_RETURN_IF_ERROR(enc.le<uint64_t>(v.reals.size()));
    for (double d : v.reals) INFERSCOPE_RETURN_IF_ERROR(encode_scalar(enc, v.array_type, 0, d, kEmpty));
  } else {
    INFERSCOPE_RETURN_IF_ERROR(enc.le<uint64_t>(v.integers.size()));
    for (int64_t i : v.integers) INFERSCOPE_RETURN_IF_ERROR(encode_scalar(enc, v.array_type, i, 0, kEmpty));
  }
  return Status::ok();
}

Status validate_value(const std::string& where, const Value& v) {
  if (!is_valid_type(v.type)) return Status::error(where + ": invalid value type " + type_label(v.type));
  if (v.type != ValueType::ARRAY) {
    if (is_integer_or_bool(v.type) && !integer_fits(v.type, v.integer)) {
      return Status::error(where + ": value " + std::to_string(v.integer) + " does not fit " + type_label(v.type));
    }
    return Status::ok();
  }
  if (!is_valid_type(v.array_type)) return Status::error(where + ": invalid array element type " + type_label(v.array_type));
  if (v.array_type == ValueType::ARRAY) {
    return Status::error(where + ": nested arrays are not supported (llama.cpp rejects them)");
  }
  if (is_integer_or_bool(v.array_type)) {
    if (!v.reals.empty() || !v.strings.empty()) {
      return Status::error(where + ": " + type_label(v.array_type) + " array holds non-integer elements");
    }
    for (size_t i = 0; i < v.integers.size(); ++i) {
      if (!integer_fits(v.array_type, v.integers[i])) {
        return Status::error(where + ": element " + std::to_string(i) + " = " + std::to_string(v.integers[i]) +
                             " does not fit " + type_label(v.array_type));
      }
    }
  } else if (is_real(v.array_type)) {
    if (!v.integers.empty() || !v.strings.empty()) {
      return Status::error(where + ": " + type_label(v.array_type) + " array holds non-float elements");
    }
  } else if (!v.integers.empty() || !v.reals.empty()) {
    return Status::error(where + ": string array holds non-string elements");
  }
  return Status::ok();
}

// a*b with overflow detection.
bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

uint64_t round_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

class CountingSink final : public ByteSink {
 public:
  CountingSink(ByteSink& out, uint64_t limit) : out_(out), limit_(limit) {}
  Status write(const void* data, size_t n) override {
    if (overrun_ || n > limit_ - count_) {
      overrun_ = true;  // nothing past the tensor is ever written
      return Status::error("source produced more than the tensor's " + std::to_string(limit_) + " bytes");
    }
    count_ += n;
    return out_.write(data, n);
  }
  uint64_t count() const { return count_; }
  bool overrun() const { return overrun_; }

 private:
  ByteSink& out_;
  uint64_t limit_;
  uint64_t count_ = 0;
  bool overrun_ = false;
};

class FileSink final : public ByteSink {
 public:
  explicit FileSink(std::FILE* f) : f_(f) {}
  Status write(const void* data, size_t n) override {
    if (n == 0) return Status::ok();
    if (std::fwrite(data, 1, n, f_) != n) return Status::error(std::string("write failed: ") + std::strerror(errno));
    return Status::ok();
  }

 private:
  std::FILE* f_;
};

class DiscardSink final : public ByteSink {
 public:
  Status write(const void*, size_t) override { return Status::ok(); }
};

class MemorySink final : public ByteSink {
 public:
  Status write(const void* data, size_t n) override {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + n);
    return Status::ok();
  }
  std::vector<uint8_t> bytes;
};

}  // namespace

Value make_u8(uint8_t v) { Value x; x.type = ValueType::UINT8; x.integer = v; return x; }
Value make_i8(int8_t v) { Value x; x.type = ValueType::INT8; x.integer = v; return x; }
Value make_u16(uint16_t v) { Value x; x.type = ValueType::UINT16; x.integer = v; return x; }
Value make_i16(int16_t v) { Value x; x.type = ValueType::INT16; x.integer = v; return x; }
Value make_u32(uint32_t v) { Value x; x.type = ValueType::UINT32; x.integer = v; return x; }
Value make_i32(int32_t v) { Value x; x.type = ValueType::INT32; x.integer = v; return x; }
Value make_u64(uint64_t v) { Value x; x.type = ValueType::UINT64; x.integer = static_cast<int64_t>(v); return x; }
Value make_i64(int64_t v) { Value x; x.type = ValueType::INT64; x.integer = v; return x; }
Value make_f32(float v) { Value x; x.type = ValueType::FLOAT32; x.real = v; return x; }
Value make_f64(double v) { Value x; x.type = ValueType::FLOAT64; x.real = v; return x; }
Value make_bool(bool v) { Value x; x.type = ValueType::BOOL; x.integer = v ? 1 : 0; return x; }
Value make_string(std::string v) { Value x; x.type = ValueType::STRING; x.string = std::move(v); return x; }

Value make_array(ValueType element, std::vector<int64_t> elements) {
  Value x;
  x.type = ValueType::ARRAY;
  x.array_type = element;
  x.integers = std::move(elements);
  return x;
}

Value make_array(ValueType element, std::vector<double> elements) {
  Value x;
  x.type = ValueType::ARRAY;
  x.array_type = element;
  x.reals = std::move(elements);
  return x;
}

Value make_string_array(std::vector<std::string> elements) {
  Value x;
  x.type = ValueType::ARRAY;
  x.array_type = ValueType::STRING;
  x.strings = std::move(elements);
  return x;
}

void Writer::set_alignment(uint32_t alignment) { add(std::string(kAlignmentKey), make_u32(alignment)); }

uint32_t Writer::alignment() const {
  const Value* v = find(kAlignmentKey);
  if (v == nullptr || v->type != ValueType::UINT32) return kDefaultAlignment;
  return static_cast<uint32_t>(v->integer);
}

void Writer::add(std::string key, Value value) {
  for (Entry& e : metadata_) {
    if (e.key == key) {
      e.value = std::move(value);
      return;
    }
  }
  metadata_.push_back({std::move(key), std::move(value)});
}

void Writer::add_string_array(std::string key, std::vector<std::string> v) {
  add(std::move(key), make_string_array(std::move(v)));
}

void Writer::add_f32_array(std::string key, const std::vector<float>& v) {
  add(std::move(key), make_array(ValueType::FLOAT32, std::vector<double>(v.begin(), v.end())));
}

void Writer::add_i32_array(std::string key, const std::vector<int32_t>& v) {
  add(std::move(key), make_array(ValueType::INT32, std::vector<int64_t>(v.begin(), v.end())));
}

bool Writer::remove(std::string_view key) {
  auto it = std::find_if(metadata_.begin(), metadata_.end(), [&](const Entry& e) { return e.key == key; });
  if (it == metadata_.end()) return false;
  metadata_.erase(it);
  return true;
}

const Value* Writer::find(std::string_view key) const {
  for (const Entry& e : metadata_) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

size_t Writer::copy_metadata(const File& from, std::string_view prefix) {
  size_t n = 0;
  for (const KeyValue& kv : from.metadata()) {
    if (kv.key.starts_with(prefix)) {
      add(kv.key, kv.value);
      ++n;
    }
  }
  return n;
}

void Writer::add_tensor(std::string name, std::vector<int64_t> ne, kernels::GgmlType type,
                        std::vector<uint8_t> bytes) {
  PendingTensor t;
  t.name = std::move(name);
  t.ne = std::move(ne);
  t.type = type;
  t.owned = std::move(bytes);
  t.kind = PendingTensor::Kind::kOwned;
  tensors_.push_back(std::move(t));
}

void Writer::add_tensor_view(std::string name, std::vector<int64_t> ne, kernels::GgmlType type,
                             std::span<const uint8_t> bytes) {
  PendingTensor t;
  t.name = std::move(name);
  t.ne = std::move(ne);
  t.type = type;
  t.view = bytes;
  t.kind = PendingTensor::Kind::kView;
  tensors_.push_back(std::move(t));
}

void Writer::add_tensor_source(std::string name, std::vector<int64_t> ne, kernels::GgmlType type,
                               TensorSource source) {
  PendingTensor t;
  t.name = std::move(name);
  t.ne = std::move(ne);
  t.type = type;
  t.source = std::move(source);
  t.kind = PendingTensor::Kind::kSource;
  tensors_.push_back(std::move(t));
}

void Writer::add_tensor_copy(std::shared_ptr<const File> src, const TensorInfo& tensor, std::string new_name) {
  std::vector<int64_t> ne(tensor.ne.begin(), tensor.ne.begin() + std::clamp(tensor.n_dims, 1, 4));
  add_tensor_view(new_name.empty() ? tensor.name : std::move(new_name), std::move(ne), tensor.type,
                  std::span<const uint8_t>(tensor.data, tensor.n_bytes));
  tensors_.back().keep_alive = std::move(src);
}

Status Writer::validate(const std::string& file, uint32_t* alignment, std::vector<uint64_t>* n_bytes) const {
  const std::string prefix = file + ": ";
  *alignment = kDefaultAlignment;
  for (const Entry& e : metadata_) {
    if (e.key.empty()) return Status::error(prefix + "metadata key is empty");
    INFERSCOPE_RETURN_IF_ERROR(validate_value(prefix + "metadata key '" + e.key + "'", e.value));
    if (e.key == kAlignmentKey) {
      if (e.value.type != ValueType::UINT32) {
        return Status::error(prefix + "general.alignment must be UINT32, got " + type_label(e.value.type));
      }
      uint64_t a = static_cast<uint64_t>(e.value.integer);
      if (a == 0 || (a & (a - 1)) != 0) {
        return Status::error(prefix + "general.alignment = " + std::to_string(a) +
                             ", expected a non-zero power of two");
      }
      *alignment = static_cast<uint32_t>(a);
    }
  }

  std::unordered_set<std::string_view> names;
  n_bytes->clear();
  for (const PendingTensor& t : tensors_) {
    const std::string where = prefix + "tensor '" + t.name + "'";
    if (t.name.empty()) return Status::error(prefix + "tensor name is empty");
    if (t.name.size() > kMaxTensorName) {
      return Status::error(where + ": name is " + std::to_string(t.name.size()) + " bytes, expected at most " +
                           std::to_string(kMaxTensorName));
    }
    if (!names.insert(t.name).second) return Status::error(where + ": duplicate tensor name");
    if (t.ne.empty() || t.ne.size() > 4) {
      return Status::error(where + ": n_dims = " + std::to_string(t.ne.size()) + ", expected 1 to 4");
    }
    std::optional<kernels::TypeInfo> info = kernels::type_info(static_cast<uint32_t>(t.type));
    if (!info) return Status::error(where + ": unknown ggml type id " + std::to_string(static_cast<uint32_t>(t.type)));
    uint64_t n_elements = 1;
    for (size_t d = 0; d < t.ne.size(); ++d) {
      if (t.ne[d] <= 0) {
        return Status::error(where + ": ne[" + std::to_string(d) + "] = " + std::to_string(t.ne[d]) +
                             ", expected > 0");
      }
      if (!checked_mul(n_elements, static_cast<uint64_t>(t.ne[d]), &n_elements) ||
          n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Status::error(where + ": element count overflows int64");
      }
    }
    if (t.ne[0] % info->block_size != 0) {
      return Status::error(where + ": ne[0] = " + std::to_string(t.ne[0]) + " is not a multiple of the " +
                           info->name + " block size " + std::to_string(info->block_size));
    }
    uint64_t row = static_cast<uint64_t>(t.ne[0] / info->block_size) * static_cast<uint64_t>(info->type_size);
    uint64_t bytes = 0;
    if (!checked_mul(row, n_elements / static_cast<uint64_t>(t.ne[0]), &bytes) ||
        bytes > std::numeric_limits<uint64_t>::max() - *alignment) {
      return Status::error(where + ": byte size overflows");
    }
    uint64_t have = 0;
    if (t.kind == PendingTensor::Kind::kOwned) have = t.owned.size();
    if (t.kind == PendingTensor::Kind::kView) have = t.view.size();
    if (t.kind == PendingTensor::Kind::kSource) {
      if (!t.source) return Status::error(where + ": no data source");
      have = bytes;
    }
    if (have != bytes) {
      return Status::error(where + ": " + std::to_string(have) + " data bytes given, expected " +
                           std::to_string(bytes) + " for " + info->name + " shape");
    }
    n_bytes->push_back(bytes);
  }
  return Status::ok();
}

Status Writer::write_header(Encoder& enc, uint32_t alignment, const std::vector<uint64_t>& n_bytes) const {
  INFERSCOPE_RETURN_IF_ERROR(enc.le(kMagic));
  INFERSCOPE_RETURN_IF_ERROR(enc.le(kVersion));
  INFERSCOPE_RETURN_IF_ERROR(enc.le<uint64_t>(tensors_.size()));
  INFERSCOPE_RETURN_IF_ERROR(enc.le<uint64_t>(metadata_.size()));
  for (const Entry& e : metadata_) {
    INFERSCOPE_RETURN_IF_ERROR(enc.string(e.key));
    INFERSCOPE_RETURN_IF_ERROR(encode_value(enc, e.value));
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = tensors_[i];
    INFERSCOPE_RETURN_IF_ERROR(enc.string(t.name));
    INFERSCOPE_RETURN_IF_ERROR(enc.le<uint32_t>(static_cast<uint32_t>(t.ne.size())));
    for (int64_t d : t.ne) INFERSCOPE_RETURN_IF_ERROR(enc.le<uint64_t>(static_cast<uint64_t>(d)));
    INFERSCOPE_RETURN_IF_ERROR(enc.le<uint32_t>(static_cast<uint32_t>(t.type)));
    INFERSCOPE_RETURN_IF_ERROR(enc.le<uint64_t>(offset));
    offset += round_up(n_bytes[i], alignment);
  }
  // No data section without tensors: like llama.cpp's vocab-only files, no padding either.
  if (!tensors_.empty()) INFERSCOPE_RETURN_IF_ERROR(enc.zeros(round_up(enc.position(), alignment) - enc.position()));
  return Status::ok();
}

Result<uint64_t> Writer::byte_size(const std::string& name) const {
  uint32_t alignment = kDefaultAlignment;
  std::vector<uint64_t> n_bytes;
  INFERSCOPE_RETURN_IF_ERROR(validate(name, &alignment, &n_bytes));
  DiscardSink discard;
  Encoder enc(discard);
  INFERSCOPE_RETURN_IF_ERROR(write_header(enc, alignment, n_bytes));
  uint64_t size = enc.position();
  for (uint64_t n : n_bytes) size += round_up(n, alignment);
  return size;
}

Status Writer::write_to(ByteSink& out, const std::string& name) const {
  uint32_t alignment = kDefaultAlignment;
  std::vector<uint64_t> n_bytes;
  INFERSCOPE_RETURN_IF_ERROR(validate(name, &alignment, &n_bytes));

  Encoder enc(out);
  INFERSCOPE_RETURN_IF_ERROR(write_header(enc, alignment, n_bytes));

  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = tensors_[i];
    switch (t.kind) {
      case PendingTensor::Kind::kOwned:
        INFERSCOPE_RETURN_IF_ERROR(enc.bytes(t.owned.data(), t.owned.size()));
        break;
      case PendingTensor::Kind::kView:
        INFERSCOPE_RETURN_IF_ERROR(enc.bytes(t.view.data(), t.view.size()));
        break;
      case PendingTensor::Kind::kSource: {
        INFERSCOPE_RETURN_IF_ERROR(enc.flush());
        CountingSink counter(enc.sink(), n_bytes[i]);
        Status st = t.source(counter);
        if (st.is_ok() && counter.overrun()) {
          st = Status::error("source produced more than the expected " + std::to_string(n_bytes[i]) + " bytes");
        } else if (st.is_ok() && counter.count() != n_bytes[i]) {
          st = Status::error("source produced " + std::to_string(counter.count()) + " bytes, expected " +
                             std::to_string(n_bytes[i]));
        }
        if (!st.is_ok()) return Status::error(name + ": tensor '" + t.name + "': " + st.message());
        enc.advance(n_bytes[i]);
        break;
      }
    }
    INFERSCOPE_RETURN_IF_ERROR(enc.zeros(round_up(n_bytes[i], alignment) - n_bytes[i]));
  }
  return enc.flush();
}

Status Writer::write(const std::string& path) const {
  const std::string tmp = path + ".partial-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Status::error(path + ": cannot create " + tmp + ": " + std::strerror(errno));
  FileSink sink(f);
  Status st = write_to(sink, path);
  if (st.is_ok() && std::fflush(f) != 0) st = Status::error(path + ": write failed: " + std::strerror(errno));
  if (std::fclose(f) != 0 && st.is_ok()) st = Status::error(path + ": close failed: " + std::strerror(errno));
  if (st.is_ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    st = Status::error(path + ": cannot rename " + tmp + " into place: " + std::strerror(errno));
  }
  if (!st.is_ok()) {
    std::remove(tmp.c_str());
    // Errors from the sink lack the path; write_to's own errors already start with it.
    if (st.message().rfind(path, 0) != 0) return Status::error(path + ": " + st.message());
  }
  return st;
}

Result<std::vector<uint8_t>> Writer::write_to_memory() const {
  MemorySink sink;
  INFERSCOPE_RETURN_IF_ERROR(write_to(sink, "<memory>"));
  return std::move(sink.bytes);
}

}  // namespace inferscope::gguf
