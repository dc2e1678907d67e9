// Importance matrix files (imatrix.h), in llama.cpp's two formats.
//
// GGUF (llama-imatrix's default): general.type "imatrix", imatrix.datasets (strings),
// imatrix.chunk_count and imatrix.chunk_size (u32); per matrix, sorted by name, two F32
// tensors: "<name>.in_sum2" [cols, n_mat] and "<name>.counts" [1, n_mat].
// The older .dat (read only): int32 n_entries; per entry int32 name length, the name, int32
// ncall, int32 nval, nval floats (the mean times ncall); then int32 chunk count, int32 length and
// the dataset's name. Read back as in_sum2 = those values and one count of ncall.
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/weightlab/imatrix.h"

namespace inferscope {

Status write_imatrix(const ImportanceMatrix& im, const std::string& path);

// Either format (a GGUF file by its magic). A truncated, inconsistent or non-imatrix file is
// refused with the reason.
Result<ImportanceMatrix> read_imatrix(const std::string& path);

}  // namespace inferscope
