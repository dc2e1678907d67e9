// Converts a GGUF model to another weight mix (quant_mix.h), streaming tensor by tensor: each
// tensor is decoded and re-encoded a slab of rows at a time while the output file is written,
// so neither model is ever held in memory. Metadata is copied unchanged except general.file_type.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/quant_mix.h"
#include "kernels/formats/ggml_type.h"

namespace inferscope {

class ThreadPool;

// A weight-lab method's hook into the conversion (engine/weightlab): it may change a tensor's
// values before they are encoded (AWQ's folded scales) and encode rows itself (GPTQ). Called
// for a slab of rows at a time, on the converting thread.
class TensorRewriter {
 public:
  virtual ~TensorRewriter() = default;
  // Tensors whose values change even where their type stays (the norms AWQ divides).
  virtual bool changes_values(const std::string& name) const = 0;
  // Rows [first_row, first_row + n) of tensor `name`, decoded to F32 ([n][cols]), changed in place.
  virtual void transform_rows(const std::string& name, int64_t first_row, float* rows, int64_t n,
                              int64_t cols) const = 0;
  // Encodes the n rows as `to` into out (row_bytes(to, cols) each; rows may be overwritten), the
  // work split over `pool` by the rewriter; false: the type's own encoder is used.
  virtual bool encode_rows(const std::string& name, kernels::GgmlType to, float* rows, int64_t n, int64_t cols,
                           uint8_t* out, ThreadPool& pool) const = 0;
  // Metadata naming the method (inferscope.weightlab.*).
  virtual void add_metadata(gguf::Writer& writer) const = 0;
};

struct TensorPlan {
  std::string name;
  std::string shape;              // "[512, 1024]"
  kernels::GgmlType from = kernels::GgmlType::F32;
  kernels::GgmlType to = kernels::GgmlType::F32;
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  bool requantized = false;       // `from` was already a quantized block type (quality loss)
  bool rewritten = false;         // converted though the type stays: a rewriter changes its values
};

struct QuantizePlan {
  std::vector<TensorPlan> tensors;
  uint64_t bytes_before() const;
  uint64_t bytes_after() const;
};

struct QuantizeOptions {
  QuantMix mix;
  int n_threads = 1;
  std::shared_ptr<const TensorRewriter> rewriter;  // optional: a weight-lab method
};

// Every tensor's type in `mix` and the bytes before and after; fails for a tensor whose type
// cannot be decoded.
Result<QuantizePlan> plan_quantization(const gguf::File& file, const QuantMix& mix,
                                       const TensorRewriter* rewriter = nullptr);

// `in` converted to options.mix, ready to be written: the metadata copied (general.file_type set),
// each tensor converted while the writer writes it. on_progress (optional) sees the fraction of
// the output's tensor bytes written so far. Fails like quantize_model before anything is written.
struct QuantizedGguf {
  gguf::Writer writer;
  QuantizePlan plan;
};
Result<QuantizedGguf> quantized_gguf(std::shared_ptr<const gguf::File> in, const QuantizeOptions& options,
                                     const std::function<void(double)>& on_progress = {});

// Decides every tensor's type; fails for tensors whose type cannot be decoded or whose rows fit
// no allowed type. `on_plan` (optional) sees the plan before any byte is written.
Status quantize_model(const std::string& input_path, const std::string& output_path, const QuantizeOptions& options,
                      const std::function<void(const QuantizePlan&)>& on_plan = {});

}  // namespace inferscope
