#include "kernels/cpu/attention.h"

#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"

namespace inferscope::kernels {

namespace detail {

void attention_head_f16_scalar(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                               int64_t head_dim, float scale, float* scores, float* out, float softcap) {
  float qh[1024];
  for (int64_t d = 0; d < head_dim; ++d) qh[d] = round_to_fp16(q[d]);
  for (int64_t p = 0; p < n_kv; ++p) {
    const uint16_t* kp = k + p * kv_stride;
    float dot = 0.0f;
    for (int64_t d = 0; d < head_dim; ++d) dot += qh[d] * fp16_to_fp32(kp[d]);
    scores[p] = dot * scale;
  }
  if (softcap > 0.0f) kernels::softcap(scores, n_kv, softcap);
  softmax(scores, n_kv);
  for (int64_t p = 0; p < n_kv; ++p) scores[p] = round_to_fp16(scores[p]);
  for (int64_t d = 0; d < head_dim; ++d) out[d] = 0.0f;
  for (int64_t p = 0; p < n_kv; ++p) {
    const uint16_t* vp = v + p * kv_stride;
    for (int64_t d = 0; d < head_dim; ++d) out[d] += scores[p] * fp16_to_fp32(vp[d]);
  }
}

}  // namespace detail

}  // namespace inferscope::kernels
