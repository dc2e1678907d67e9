// ggml weight type ids as stored in GGUF tensor infos, with their block geometry.
// The table covers every id of the format (so files with types we cannot decode still
// inspect correctly); `decodable` says whether the kernels can dequantize / multiply it.
#pragma once

#include <cstdint>
#include <optional>

namespace inferscope::kernels {

enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41, Q2_0 = 42,
  // Ours, outside ggml's ids (other GGUF readers do not know it): 2:4 sparse F16 (sparse24.h).
  F16_2OF4 = 200,
};

struct TypeInfo {
  const char* name;    // ggml_type_name spelling, e.g. "q4_0"
  int64_t block_size;  // elements per block
  int64_t type_size;   // bytes per block
  bool decodable;      // dequantize + matmul implemented here
};

// Traits of a raw type id from a file; nullopt for retired or unknown ids.
std::optional<TypeInfo> type_info(uint32_t id);
// Traits of a known type (never fails).
TypeInfo type_info(GgmlType type);
const char* type_name(GgmlType type);
// Parses "f16", "Q8_0", "q4_0"... (case-insensitive); nullopt when unknown.
std::optional<GgmlType> type_from_name(const char* name);

// Bytes of one row of n elements; n % block_size == 0.
inline int64_t row_bytes(GgmlType type, int64_t n) {
  TypeInfo t = type_info(type);
  return n / t.block_size * t.type_size;
}

}  // namespace inferscope::kernels
