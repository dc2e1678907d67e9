// The storage types of a KV-cache row (docs/KV-CACHE.md): the numerics every backend shares.
// A row holds n values (all KV heads of one position) in blocks of 32 for the quantized types,
// each block an F16 scale d followed by its codes:
//   F16   2 bytes per value.
//   Q8_0  34 bytes: d = absmax / 127, 32 int8 codes q = round-half-away(x / d); value d * q.
//         GGUF's Q8_0 block (GGUF-FORMATS.md 4.1), byte-identical to llama.cpp's rounding.
//   Q4_0  18 bytes: d = (signed value of largest magnitude) / -8, codes c = min(15, trunc(x / d
//         + 8.5)); value d * (c - 8). GGUF's Q4_0 block (4.2), byte-identical.
//   NF4   18 bytes: d = absmax, codes c = the index of the NormalFloat-4 level (kNf4Levels,
//         QLoRA) nearest x / d (ties: the lower index); value d * kNf4Levels[c].
//   INT4  18 bytes: symmetric, d = absmax / 7, c = round-half-away(x / d) + 8 in 1..15; value
//         d * (c - 8): Q4_0's decoding with a range of [-7, 7] (TECHNIQUES.md's INT4 scheme).
// The 4-bit types share Q4_0's nibble order: byte j of the codes holds value j in its low
// nibble and value j + 16 in its high nibble. Quantizers divide by d in F32 (id = 1 / d) and
// store d rounded to F16.
#pragma once

#include <cstdint>
#include <string_view>

namespace inferscope::kernels {

enum class KvType : uint8_t { F16, Q8_0, Q4_0, NF4, Int4 };

constexpr int64_t kKvBlock = 32;          // values per block of the quantized types
constexpr int64_t kKvQ8BlockBytes = 34;    // Q8_0: F16 scale + 32 int8 codes
constexpr int64_t kKvNibbleBlockBytes = 18;  // Q4_0, NF4, INT4: F16 scale + 16 bytes of nibbles

// The 16 NormalFloat-4 levels (QLoRA, Dettmers et al. 2023), ascending, in [-1, 1].
extern const float kNf4Levels[16];

// "f16", "q8_0", "q4_0", "nf4", "int4" (llama.cpp's --cache-type names where it has them).
std::string_view kv_type_name(KvType type);
// Parses those names; false for anything else.
bool parse_kv_type(std::string_view name, KvType* type);

// Bytes of a row of n values. Precondition: n % kv_row_granule(type) == 0.
int64_t kv_row_bytes(KvType type, int64_t n);
// Values a row length must be a multiple of: 2 for F16, kKvBlock for the others.
int64_t kv_row_granule(KvType type);

}  // namespace inferscope::kernels
