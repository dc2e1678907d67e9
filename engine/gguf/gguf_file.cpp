// GGUF parsing with every read bounds-checked (GGUF-FORMATS.md 1.9 and 1.10).
#include "engine/gguf/gguf_file.h"

#include <cstring>
#include <limits>

#include "engine/core/mapped_file.h"

namespace inferscope::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr size_t kMaxTensorName = 64;    // llama.cpp rejects names of 64 bytes or more
constexpr int kMaxDims = 4;
constexpr size_t kMinKeyValueBytes = 14;
constexpr size_t kMinTensorInfoBytes = 25;

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

size_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    default: return 0;
  }
}

}  // namespace

// Reads the byte buffer front to back; every failure becomes an error naming file and field.
class Parser {
 public:
  Parser(File& file, const uint8_t* data, size_t size) : file_(file), data_(data), size_(size) {}

  Status parse() {
    INFERSCOPE_RETURN_IF_ERROR(parse_header());
    INFERSCOPE_RETURN_IF_ERROR(parse_metadata());
    INFERSCOPE_RETURN_IF_ERROR(parse_alignment());
    INFERSCOPE_RETURN_IF_ERROR(parse_tensor_infos());
    return place_tensor_data();
  }

 private:
  Status fail(const std::string& field, const std::string& what) const {
    return Status::error(file_.path_ + ": " + field + " at offset " + std::to_string(pos_) + ": " + what);
  }
  size_t remaining() const { return size_ - pos_; }

  template <class T>
  Status read(T* out, const std::string& field) {
    if (remaining() < sizeof(T)) {
      return fail(field, "file truncated (need " + std::to_string(sizeof(T)) + " bytes, " +
                             std::to_string(remaining()) + " left)");
    }
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::ok();
  }

  Status read_string(std::string* out, const std::string& field) {
    uint64_t n = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&n, field + " length"));
    if (n > remaining()) {
      return fail(field, "string length " + std::to_string(n) + " exceeds the " + std::to_string(remaining()) +
                             " bytes left in the file");
    }
    out->assign(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return Status::ok();
  }

  Status parse_header() {
    uint32_t magic = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&magic, "magic"));
    if (magic != kMagic) return fail("magic", "not a GGUF file (expected the bytes 'GGUF')");
    uint32_t version = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&version, "version"));
    if (version != 0 && (version & 0xFFFF) == 0) {
      return fail("version", "big-endian GGUF files are not supported");
    }
    if (version != 2 && version != 3) {
      return fail("version", "unsupported GGUF version " + std::to_string(version) + " (expected 2 or 3)");
    }
    file_.version_ = version;
    INFERSCOPE_RETURN_IF_ERROR(read(&n_tensors_, "tensor count"));
    INFERSCOPE_RETURN_IF_ERROR(read(&n_kv_, "metadata count"));
    if (n_kv_ > remaining() / kMinKeyValueBytes) {
      return fail("metadata count", std::to_string(n_kv_) + " key/value records cannot fit in the " +
                                        std::to_string(remaining()) + " bytes left");
    }
    if (n_tensors_ > remaining() / kMinTensorInfoBytes) {
      return fail("tensor count", std::to_string(n_tensors_) + " tensor infos cannot fit in the " +
                                      std::to_string(remaining()) + " bytes left");
    }
    return Status::ok();
  }

  Status read_value_type(ValueType* out, const std::string& field) {
    uint32_t raw = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&raw, field));
    if (raw > static_cast<uint32_t>(ValueType::FLOAT64)) {
      return fail(field, "invalid value type " + std::to_string(raw) + " (expected 0..12)");
    }
    *out = static_cast<ValueType>(raw);
    return Status::ok();
  }

  // Reads one scalar of type t into integer/real/string.
  Status read_scalar(ValueType t, int64_t* integer, double* real, std::string* str, const std::string& field) {
    switch (t) {
      case ValueType::UINT8: { uint8_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v; break; }
      case ValueType::INT8: { int8_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v; break; }
      case ValueType::UINT16: { uint16_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v; break; }
      case ValueType::INT16: { int16_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v; break; }
      case ValueType::UINT32: { uint32_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v; break; }
      case ValueType::INT32: { int32_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v; break; }
      case ValueType::UINT64: { uint64_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = static_cast<int64_t>(v); break; }
      case ValueType::INT64: { int64_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v; break; }
      case ValueType::BOOL: { uint8_t v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *integer = v != 0; break; }
      case ValueType::FLOAT32: { float v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *real = v; break; }
      case ValueType::FLOAT64: { double v{}; INFERSCOPE_RETURN_IF_ERROR(read(&v, field)); *real = v; break; }
      case ValueType::STRING: return read_string(str, field);
      case ValueType::ARRAY: return fail(field, "nested arrays are not supported");
    }
    return Status::ok();
  }

  Status read_array(Value* value, const std::string& field) {
    INFERSCOPE_RETURN_IF_ERROR(read_value_type(&value->array_type, field + " element type"));
    if (value->array_type == ValueType::ARRAY) return fail(field, "nested arrays are not supported");
    uint64_t count = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&count, field + " element count"));
    size_t min_elem = value->array_type == ValueType::STRING ? 8 : scalar_size(value->array_type);
    if (count > remaining() / min_elem) {
      return fail(field, "array of " + std::to_string(count) + " elements cannot fit in the " +
                             std::to_string(remaining()) + " bytes left");
    }
    if (value->array_type == ValueType::STRING) value->strings.resize(count);
    else if (is_float(value->array_type)) value->reals.resize(count);
    else value->integers.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      int64_t integer = 0;
      double real = 0;
      std::string* str = value->array_type == ValueType::STRING ? &value->strings[i] : nullptr;
      INFERSCOPE_RETURN_IF_ERROR(read_scalar(value->array_type, &integer, &real, str, field));
      if (value->array_type == ValueType::STRING) continue;
      if (is_float(value->array_type)) value->reals[i] = real;
      else value->integers[i] = integer;
    }
    return Status::ok();
  }

  Status parse_metadata() {
    file_.metadata_.reserve(static_cast<size_t>(n_kv_));
    for (uint64_t i = 0; i < n_kv_; ++i) {
      KeyValue kv;
      std::string field = "metadata record " + std::to_string(i);
      INFERSCOPE_RETURN_IF_ERROR(read_string(&kv.key, field + " key"));
      if (kv.key.empty()) return fail(field, "empty key");
      field = "metadata key '" + kv.key + "'";
      if (file_.metadata_index_.count(kv.key)) return fail(field, "duplicate key");
      INFERSCOPE_RETURN_IF_ERROR(read_value_type(&kv.value.type, field + " type"));
      if (kv.value.type == ValueType::ARRAY) {
        INFERSCOPE_RETURN_IF_ERROR(read_array(&kv.value, field));
      } else {
        INFERSCOPE_RETURN_IF_ERROR(
            read_scalar(kv.value.type, &kv.value.integer, &kv.value.real, &kv.value.string, field));
      }
      file_.metadata_index_.emplace(kv.key, file_.metadata_.size());
      file_.metadata_.push_back(std::move(kv));
    }
    return Status::ok();
  }

  Status parse_alignment() {
    const Value* v = file_.find("general.alignment");
    if (v == nullptr) return Status::ok();
    std::string field = "metadata key 'general.alignment'";
    if (v->type != ValueType::UINT32) {
      return fail(field, std::string("has type ") + value_type_name(v->type) + ", expected UINT32");
    }
    uint64_t a = static_cast<uint64_t>(v->integer);
    if (a == 0 || (a & (a - 1)) != 0) {
      return fail(field, "alignment " + std::to_string(a) + " is not a non-zero power of two");
    }
    file_.alignment_ = static_cast<uint32_t>(a);
    return Status::ok();
  }

  Status parse_tensor_info(TensorInfo* t, uint64_t index) {
    std::string field = "tensor info " + std::to_string(index);
    INFERSCOPE_RETURN_IF_ERROR(read_string(&t->name, field + " name"));
    if (t->name.size() >= kMaxTensorName) {
      return fail(field, "tensor name of " + std::to_string(t->name.size()) + " bytes (expected fewer than 64)");
    }
    field = "tensor '" + t->name + "'";
    if (file_.tensor_index_.count(t->name)) return fail(field, "duplicate tensor name");
    uint32_t n_dims = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&n_dims, field + " n_dims"));
    if (n_dims > kMaxDims) return fail(field, "n_dims " + std::to_string(n_dims) + " (expected at most 4)");
    t->n_dims = static_cast<int>(n_dims);
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      int64_t ne = 0;
      INFERSCOPE_RETURN_IF_ERROR(read(&ne, field + " ne[" + std::to_string(d) + "]"));
      if (ne <= 0) return fail(field, "dimension " + std::to_string(d) + " is " + std::to_string(ne) + " (expected > 0)");
      t->ne[d] = ne;
      if (mul_overflows(n_elements, static_cast<uint64_t>(ne), &n_elements) ||
          n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return fail(field, "element count overflows 64 bits");
      }
    }
    t->n_elements = n_elements;
    uint32_t type_id = 0;
    INFERSCOPE_RETURN_IF_ERROR(read(&type_id, field + " type"));
    std::optional<kernels::TypeInfo> info = kernels::type_info(type_id);
    if (!info) return fail(field, "unknown or retired ggml type id " + std::to_string(type_id));
    t->type = static_cast<kernels::GgmlType>(type_id);
    if (t->ne[0] % info->block_size != 0) {
      return fail(field, "row length " + std::to_string(t->ne[0]) + " is not a multiple of the " + info->name +
                             " block size " + std::to_string(info->block_size));
    }
    uint64_t row_bytes = 0;
    if (mul_overflows(static_cast<uint64_t>(t->ne[0] / info->block_size), static_cast<uint64_t>(info->type_size),
                      &row_bytes) ||
        row_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return fail(field, "row byte size overflows 64 bits");
    }
    t->row_bytes = static_cast<int64_t>(row_bytes);
    uint64_t n_rows = n_elements / static_cast<uint64_t>(t->ne[0]);
    if (mul_overflows(n_rows, static_cast<uint64_t>(t->row_bytes), &t->n_bytes)) {
      return fail(field, "byte size overflows 64 bits");
    }
    INFERSCOPE_RETURN_IF_ERROR(read(&t->offset, field + " offset"));
    return Status::ok();
  }

  Status parse_tensor_infos() {
    file_.tensors_.reserve(static_cast<size_t>(n_tensors_));
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      TensorInfo t;
      INFERSCOPE_RETURN_IF_ERROR(parse_tensor_info(&t, i));
      file_.tensor_index_.emplace(t.name, file_.tensors_.size());
      file_.tensors_.push_back(std::move(t));
    }
    return Status::ok();
  }

  Status place_tensor_data() {
    uint64_t a = file_.alignment_;
    uint64_t data_start = (pos_ + a - 1) / a * a;
    file_.data_start_ = data_start;
    uint64_t expected_offset = 0;
    for (TensorInfo& t : file_.tensors_) {
      std::string field = "tensor '" + t.name + "' offset";
      if (t.offset != expected_offset) {
        return fail(field, "offset " + std::to_string(t.offset) + ", expected " + std::to_string(expected_offset) +
                               " (tensors must be packed in order with alignment " + std::to_string(a) + ")");
      }
      uint64_t begin = 0, end = 0;
      if (add_overflows(data_start, t.offset, &begin) || add_overflows(begin, t.n_bytes, &end) || end > size_) {
        return Status::error(file_.path_ + ": tensor '" + t.name + "' data (" + std::to_string(t.n_bytes) +
                             " bytes at data offset " + std::to_string(t.offset) +
                             ") extends past the end of the file (" + std::to_string(size_) +
                             " bytes): file truncated?");
      }
      t.data = data_ + begin;
      uint64_t padded = 0;
      if (add_overflows(t.n_bytes, a - 1, &padded) || add_overflows(expected_offset, padded / a * a, &expected_offset)) {
        return fail(field, "offset overflows 64 bits");
      }
    }
    return Status::ok();
  }

  File& file_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  uint64_t n_tensors_ = 0;
  uint64_t n_kv_ = 0;
};

std::string TensorInfo::shape_string() const {
  std::string s = "[";
  int dims = n_dims == 0 ? 1 : n_dims;
  for (int d = 0; d < dims; ++d) {
    if (d) s += ", ";
    s += std::to_string(ne[d]);
  }
  return s + "]";
}

Result<std::shared_ptr<const File>> File::open(const std::string& path) {
  auto mapping = MappedFile::open(path);
  if (!mapping) return mapping.status();
  auto file = std::shared_ptr<File>(new File());
  file->path_ = path;
  file->mapping_ = *mapping;
  file->size_ = (*mapping)->size();
  Parser parser(*file, (*mapping)->data(), (*mapping)->size());
  INFERSCOPE_RETURN_IF_ERROR(parser.parse());
  return std::shared_ptr<const File>(file);
}

Result<std::shared_ptr<const File>> File::parse(std::vector<uint8_t> bytes, std::string name) {
  auto file = std::shared_ptr<File>(new File());
  file->path_ = std::move(name);
  file->owned_bytes_ = std::move(bytes);
  file->size_ = file->owned_bytes_.size();
  Parser parser(*file, file->owned_bytes_.data(), file->owned_bytes_.size());
  INFERSCOPE_RETURN_IF_ERROR(parser.parse());
  return std::shared_ptr<const File>(file);
}

Result<std::shared_ptr<const File>> File::parse_owned(std::shared_ptr<const void> owner,
                                                      std::span<const uint8_t> bytes, std::string name) {
  auto file = std::shared_ptr<File>(new File());
  file->path_ = std::move(name);
  file->owner_ = std::move(owner);
  file->size_ = bytes.size();
  Parser parser(*file, bytes.data(), bytes.size());
  INFERSCOPE_RETURN_IF_ERROR(parser.parse());
  return std::shared_ptr<const File>(file);
}

void File::release_pages(const uint8_t* begin, size_t bytes) const {
  if (mapping_) mapping_->release(begin, bytes);
}

const Value* File::find(std::string_view key) const {
  auto it = metadata_index_.find(std::string(key));
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {

template <class T>
Result<T> wrong_type(const File& f, std::string_view key, const Value& v, const char* expected) {
  return Result<T>::error(f.error_prefix() + "metadata key '" + std::string(key) + "' has type " +
                          value_type_name(v.type) + ", expected " + expected);
}

template <class T>
Result<T> missing(const File& f, std::string_view key, const char* expected) {
  return Result<T>::error(f.error_prefix() + "required metadata key '" + std::string(key) + "' (" + expected +
                          ") is missing");
}

}  // namespace

Result<std::string> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing<std::string>(*this, key, "string");
  if (v->type != ValueType::STRING) return wrong_type<std::string>(*this, key, *v, "STRING");
  return v->string;
}

Result<int64_t> File::get_int(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing<int64_t>(*this, key, "integer");
  if (!v->is_integer_type()) return wrong_type<int64_t>(*this, key, *v, "an integer");
  if (v->type == ValueType::UINT64 && v->integer < 0) {
    return Result<int64_t>::error(error_prefix() + "metadata key '" + std::string(key) + "' value is out of range");
  }
  return v->integer;
}

Result<double> File::get_float(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing<double>(*this, key, "number");
  if (v->is_float_type()) return v->real;
  if (v->is_integer_type()) return static_cast<double>(v->integer);
  return wrong_type<double>(*this, key, *v, "FLOAT32");
}

Result<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing<bool>(*this, key, "bool");
  if (v->type != ValueType::BOOL) return wrong_type<bool>(*this, key, *v, "BOOL");
  return v->integer != 0;
}

Result<std::string> File::get_string_or(std::string_view key, std::string fallback) const {
  return has(key) ? get_string(key) : Result<std::string>(std::move(fallback));
}
Result<int64_t> File::get_int_or(std::string_view key, int64_t fallback) const {
  return has(key) ? get_int(key) : Result<int64_t>(fallback);
}
Result<double> File::get_float_or(std::string_view key, double fallback) const {
  return has(key) ? get_float(key) : Result<double>(fallback);
}
Result<bool> File::get_bool_or(std::string_view key, bool fallback) const {
  return has(key) ? get_bool(key) : Result<bool>(fallback);
}

Result<const std::vector<std::string>*> File::get_string_array(std::string_view key) const {
  using R = Result<const std::vector<std::string>*>;
  const Value* v = find(key);
  if (!v) return missing<const std::vector<std::string>*>(*this, key, "array of strings");
  if (v->type != ValueType::ARRAY || v->array_type != ValueType::STRING) {
    return R::error(error_prefix() + "metadata key '" + std::string(key) + "' is not an array of STRING");
  }
  return &v->strings;
}

Result<std::vector<float>> File::get_float_array(std::string_view key) const {
  using R = Result<std::vector<float>>;
  const Value* v = find(key);
  if (!v) return missing<std::vector<float>>(*this, key, "array of FLOAT32");
  if (v->type != ValueType::ARRAY || !is_float(v->array_type)) {
    return R::error(error_prefix() + "metadata key '" + std::string(key) + "' is not an array of FLOAT32");
  }
  return std::vector<float>(v->reals.begin(), v->reals.end());
}

Result<std::vector<int64_t>> File::get_int_array(std::string_view key) const {
  using R = Result<std::vector<int64_t>>;
  const Value* v = find(key);
  if (!v) return missing<std::vector<int64_t>>(*this, key, "array of integers");
  if (v->type != ValueType::ARRAY || !(is_integer(v->array_type) || v->array_type == ValueType::BOOL)) {
    return R::error(error_prefix() + "metadata key '" + std::string(key) + "' is not an array of integers");
  }
  return v->integers;
}

}  // namespace inferscope::gguf
