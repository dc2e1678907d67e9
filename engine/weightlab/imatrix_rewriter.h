// quantize --imatrix: the rows of every matrix the importance matrix has an entry for are encoded
// with its columns' means as weights (kernels::quantize_row's importance), for the types whose
// encoders take them (kernels::takes_importance: the K-quants, IQ4_NL, IQ4_XS); other types and tensors
// without an entry are encoded plainly. An entry of several matrices (a MoE tensor's experts) is
// applied as one: the count-weighted mean over its experts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/model/quantize_model.h"
#include "engine/weightlab/imatrix.h"

namespace inferscope {

class ImatrixRewriter : public TensorRewriter {
 public:
  // Fails when an entry names no tensor of `model` or has another column count (an importance
  // matrix of another model).
  static Result<std::shared_ptr<ImatrixRewriter>> create(const ImportanceMatrix& im, const gguf::File& model,
                                                         std::string file_name);

  bool changes_values(const std::string&) const override { return false; }
  void transform_rows(const std::string&, int64_t, float*, int64_t, int64_t) const override {}
  bool encode_rows(const std::string& name, kernels::GgmlType to, float* rows, int64_t n, int64_t cols, uint8_t* out,
                   ThreadPool& pool) const override;
  // llama-quantize's keys: quantize.imatrix.file, .dataset, .entries_count, .chunks_count.
  void add_metadata(gguf::Writer& writer) const override;

 private:
  std::map<std::string, std::vector<float>> weights_;  // by tensor: a weight per column
  std::string file_name_;
  std::string dataset_;
  int64_t chunks_ = 0;
};

}  // namespace inferscope
