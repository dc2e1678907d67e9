#include "engine/backend/vulkan/ops/vk_matmul.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"
#include "kernels/formats/iq_grids.h"

namespace inferscope::vulkan {

namespace {

using kernels::GgmlType;

// The values of MatmulPush / GetRowsPush mirror the push-constant blocks of matvec.comp and
// matmat.comp (shared) and get_rows.comp.
struct MatmulPush {
  uint32_t cols, rows, row_bytes, w_offset;
  uint32_t n, x_stride, y_stride, y_offset;
  uint32_t t_base, matrix_bytes, k_used, x_per_pair, n_mats;
};

struct GetRowsPush {
  uint32_t cols, row_bytes, w_offset, n, out_stride, n_rows;
  float scale;
  uint32_t keep_outside;
};

constexpr uint32_t kMatmatBk = 32;        // columns per matmat step (matmat.comp BK)
constexpr uint32_t kMatmatStride = 9;     // vec4s per shared tile row (BK / 4 + 1)
constexpr uint32_t kMaxMatvecTokens = 8;  // NT limit (registers)

MatmulOverrides g_overrides;

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint32_t ceil_log2(uint32_t v) {
  uint32_t l = 0;
  while ((1u << l) < v) ++l;
  return l;
}

std::string shader_name(const char* family, GgmlType type) {
  std::string name = std::string(family) + "_" + kernels::type_name(type);
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name;
}

// The last binding of the matmul shaders: the i-quant grids for the grid types, uploaded once
// per device; for the other types (whose shaders do not read it) the weights again, so that every
// type's kernel binds alike.
Result<BufferSpan> grid_binding(Device& device, GgmlType type, BufferSpan weights) {
  if (!kernels::is_grid_iquant(type)) return weights;
  auto table = device.constant_table("iq_grids", kernels::iq_grid_words);
  if (!table) return table.status();
  return BufferSpan::whole(**table);
}

std::string supported_list() {
  return "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q3_K, q4_K, q5_K, q6_K, iq1_s, iq1_m, iq2_xxs, "
         "iq2_xs, iq2_s, iq3_xxs, iq3_s, iq4_nl, iq4_xs, mxfp4, tq1_0, tq2_0";
}

// Checks the weight view common to every op; returns its layout. `bind_bytes` receives the
// bytes the shaders read from the start of the span (rounded to 4).
Result<WeightLayout> check_weights(const Device& device, const WeightView& w, const char* op, uint64_t* bind_bytes) {
  auto layout = weight_layout(w.type);
  if (!layout) {
    return Status::error(std::string(op) + ": weight type " + kernels::type_name(w.type) +
                         " has no Vulkan shader (supported: " + supported_list() + ")");
  }
  const std::string where = std::string(op) + ": weights (" + kernels::type_name(w.type) + ")";
  WeightLayout effective = *layout;
  if (kernels::type_info(w.type).block_size == 1 && w.cols % layout->chunk != 0) {
    // Float rows of any length: the shaders read them one value at a time.
    effective = WeightLayout{1, kernels::type_info(w.type).type_size};
  }
  layout = effective;
  const int64_t multiple = std::max(layout->chunk, kernels::type_info(w.type).block_size);
  if (w.cols <= 0 || w.cols % multiple != 0) {
    return Status::error(where + " cols = " + std::to_string(w.cols) + ", expected a positive multiple of " +
                         std::to_string(multiple));
  }
  if (w.rows < 0 || w.n_mats < 1) return Status::error(where + ": negative rows or no matrix");
  if (w.row_bytes < kernels::row_bytes(w.type, w.cols) || w.row_bytes % layout->row_align != 0) {
    return Status::error(where + " row_bytes = " + std::to_string(w.row_bytes) + ", expected a multiple of " +
                         std::to_string(layout->row_align) + " of at least " +
                         std::to_string(kernels::row_bytes(w.type, w.cols)));
  }
  if (w.byte_offset % layout->row_align != 0) {
    return Status::error(where + " byte_offset = " + std::to_string(w.byte_offset) + ", expected a multiple of " +
                         std::to_string(layout->row_align));
  }
  if (w.n_mats > 1 && w.matrix_bytes < static_cast<uint64_t>(w.rows * w.row_bytes)) {
    return Status::error(where + " matrix_bytes = " + std::to_string(w.matrix_bytes) + " is less than rows * row_bytes");
  }
  if (w.n_mats > 1 && w.matrix_bytes % static_cast<uint64_t>(layout->row_align) != 0) {
    return Status::error(where + " matrix_bytes is not a multiple of " + std::to_string(layout->row_align));
  }
  const uint64_t bytes = w.byte_offset + static_cast<uint64_t>(w.n_mats - 1) * w.matrix_bytes +
                         static_cast<uint64_t>(w.rows) * static_cast<uint64_t>(w.row_bytes);
  INFERSCOPE_RETURN_IF_ERROR(check_u32(bytes, op, "weight bytes"));
  *bind_bytes = round_up(bytes, 4);
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, w.span, *bind_bytes, op, "weights"));
  return *layout;
}

// Workgroups for `groups` row groups: x up to the device limit, the rest folded into z.
Result<std::pair<uint32_t, uint32_t>> row_grid(const Device& device, uint64_t groups, const char* op) {
  const uint64_t max_x = std::max<uint32_t>(device.info().max_workgroup_count[0], 1);
  const uint64_t max_z = std::max<uint32_t>(device.info().max_workgroup_count[2], 1);
  const uint64_t gx = std::clamp<uint64_t>(groups, 1, max_x);
  const uint64_t gz = (groups + gx - 1) / gx;
  if (gz > max_z) return Status::error(std::string(op) + ": too many rows for one dispatch");
  return std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(gx), static_cast<uint32_t>(std::max<uint64_t>(gz, 1))};
}

uint32_t max_groups_y(const Device& device) { return std::max<uint32_t>(device.info().max_workgroup_count[1], 1); }

struct MatvecConfig {
  uint32_t workgroup, rows, tokens;
  bool rowwise;
};

// Every quantized type has an integer form (matvec_q8.comp): int8 dot products with x
// quantized per 32 values (for the 32-block types, the CPU backend's arithmetic).
// F16_2OF4 (2:4 sparse F16) is a float type in 32-blocks: it has none.
bool has_int8_form(GgmlType type) {
  return type != GgmlType::F16_2OF4 && kernels::type_info(type).block_size > 1 && weight_layout(type).has_value();
}

// INFERSCOPE_VULKAN_INT8=0 turns the int8 matvec off (float products everywhere), to compare.
bool int8_disabled_by_environment() {
  static const bool disabled = [] {
    const char* v = std::getenv("INFERSCOPE_VULKAN_INT8");
    return v && std::string(v) == "0";
  }();
  return disabled;
}

bool int8_allowed(GgmlType type) {
  return has_int8_form(type) && g_overrides.int8_matvec != 0 && !int8_disabled_by_environment();
}

// The matvec shader family: matvec[_q8[_native]][_id][_rowwise].
std::string matvec_family(const Device& device, bool experts, bool rowwise, bool int8) {
  std::string family = "matvec";
  if (int8) family += int8_native_variant(device) ? "_q8_native" : "_q8";
  if (experts) family += "_id";
  if (rowwise) family += "_rowwise";
  return family;
}

// The row-per-invocation layout (matvec.comp ROWWISE) where it applies: CPU drivers, subgroups
// of at least 8 invocations, rows of whole 32-value runs.
bool use_rowwise(const Device& device, int64_t cols) {
  if (cols % 32 != 0) return false;
  if (g_overrides.matvec_rowwise >= 0) return g_overrides.matvec_rowwise == 1;
  return device.info().is_cpu() && device.info().subgroup_size >= 8 && device.info().subgroup_broadcast;
}

MatvecConfig matvec_config(const Device& device, const WeightLayout& layout, int64_t cols, int64_t n, bool experts) {
  const bool cpu = device.info().is_cpu();
  MatvecConfig c{};
  c.rowwise = use_rowwise(device, cols);
  const uint32_t subgroup = std::max<uint32_t>(device.info().subgroup_size, 8);
  // CPU drivers: one SIMD-wide workgroup. GPUs: two or more subgroups over the chunks of the
  // workgroup's rows.
  const uint32_t preferred = g_overrides.matvec_workgroup ? g_overrides.matvec_workgroup
                                                          : (cpu || c.rowwise ? subgroup : std::max(64u, subgroup));
  c.workgroup = op_workgroup_size(device, preferred);
  // Tokens per workgroup: 1, 2, 4 or 8 (each is its own pipeline; a batch of 3 runs as 4 with
  // one clamped token, instead of compiling a pipeline per batch size).
  uint32_t tokens = 1;
  while (tokens < kMaxMatvecTokens && tokens < n) tokens *= 2;
  c.tokens = experts ? 1u : (g_overrides.matvec_tokens ? std::min(g_overrides.matvec_tokens, kMaxMatvecTokens) : tokens);
  if (c.rowwise) {
    // Rows per invocation (measured on lavapipe, AVX2): each x value read serves them all, but
    // the body unrolls rows x tokens decode-and-dot blocks, and the pipeline's compile time
    // grows with it (16 x 8 costs 3-8 s of JIT for the K-quants, 2.5 s for Q4_0).
    if (g_overrides.matvec_rows) {
      c.rows = g_overrides.matvec_rows;
    } else if (c.tokens == 1) {
      c.rows = layout.chunk == 8 ? 4u : 8u;
    } else {
      c.rows = layout.chunk <= 32 ? 16u : 8u;
    }
    return c;
  }
  c.rows = g_overrides.matvec_rows ? g_overrides.matvec_rows : (cpu ? 4u : 2u);
  const uint64_t shared = std::max<uint32_t>(device.info().max_shared_memory, 1024);
  while (uint64_t{c.workgroup} * c.rows * c.tokens * 4 > shared && c.rows > 1) c.rows /= 2;
  while (uint64_t{c.workgroup} * c.rows * c.tokens * 4 > shared && c.tokens > 1) c.tokens /= 2;
  while (uint64_t{c.workgroup} * c.rows * c.tokens * 4 > shared && c.workgroup > 8) c.workgroup /= 2;
  return c;
}

struct MatmatConfig {
  uint32_t workgroup, bm, bn, tm, tn;
};

MatmatConfig matmat_config(const Device& device) {
  const auto& o = g_overrides;
  const uint64_t shared = std::max<uint32_t>(device.info().max_shared_memory, 1024);
  auto fits = [&](const MatmatConfig& c) {
    return uint64_t{c.bm + c.bn} * kMatmatStride * 16 <= shared && c.workgroup <= device.info().max_workgroup_invocations;
  };
  if (o.matmat_bm && o.matmat_bn && o.matmat_tm && o.matmat_tn) {
    MatmatConfig c{(o.matmat_bm / o.matmat_tm) * (o.matmat_bn / o.matmat_tn), o.matmat_bm, o.matmat_bn, o.matmat_tm,
                   o.matmat_tn};
    if (fits(c)) return c;
  }
  // A (BM / TM) x (BN / TN) grid of invocations, as square as the workgroup size allows.
  const bool cpu = device.info().is_cpu();
  const uint32_t wg = op_workgroup_size(device, cpu ? 64 : 256);
  const uint32_t a = 1u << ((ceil_log2(wg) + 1) / 2);
  const uint32_t b = std::max<uint32_t>(wg / a, 1);
  MatmatConfig c{a * b, 0, 0, 0, 0};
  for (uint32_t t = 4; t >= 1; t /= 2) {
    c.tm = t;
    c.tn = t;
    c.bm = a * t;
    c.bn = b * t;
    if (fits(c)) break;
  }
  return c;
}

int64_t max_matvec_tokens(const Device& device, int64_t cols) {
  if (g_overrides.max_matvec_tokens > 0) return g_overrides.max_matvec_tokens;
  if (use_rowwise(device, cols)) return INT64_MAX;  // beats the shared-memory tiles at any n
  return device.info().is_cpu() ? 8 : 4;
}

// The token count that chooses a product's kernel: n, or 1 where every token must be computed
// as it would be alone.
int64_t kernel_tokens(int64_t n, TokenBatching batching) { return batching == TokenBatching::Invariant ? 1 : n; }

// Whether a product whose kernel is chosen for n tokens (kernel_tokens) runs the tiled matmat
// (else matvec).
bool uses_matmat(const Device& device, int64_t cols, int64_t n) {
  if (cols % kMatmatBk != 0) return false;
  if (g_overrides.path == MatmulOverrides::Path::Matvec) return false;
  if (g_overrides.path == MatmulOverrides::Path::Matmat) return true;
  return n > max_matvec_tokens(device, cols);
}

// x: the F32 rows, or the quantized rows when int8 (push.x_stride set to match). n rows (pairs)
// in the pipeline chosen for kernel_n.
Status dispatch_matvec(Device& device, Recorder& recorder, const WeightView& w, const WeightLayout& layout,
                       uint64_t w_bytes, BufferSpan x, uint64_t x_bytes, int64_t n, int64_t kernel_n, BufferSpan y,
                       uint64_t y_bytes, MatmulPush push, BufferSpan ids, uint64_t ids_bytes, bool experts, bool int8,
                       DispatchLabel label) {
  const char* op = experts ? "matmul_experts" : "matmul";
  const MatvecConfig cfg = matvec_config(device, layout, w.cols, kernel_n, experts);
  const uint32_t spec[] = {cfg.workgroup, cfg.rows, cfg.tokens};
  const std::string family = matvec_family(device, experts, cfg.rowwise, int8);
  auto kernel = device.kernel(shader_name(family.c_str(), w.type), experts ? 5 : 4, spec);
  if (!kernel) return kernel.status();
  const BufferSpan weights = first_bytes(w.span, w_bytes);
  auto grids = grid_binding(device, w.type, weights);
  if (!grids) return grids.status();
  const uint64_t rows_per_group = uint64_t{cfg.rows} * (cfg.rowwise ? cfg.workgroup : 1);
  auto grid = row_grid(device, (static_cast<uint64_t>(w.rows) + rows_per_group - 1) / rows_per_group, op);
  if (!grid) return grid.status();
  const uint64_t token_groups = (static_cast<uint64_t>(n) + cfg.tokens - 1) / cfg.tokens;
  for (uint64_t g0 = 0; g0 < token_groups; g0 += max_groups_y(device)) {
    const uint64_t gy = std::min<uint64_t>(max_groups_y(device), token_groups - g0);
    push.t_base = static_cast<uint32_t>(g0 * cfg.tokens);
    if (experts) {
      recorder.dispatch(**kernel, {weights, first_bytes(x, x_bytes), first_bytes(y, y_bytes), first_bytes(ids, ids_bytes), *grids},
                        push, grid->first, static_cast<uint32_t>(gy), grid->second, label);
    } else {
      recorder.dispatch(**kernel, {weights, first_bytes(x, x_bytes), first_bytes(y, y_bytes), *grids}, push, grid->first,
                        static_cast<uint32_t>(gy), grid->second, label);
    }
  }
  return Status::ok();
}

// The matvec of x (x_rows rows of w.cols values): int8 on its quantized rows when it has them
// and the type an integer form, else float on its F32 rows.
Status dispatch_matvec_of(Device& device, Recorder& recorder, const WeightView& w, const WeightLayout& layout,
                          uint64_t w_bytes, const MatmulInput& x, uint64_t x_rows, int64_t n, int64_t kernel_n,
                          BufferSpan y, uint64_t y_bytes, MatmulPush push, BufferSpan ids, uint64_t ids_bytes,
                          bool experts, DispatchLabel label) {
  const char* op = experts ? "matmul_experts" : "matmul";
  if (x.q8.buffer && int8_allowed(w.type)) {
    push.x_stride = static_cast<uint32_t>(q8_row_words(w.cols));
    const uint64_t q8_bytes = q8_activation_bytes(w.cols, static_cast<int64_t>(x_rows));
    INFERSCOPE_RETURN_IF_ERROR(check_span(device, x.q8, q8_bytes, op, "q8"));
    return dispatch_matvec(device, recorder, w, layout, w_bytes, x.q8, q8_bytes, n, kernel_n, y, y_bytes, push, ids,
                           ids_bytes, experts, true, label);
  }
  const uint64_t x_bytes = x_rows * static_cast<uint64_t>(w.cols) * 4;
  return dispatch_matvec(device, recorder, w, layout, w_bytes, x.x, x_bytes, n, kernel_n, y, y_bytes, push, ids,
                         ids_bytes, experts, false, label);
}

}  // namespace

std::optional<WeightLayout> weight_layout(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
      return WeightLayout{8, 16};
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
    case GgmlType::IQ4_NL:
    case GgmlType::IQ1_S:
    case GgmlType::IQ2_XXS:
    case GgmlType::IQ2_XS:
    case GgmlType::IQ2_S:
    case GgmlType::IQ3_XXS:
    case GgmlType::IQ3_S:
      return WeightLayout{32, 2};
    case GgmlType::MXFP4:
      return WeightLayout{32, 1};
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
    case GgmlType::IQ4_XS:
    case GgmlType::IQ1_M:
    case GgmlType::F16_2OF4:
      return WeightLayout{32, 4};
    case GgmlType::Q2_K:
      return WeightLayout{128, 4};
    case GgmlType::Q6_K:
      return WeightLayout{128, 2};
    case GgmlType::Q3_K:
    case GgmlType::TQ1_0:
    case GgmlType::TQ2_0:
      return WeightLayout{256, 2};
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
      return WeightLayout{64, 16};
    default:
      return std::nullopt;
  }
}

void set_matmul_overrides(const MatmulOverrides& overrides) { g_overrides = overrides; }

bool matmul_takes_q8(const Device& device, GgmlType type, int64_t cols, int64_t n, bool experts,
                     TokenBatching batching) {
  return int8_allowed(type) && (experts || !uses_matmat(device, cols, kernel_tokens(n, batching)));
}

Status record_matmul(Device& device, Recorder& recorder, const WeightView& w, const MatmulInput& x, int64_t n,
                     BufferSpan y, int64_t y_stride, int64_t y_col_offset, DispatchLabel label,
                     TokenBatching batching) {
  constexpr const char* kOp = "matmul";
  if (n < 0) return Status::error("matmul: negative token count");
  uint64_t w_bytes = 0;
  auto layout = check_weights(device, w, kOp, &w_bytes);
  if (!layout) return layout.status();
  if (n == 0 || w.rows == 0) return Status::ok();
  if (y_col_offset < 0 || y_stride < y_col_offset + w.rows) {
    return Status::error("matmul: y columns [" + std::to_string(y_col_offset) + ", " +
                         std::to_string(y_col_offset + w.rows) + ") do not fit y_stride " + std::to_string(y_stride));
  }
  const uint64_t x_bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(w.cols) * 4;
  const uint64_t y_bytes = (static_cast<uint64_t>(n - 1) * static_cast<uint64_t>(y_stride) +
                            static_cast<uint64_t>(y_col_offset + w.rows)) * 4;
  INFERSCOPE_RETURN_IF_ERROR(check_u32(x_bytes, kOp, "x bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(y_bytes, kOp, "y bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, x.x, x_bytes, kOp, "x"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, y, y_bytes, kOp, "y"));

  MatmulPush push{static_cast<uint32_t>(w.cols), static_cast<uint32_t>(w.rows), static_cast<uint32_t>(w.row_bytes),
                  w.byte_offset, static_cast<uint32_t>(n), static_cast<uint32_t>(w.cols),
                  static_cast<uint32_t>(y_stride), static_cast<uint32_t>(y_col_offset), 0, 0, 1, 0, 1};

  const int64_t kernel_n = kernel_tokens(n, batching);
  if (!uses_matmat(device, w.cols, kernel_n)) {
    return dispatch_matvec_of(device, recorder, w, *layout, w_bytes, x, static_cast<uint64_t>(n), n, kernel_n, y,
                              y_bytes, push, {}, 0, false, label);
  }

  const MatmatConfig cfg = matmat_config(device);
  const uint32_t spec[] = {cfg.workgroup, cfg.bm, cfg.bn, cfg.tm, cfg.tn};
  auto kernel = device.kernel(shader_name("matmat", w.type), 4, spec);
  if (!kernel) return kernel.status();
  const BufferSpan weights = first_bytes(w.span, w_bytes);
  auto grids = grid_binding(device, w.type, weights);
  if (!grids) return grids.status();
  auto grid = row_grid(device, (static_cast<uint64_t>(w.rows) + cfg.bm - 1) / cfg.bm, kOp);
  if (!grid) return grid.status();
  const uint64_t token_tiles = (static_cast<uint64_t>(n) + cfg.bn - 1) / cfg.bn;
  for (uint64_t g0 = 0; g0 < token_tiles; g0 += max_groups_y(device)) {
    const uint64_t gy = std::min<uint64_t>(max_groups_y(device), token_tiles - g0);
    push.t_base = static_cast<uint32_t>(g0 * cfg.bn);
    recorder.dispatch(**kernel, {weights, first_bytes(x.x, x_bytes), first_bytes(y, y_bytes), *grids}, push, grid->first,
                      static_cast<uint32_t>(gy), grid->second, label);
  }
  return Status::ok();
}

Status record_matmul_experts(Device& device, Recorder& recorder, const WeightView& w, const MatmulInput& x,
                             bool x_per_pair, BufferSpan ids, int64_t n_tokens, int64_t k_used, BufferSpan y,
                             DispatchLabel label) {
  constexpr const char* kOp = "matmul_experts";
  if (n_tokens < 0 || k_used < 0) return Status::error("matmul_experts: negative token or expert count");
  uint64_t w_bytes = 0;
  auto layout = check_weights(device, w, kOp, &w_bytes);
  if (!layout) return layout.status();
  if (w.n_mats > 1) INFERSCOPE_RETURN_IF_ERROR(check_u32(w.matrix_bytes, kOp, "matrix_bytes"));
  const int64_t pairs = n_tokens * k_used;
  if (pairs == 0 || w.rows == 0) return Status::ok();
  const uint64_t x_rows = static_cast<uint64_t>(x_per_pair ? pairs : n_tokens);
  const uint64_t x_bytes = x_rows * static_cast<uint64_t>(w.cols) * 4;
  const uint64_t y_bytes = static_cast<uint64_t>(pairs) * static_cast<uint64_t>(w.rows) * 4;
  const uint64_t ids_bytes = static_cast<uint64_t>(pairs) * 4;
  INFERSCOPE_RETURN_IF_ERROR(check_u32(x_bytes, kOp, "x bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(y_bytes, kOp, "y bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, x.x, x_bytes, kOp, "x"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, ids, ids_bytes, kOp, "ids"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, y, y_bytes, kOp, "y"));
  const MatmulPush push{static_cast<uint32_t>(w.cols),     static_cast<uint32_t>(w.rows),
                        static_cast<uint32_t>(w.row_bytes), w.byte_offset,
                        static_cast<uint32_t>(pairs),       static_cast<uint32_t>(w.cols),
                        static_cast<uint32_t>(w.rows),      0,
                        0,                                  static_cast<uint32_t>(w.matrix_bytes),
                        static_cast<uint32_t>(k_used),      x_per_pair ? 1u : 0u,
                        static_cast<uint32_t>(w.n_mats)};
  return dispatch_matvec_of(device, recorder, w, *layout, w_bytes, x, x_rows, pairs, pairs, y, y_bytes, push, ids,
                            ids_bytes, true, label);
}

Status record_get_rows(Device& device, Recorder& recorder, const WeightView& table, BufferSpan ids, int64_t n,
                       float scale, BufferSpan out, OutsideIds outside, DispatchLabel label) {
  constexpr const char* kOp = "get_rows";
  if (n < 0) return Status::error("get_rows: negative row count");
  uint64_t w_bytes = 0;
  auto layout = check_weights(device, table, kOp, &w_bytes);
  if (!layout) return layout.status();
  if (n == 0) return Status::ok();
  const uint64_t out_bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(table.cols) * 4;
  INFERSCOPE_RETURN_IF_ERROR(check_u32(out_bytes, kOp, "out bytes"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, ids, static_cast<uint64_t>(n) * 4, kOp, "ids"));
  INFERSCOPE_RETURN_IF_ERROR(check_span(device, out, out_bytes, kOp, "out"));
  // One workgroup per row; the invocations take the row's chunks.
  const uint64_t chunks = static_cast<uint64_t>(table.cols / layout->chunk);
  const uint32_t preferred = device.info().is_cpu() ? 8u : static_cast<uint32_t>(std::clamp<uint64_t>(chunks, 32, 256));
  const uint32_t spec[] = {op_workgroup_size(device, preferred)};
  auto kernel = device.kernel(shader_name("get_rows", table.type), 4, spec);
  if (!kernel) return kernel.status();
  const BufferSpan weights = first_bytes(table.span, w_bytes);
  auto grids = grid_binding(device, table.type, weights);
  if (!grids) return grids.status();
  auto grid = row_grid(device, static_cast<uint64_t>(n), kOp);
  if (!grid) return grid.status();
  const GetRowsPush push{static_cast<uint32_t>(table.cols), static_cast<uint32_t>(table.row_bytes), table.byte_offset,
                         static_cast<uint32_t>(n),          static_cast<uint32_t>(table.cols),      static_cast<uint32_t>(table.rows),
                         scale, outside == OutsideIds::Keep ? 1u : 0u};
  recorder.dispatch(**kernel, {weights, first_bytes(ids, n * 4), first_bytes(out, out_bytes), *grids}, push,
                    grid->first, 1, grid->second, label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
