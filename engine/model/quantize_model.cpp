#include "engine/model/quantize_model.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/int8_rows.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

using kernels::GgmlType;

// Rows converted per write: enough to keep every thread busy, small enough for any model.
constexpr int64_t kSlabBytes = 8 << 20;

bool is_block_type(GgmlType t) { return kernels::type_info(t).block_size > 1; }

// Decodes `rows` rows of `t` from first_row into out ([rows][cols] F32), split over the pool.
bool decode_rows(const gguf::TensorInfo& t, int64_t first_row, int64_t rows, float* out, ThreadPool& pool) {
  const int64_t cols = t.ne[0];
  std::vector<int> failed(static_cast<size_t>(pool.size()), 0);
  pool.run([&](int ith, int nth) {
    for (int64_t r = ith; r < rows; r += nth) {
      if (!kernels::dequantize_row(t.type, t.data + (first_row + r) * t.row_bytes, out + r * cols, cols)) {
        failed[static_cast<size_t>(ith)] = 1;
      }
    }
  });
  return std::none_of(failed.begin(), failed.end(), [](int f) { return f != 0; });
}

// Encodes rows [rows][cols] of F32 as `to`, split over the pool.
bool encode_rows(const float* in, GgmlType to, int64_t rows, int64_t cols, uint8_t* out, ThreadPool& pool) {
  const int64_t out_row_bytes = kernels::row_bytes(to, cols);
  std::vector<int> failed(static_cast<size_t>(pool.size()), 0);
  pool.run([&](int ith, int nth) {
    for (int64_t r = ith; r < rows; r += nth) {
      if (!kernels::quantize_row(to, in + r * cols, out + r * out_row_bytes, cols)) failed[static_cast<size_t>(ith)] = 1;
    }
  });
  return std::none_of(failed.begin(), failed.end(), [](int f) { return f != 0; });
}

// Decodes `rows` rows of `t`, lets the rewriter change and encode them, and encodes the rest
// as `to`. Returns false when a row cannot be decoded or encoded (never expected after planning).
bool convert_rows(const gguf::TensorInfo& t, GgmlType to, int64_t first_row, int64_t rows, std::vector<float>& floats,
                  uint8_t* out, ThreadPool& pool, const TensorRewriter* rewriter) {
  const int64_t cols = t.ne[0];
  if (!decode_rows(t, first_row, rows, floats.data(), pool)) return false;
  if (rewriter) {
    rewriter->transform_rows(t.name, first_row, floats.data(), rows, cols);
    if (rewriter->encode_rows(t.name, to, floats.data(), rows, cols, out, pool)) return true;
  }
  return encode_rows(floats.data(), to, rows, cols, out, pool);
}

// Drops the whole pages of a converted input tensor from this process's resident set. The input
// is a read-only file mapping (gguf::File::open), so the pages stay in the page cache and would
// simply be read again; without this, RSS grows to the size of the input model.
void release_input_pages(const uint8_t* data, uint64_t n_bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + n_bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// INT8 per channel (int8_rows.h): the I8 rows of `t` (part == Values) or their per-row scales
// (part == Scales), each from the decoded (and rewritten) rows, a slab at a time.
enum class Int8Part { Values, Scales };

gguf::TensorSource int8_tensor(const gguf::TensorInfo& t, Int8Part part, std::shared_ptr<ThreadPool> pool,
                               std::shared_ptr<const gguf::File> keep_alive,
                               std::shared_ptr<const TensorRewriter> rewriter) {
  return [&t, part, pool, keep_alive, rewriter](gguf::ByteSink& out) -> Status {
    const int64_t cols = t.ne[0];
    const int64_t rows = static_cast<int64_t>(t.n_elements) / cols;
    const int64_t slab_rows = std::max<int64_t>(1, kSlabBytes / std::max<int64_t>(1, cols * 4));
    std::vector<float> floats(static_cast<size_t>(std::min(rows, slab_rows) * cols));
    std::vector<int8_t> q(static_cast<size_t>(std::min(rows, slab_rows) * cols));
    std::vector<float> scales(static_cast<size_t>(std::min(rows, slab_rows)));
    for (int64_t r = 0; r < rows; r += slab_rows) {
      const int64_t n = std::min(slab_rows, rows - r);
      if (!decode_rows(t, r, n, floats.data(), *pool)) return Status::error("tensor " + t.name + ": cannot decode");
      if (rewriter) rewriter->transform_rows(t.name, r, floats.data(), n, cols);
      pool->run([&](int ith, int nth) {
        for (int64_t i = ith; i < n; i += nth) {
          scales[static_cast<size_t>(i)] = kernels::quantize_row_i8(floats.data() + i * cols, q.data() + i * cols, cols);
        }
      });
      const Status st = part == Int8Part::Values ? out.write(q.data(), static_cast<size_t>(n * cols))
                                                 : out.write(scales.data(), static_cast<size_t>(n) * sizeof(float));
      INFERSCOPE_RETURN_IF_ERROR(st);
    }
    return Status::ok();
  };
}

gguf::TensorSource converted_tensor(const gguf::TensorInfo& t, GgmlType to, std::shared_ptr<ThreadPool> pool,
                                    std::shared_ptr<const gguf::File> keep_alive,
                                    std::shared_ptr<const TensorRewriter> rewriter) {
  return [&t, to, pool, keep_alive, rewriter](gguf::ByteSink& out) -> Status {
    const int64_t cols = t.ne[0];
    const int64_t rows = static_cast<int64_t>(t.n_elements) / cols;
    const int64_t out_row_bytes = kernels::row_bytes(to, cols);
    const int64_t slab_rows = std::max<int64_t>(1, kSlabBytes / std::max<int64_t>(1, cols * 4));
    std::vector<uint8_t> slab(static_cast<size_t>(std::min(rows, slab_rows) * out_row_bytes));
    std::vector<float> floats(static_cast<size_t>(std::min(rows, slab_rows) * cols));
    for (int64_t r = 0; r < rows; r += slab_rows) {
      const int64_t n = std::min(slab_rows, rows - r);
      if (!convert_rows(t, to, r, n, floats, slab.data(), *pool, rewriter.get())) {
        return Status::error("tensor " + t.name + ": cannot convert " + kernels::type_name(t.type) + " to " +
                             kernels::type_name(to));
      }
      INFERSCOPE_RETURN_IF_ERROR(out.write(slab.data(), static_cast<size_t>(n * out_row_bytes)));
    }
    release_input_pages(t.data, t.n_bytes);
    return Status::ok();
  };
}

}  // namespace

Result<QuantizePlan> plan_quantization(const gguf::File& file, const QuantMix& mix, const TensorRewriter* rewriter) {
  const QuantModelInfo info = QuantModelInfo::from_gguf(file);
  QuantizePlan plan;
  for (const gguf::TensorInfo& t : file.tensors()) {
    const kernels::GgmlType to = choose_tensor_type(mix, info, t.name, t.n_dims, t.ne[0], t.type);
    TensorPlan p{t.name, t.shape_string(), t.type, to, t.n_bytes, t.n_bytes, false, false};
    p.rewritten = p.to == p.from && rewriter && rewriter->changes_values(t.name);
    if (p.to != p.from || p.rewritten) {
      if (!kernels::type_info(t.type).decodable) {
        return Result<QuantizePlan>::error(file.error_prefix() + "tensor " + t.name + " has type " +
                                           kernels::type_name(t.type) + ", which cannot be decoded");
      }
      const int64_t rows = static_cast<int64_t>(t.n_elements) / t.ne[0];
      p.bytes_after = static_cast<uint64_t>(kernels::row_bytes(p.to, t.ne[0]) * rows);
      if (p.to == kernels::GgmlType::I8) p.bytes_after += static_cast<uint64_t>(rows) * sizeof(float);  // the scales
      p.requantized = is_block_type(t.type);
    }
    plan.tensors.push_back(std::move(p));
  }
  return plan;
}

uint64_t QuantizePlan::bytes_before() const {
  uint64_t sum = 0;
  for (const TensorPlan& t : tensors) sum += t.bytes_before;
  return sum;
}

uint64_t QuantizePlan::bytes_after() const {
  uint64_t sum = 0;
  for (const TensorPlan& t : tensors) sum += t.bytes_after;
  return sum;
}

Result<QuantizedGguf> quantized_gguf(std::shared_ptr<const gguf::File> in, const QuantizeOptions& options,
                                     const std::function<void(double)>& on_progress) {
  auto plan = plan_quantization(*in, options.mix, options.rewriter.get());
  if (!plan) return plan.status();
  QuantizedGguf out;
  out.plan = std::move(*plan);
  gguf::Writer& w = out.writer;
  w.copy_metadata(*in, "");
  w.add_u32("general.file_type", options.mix.file_type);
  // llama-quantize's marker of the block formats' version (2 since the 2023 Q4/Q5/Q8 change).
  if (is_block_type(options.mix.base)) w.add_u32("general.quantization_version", 2);
  if (options.rewriter) options.rewriter->add_metadata(w);
  auto pool = std::make_shared<ThreadPool>(std::max(1, options.n_threads));
  const double total = static_cast<double>(std::max<uint64_t>(1, out.plan.bytes_after()));
  auto done = std::make_shared<uint64_t>(0);
  for (size_t i = 0; i < in->tensors().size(); ++i) {
    const gguf::TensorInfo& t = in->tensors()[i];
    const TensorPlan& p = out.plan.tensors[i];
    if (p.to == p.from && !p.rewritten) {
      w.add_tensor_copy(in, t);
      *done += p.bytes_after;
      continue;
    }
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    if (p.to == kernels::GgmlType::I8) {
      w.add_tensor_source(t.name, ne, p.to, int8_tensor(t, Int8Part::Values, pool, in, options.rewriter));
      std::vector<int64_t> scale_ne(ne.begin() + 1, ne.end());
      const uint64_t bytes = p.bytes_after;
      gguf::TensorSource scales = int8_tensor(t, Int8Part::Scales, pool, in, options.rewriter);
      w.add_tensor_source(t.name + ".scale", scale_ne, kernels::GgmlType::F32,
                          [scales, on_progress, done, bytes, total](gguf::ByteSink& sink) {
                            INFERSCOPE_RETURN_IF_ERROR(scales(sink));
                            *done += bytes;
                            if (on_progress) on_progress(static_cast<double>(*done) / total);
                            return Status::ok();
                          });
      continue;
    }
    gguf::TensorSource convert = converted_tensor(t, p.to, pool, in, options.rewriter);
    const uint64_t bytes = p.bytes_after;
    w.add_tensor_source(t.name, ne, p.to, [convert, on_progress, done, bytes, total](gguf::ByteSink& sink) {
      INFERSCOPE_RETURN_IF_ERROR(convert(sink));
      *done += bytes;
      if (on_progress) on_progress(static_cast<double>(*done) / total);
      return Status::ok();
    });
  }
  return out;
}

Status quantize_model(const std::string& input_path, const std::string& output_path, const QuantizeOptions& options,
                      const std::function<void(const QuantizePlan&)>& on_plan) {
  auto file = gguf::File::open(input_path);
  if (!file) return file.status();
  auto converted = quantized_gguf(*file, options);
  if (!converted) return converted.status();
  if (on_plan) on_plan(converted->plan);
  return converted->writer.write(output_path);
}

}  // namespace inferscope
