// AMX matmul kernels (prefill). Not yet specialised: uses the AVX-512 kernels.
#include "kernels/cpu/matmul_internal.h"

namespace inferscope::kernels::detail {

void matmul_amx(const MatmulArgs& a) { matmul_avx512(a); }

}  // namespace inferscope::kernels::detail
