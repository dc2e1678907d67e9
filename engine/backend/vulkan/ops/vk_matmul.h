// Matrix products and embedding lookups with quantized weights on the Vulkan device (shaders
// matvec.comp, matmat.comp, get_rows.comp; weight decoders in kernels/vulkan/shaders/types).
// Weights stay in their GGUF block layout, as uploaded. The matvec shader serves few tokens
// (decode), the tiled matmat shader many (prefill) on GPUs; record_matmul picks one per call,
// or the one a single token takes for any batch (TokenBatching::Invariant).
// On CPU drivers (lavapipe) matvec's row-per-invocation layout serves every batch size: there
// each buffer read that differs per invocation is a scalar loop over the SIMD lanes, which
// makes register blocking beat shared-memory tiles.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/backend/vulkan/ops/vk_quantize.h"
#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope::vulkan {

// One weight matrix (or a run of rows of it, or a stack of expert matrices) on the device.
struct WeightView {
  kernels::GgmlType type = kernels::GgmlType::F32;
  int64_t cols = 0;       // values per row
  int64_t rows = 0;       // rows (of each matrix)
  int64_t row_bytes = 0;  // bytes between rows, >= kernels::row_bytes(type, cols)
  BufferSpan span;        // binding; offset aligned to minStorageBufferOffsetAlignment, size a multiple of 4
  uint32_t byte_offset = 0;   // first row inside span (row slices, e.g. phi3's fused qkv)
  uint64_t matrix_bytes = 0;  // stride between stacked expert matrices (rows * row_bytes)
  int64_t n_mats = 1;
};

// How the shaders read a weight type: rows are decoded in chunks of `chunk` values (cols must
// be a multiple of it and of the block size) and row starts (byte_offset and row_bytes) must
// be multiples of `row_align` bytes. nullopt for types without a shader. Float types (F32,
// F16, BF16) also take rows of any length, read one value at a time (slowly) from rows aligned
// to their element size, when cols is not a multiple of their chunk.
struct WeightLayout {
  int64_t chunk = 0;
  int64_t row_align = 0;
};
std::optional<WeightLayout> weight_layout(kernels::GgmlType type);

// The activations of a product: F32 rows, and optionally the same rows quantized to int8 by
// record_quantize_q8 (vk_quantize.h). Given q8, the matvec of the quantized weight types
// multiplies in int8: integer sums per 32 values (OpSDot / OpSUDot on devices with
// shaderIntegerDotProduct, shifts and multiplies elsewhere: the same sums) scaled by the weight
// and activation scales; for the 32-block types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL) the CPU
// backend's integer sums. Without q8, for float weights and for the tiled matmat, the F32 rows
// are multiplied in float.
struct MatmulInput {
  BufferSpan x;
  BufferSpan q8;  // empty (no buffer): float arithmetic
  MatmulInput(BufferSpan x_rows, BufferSpan q8_rows = {}) : x(x_rows), q8(q8_rows) {}
};

// How record_matmul chooses its kernel for a batch of n tokens.
enum class TokenBatching {
  // The fastest for n: the matvec with up to 8 tokens per workgroup, and on GPUs the tiled
  // matmat in float above a few tokens.
  Fastest,
  // The kernel a single token takes, whatever n (Chunk::batch_invariant): every token's
  // outputs bit-identical to a product of that token alone.
  Invariant,
};

// Whether record_matmul (experts: record_matmul_experts) reads MatmulInput::q8 for this weight
// type, row length and token count (pairs for experts) on this device: the int8 matvec runs.
bool matmul_takes_q8(const Device& device, kernels::GgmlType type, int64_t cols, int64_t n, bool experts,
                     TokenBatching batching = TokenBatching::Fastest);

// y[t][y_col_offset + r] = sum_c W[r][c] x[t][c] for t < n, r < w.rows (see MatmulInput).
// x: [n][w.cols] f32 (contiguous rows); y: n rows of y_stride floats, y_col_offset + w.rows <=
// y_stride (other columns untouched). Uses matrix 0 of a stack. Summation in f32, in an order
// that differs from the CPU kernels'. n == 0 or w.rows == 0 records nothing. The kernel is the
// one `batching` chooses for n tokens (matmul_takes_q8 with the same arguments says whether it
// reads x.q8).
// Preconditions (checked, as errors): a supported type, w.cols a multiple of the type's chunk
// and block, aligned rows (weight_layout), spans large enough, every index below 2^32.
Status record_matmul(Device& device, Recorder& recorder, const WeightView& w, const MatmulInput& x, int64_t n,
                     BufferSpan y, int64_t y_stride, int64_t y_col_offset, DispatchLabel label = {},
                     TokenBatching batching = TokenBatching::Fastest);

// Experts (mixture of experts): for each token t < n_tokens and j < k_used,
//   y[t * k_used + j][:] = W[ids[t][j]] x[x_per_pair ? t * k_used + j : t]
// One pair per workgroup whatever n_tokens: every pair's sums are those of the pair alone.
// ids: int32 [n_tokens][k_used]; an id outside [0, w.n_mats) gives a row of zeros.
// x: [n_tokens (* k_used when x_per_pair)][w.cols] f32 (and quantized, see MatmulInput);
// y: [n_tokens * k_used][w.rows] f32.
Status record_matmul_experts(Device& device, Recorder& recorder, const WeightView& w, const MatmulInput& x,
                             bool x_per_pair, BufferSpan ids, int64_t n_tokens, int64_t k_used, BufferSpan y,
                             DispatchLabel label = {});

// What get_rows writes for an id outside the table: a row of zeros, or nothing (Keep: the row
// stays as it was, for a table in parts that each write the rows of the ids they hold).
enum class OutsideIds { Zero, Keep };

// Embedding lookup: out[i][:] = dequantize(table row ids[i]) * scale for i < n (bit-exact with
// kernels::dequantize_row followed by one f32 multiply; scale 1 copies exactly).
// ids: int32 [n]; an id outside [0, table.rows) as `outside` says. out: [n][table.cols] f32.
Status record_get_rows(Device& device, Recorder& recorder, const WeightView& table, BufferSpan ids, int64_t n,
                       float scale, BufferSpan out, OutsideIds outside = OutsideIds::Zero, DispatchLabel label = {});

// For tests and benchmarks: overrides of the automatic choices, kept until reset with {}.
// Zero / Auto fields stay automatic. Not thread-safe.
struct MatmulOverrides {
  enum class Path { Auto, Matvec, Matmat };
  Path path = Path::Auto;          // Matmat falls back to matvec where cols % 32 != 0
  uint32_t matvec_workgroup = 0;   // invocations per matvec workgroup (power of two >= 8)
  uint32_t matvec_rows = 0;        // rows per matvec workgroup (rowwise: per invocation)
  uint32_t matvec_tokens = 0;      // tokens per matvec workgroup (1..8)
  int matvec_rowwise = -1;         // row-per-invocation matvec layout: -1 auto, 0 off, 1 on
  uint32_t matmat_bm = 0, matmat_bn = 0, matmat_tm = 0, matmat_tn = 0;  // tile, micro-tile
  int64_t max_matvec_tokens = 0;   // Auto: matvec up to this many tokens
  int int8_matvec = -1;            // quantized types given q8: -1 / 1 int8, 0 float matvec
};
void set_matmul_overrides(const MatmulOverrides& overrides);

}  // namespace inferscope::vulkan
