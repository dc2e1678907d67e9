// Where each row of a chunk sits, in device memory, for the kernels whose work depends on
// positions (rope, kv_store, attention) or slots (the Gated DeltaNet kernels): one entry per row, so a chunk's rows may belong to
// several sequences, and a captured decode step (a CUDA graph) reads each step's positions and
// block tables from the same buffers instead of baking them into its launches.
#pragma once

#include <cstdint>

#include "kernels/formats/kv_type.h"

namespace inferscope::cuda_kernels {

// Device arrays, [rows] each unless noted.
struct ChunkRows {
  const int32_t* pos = nullptr;     // the row's position in its sequence
  const int32_t* n_kv = nullptr;    // positions its query may see before the window: pos + 1 (causal), or its
                                    // sequence's length (encoders)
  const int32_t* table = nullptr;   // the offset of the row's block table in `tables`
  const int32_t* tables = nullptr;  // block tables back to back: entry i of a table holds positions
                                    // [i * block_size, (i + 1) * block_size)
  const int32_t* slot = nullptr;    // the row's sequence slot (a hybrid model's recurrent state)
};

// One layer's K or V storage on the device: a pool of blocks of 2^block_shift rows, row r the
// encoding of one position's n_embd_kv values as `type` (kernels/cpu/kv_quant.h's row format,
// kv_row_bytes bytes, no padding): position x of a row's sequence is pool row
// tables[table + x / block_size] * block_size + x % block_size.
struct KvPool {
  kernels::KvType type = kernels::KvType::F16;
  uint8_t* data = nullptr;
  int64_t row_bytes = 0;
  int block_shift = 4;
};

}  // namespace inferscope::cuda_kernels
