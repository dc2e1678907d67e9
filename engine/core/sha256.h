// SHA-256 (FIPS 180-4): streaming hasher and one-shot helpers. Used by tests (dequantization
// hashes) and for model identity.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace inferscope {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Returns the digest; the hasher must not be updated afterwards (call reset() to reuse).
  Digest finish();
  void reset();

  static Digest hash(const void* data, size_t n);
  static std::string hex(const Digest& d);  // lowercase
  static std::string hex_of(const void* data, size_t n) { return hex(hash(data, n)); }

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace inferscope
