// Hand-assembles GGUF bytes field by field, so tests can build files the Writer refuses to
// produce (wrong types, bad offsets, truncated records) and patch fields at known offsets.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::gguf::testing {

class Bytes {
 public:
  Bytes& u8(uint8_t v) { return raw(&v, 1); }
  Bytes& u16(uint16_t v) { return raw(&v, 2); }
  Bytes& u32(uint32_t v) { return raw(&v, 4); }
  Bytes& i32(int32_t v) { return raw(&v, 4); }
  Bytes& u64(uint64_t v) { return raw(&v, 8); }
  Bytes& i64(int64_t v) { return raw(&v, 8); }
  Bytes& f32(float v) { return raw(&v, 4); }
  Bytes& f64(double v) { return raw(&v, 8); }
  Bytes& str(std::string_view s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  Bytes& raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    data.insert(data.end(), b, b + n);
    return *this;
  }
  Bytes& zeros(size_t n) {
    data.insert(data.end(), n, 0);
    return *this;
  }
  Bytes& pad_to(size_t alignment) { return zeros((alignment - data.size() % alignment) % alignment); }

  // Header: magic, version, n_tensors, n_kv.
  Bytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    raw("GGUF", 4);
    u32(version);
    u64(n_tensors);
    return u64(n_kv);
  }
  // KV record with a u32 value (type id 4).
  Bytes& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(4).u32(v); }
  Bytes& kv_string(std::string_view key, std::string_view v) { return str(key).u32(8).str(v); }
  // Tensor info: name, n_dims, ne..., type, offset.
  Bytes& tensor(std::string_view name, const std::vector<int64_t>& ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (int64_t d : ne) i64(d);
    return u32(type).u64(offset);
  }

  size_t size() const { return data.size(); }
  void put_u32(size_t at, uint32_t v) { std::memcpy(data.data() + at, &v, 4); }
  void put_u64(size_t at, uint64_t v) { std::memcpy(data.data() + at, &v, 8); }

  std::vector<uint8_t> data;
};

}  // namespace inferscope::gguf::testing
