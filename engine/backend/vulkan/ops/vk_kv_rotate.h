// Re-rotation of cached keys on the Vulkan device, for the sliding window's and the context
// shift's moves of a sequence's blocks: the counterpart of decoding a K row
// (kernels::kv_dequantize), kernels::rope_apply with kernels::rope_angles of a position delta at
// attn_factor 1 (a pure rotation), and kernels::kv_quantize_row. Shader kv_rotate.comp (one
// variant per KvType) decodes and rotates rows into an F32 scratch; kv_store.comp (vk_kv.h)
// encodes them back, so the encoding is kv_store's, byte for byte.
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/ops/vk_kv.h"
#include "engine/backend/vulkan/ops/vk_rope.h"
#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"
#include "kernels/formats/rope_params.h"

namespace inferscope::vulkan {

// Rotates the keys of every row (all block_size rows) of each block `blocks` lists, in `layer` of
// k_cache (the K cache laid out as `layout`): each of a row's dims.n_head_kv heads of
// dims.head_dim values gets its first dims.n_rot values turned by the angles of position `delta`
// (negative: backwards) from `params` with attn_factor 1 (params.attn_factor and the host pointer
// params.freq_factors are ignored; the per-pair divisors come from freq_factors, [n_rot/2] F32 on
// the device, or BufferSpan{} for none), in dims.neox's pair layout, and is re-encoded in the K
// type as record_kv_store encodes. V rows and every other row keep their bytes.
// `blocks`: the list as a table (entry i: a block; its rows are the table's positions
// [i * block_size, (i + 1) * block_size)). scratch: F32 rows the op may overwrite, at least one
// row of n_embd_kv values; the rows go in passes of as many rows as it holds, two dispatches each.
// Preconditions (checked): the entries are distinct blocks of the pool, dims.n_head_kv *
// dims.head_dim = n_embd_kv, dims.n_rot even, positive, <= head_dim and <= 1024, |delta| < 2^24
// (exact as a float), n_embd_kv a multiple of the K type's kv_row_granule. dims.n_head is unused.
Status record_kv_rotate(Device& device, Recorder& recorder, BufferSpan k_cache, const KvCacheLayout& layout,
                        int64_t layer, const KvBlockTable& blocks, BufferSpan freq_factors, const RopeDims& dims,
                        const kernels::RopeParams& params, int64_t delta, BufferSpan scratch, DispatchLabel label = {});

}  // namespace inferscope::vulkan
