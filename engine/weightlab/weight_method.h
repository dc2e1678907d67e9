// The weight lab's methods and the one entry point that prepares any of them for a conversion
// (quantize_model.h): plain rounding (rtn, optionally weighted by an importance matrix file),
// imatrix (rtn weighted by an importance matrix of the calibration text, computed on the spot),
// GPTQ, AWQ, the ternary rule, and pruning (magnitude, Wanda, 2:4; pruning.h) before the target
// type's own rounding. The calibrated methods first read a calibration text through the model as
// stored.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/quant_mix.h"
#include "engine/model/quantize_model.h"
#include "engine/weightlab/awq.h"
#include "engine/weightlab/calibration.h"
#include "engine/weightlab/gptq.h"

namespace inferscope {

enum class WeightMethod { Rtn, Gptq, Awq, Ternary, Magnitude, Wanda, TwoFour, LlmInt8, Imatrix };

// "rtn", "gptq", "awq", "ternary", "magnitude", "wanda", "2:4", "llm-int8", "imatrix" (any
// case); nullopt when unknown.
std::optional<WeightMethod> weight_method_from_name(std::string_view name);
const char* weight_method_name(WeightMethod method);
bool is_calibrated(WeightMethod method);  // gptq, awq, wanda, 2:4, imatrix
bool is_pruning(WeightMethod method);     // magnitude, wanda, 2:4

struct WeightLabOptions {
  WeightMethod method = WeightMethod::Rtn;
  std::string calibration_text;  // the calibrated methods; empty: default_calibration_text()
  CalibrationOptions calibration;  // imatrix: chunks of seq_len tokens, max_tokens of the text
  GptqOptions gptq;
  AwqOptions awq;
  bool ternary_per_block = false;  // ternary: the rule per 256-block instead of per row
  double sparsity = 0.5;           // magnitude, wanda: the fraction of each row set to 0
  float llm_int8_threshold = 6.0f; // llm-int8: feature magnitude above which a column is an outlier
  // rtn: an importance matrix file (imatrix_file.h) weighing the rounding of the types that take
  // one (kernels::takes_importance: the K-quants, IQ4_NL, IQ4_XS); empty: unweighted.
  std::string imatrix_path;
  int n_threads = 1;
};

// What a prepared method found, for the report.
struct WeightLabSummary {
  int64_t calibration_tokens = 0;
  std::vector<std::string> notes;  // per group or tensor: AWQ's alpha and errors, GPTQ's fallbacks
};

struct PreparedMethod {
  std::shared_ptr<const TensorRewriter> rewriter;  // nullptr for rtn
  // Filled as the method runs (GPTQ's fallbacks are known once the file is written).
  std::function<WeightLabSummary()> summary;
};

// Prepares options.method for converting `file` to `mix`: reads the calibration (gptq, awq)
// and searches AWQ's scales, reads rtn's importance matrix, or computes imatrix's. Fails when
// the calibration cannot run, the importance matrix cannot be read or is another model's, or
// when the method cannot apply to the mix (ternary needs tq1_0 or tq2_0; gptq a type it can
// place: q8_0, q4_0, q4_1, iq4_nl, iq4_xs, q3_k, q4_k, q5_k, or their mixes; an importance
// matrix a type that takes one).
Result<PreparedMethod> prepare_weight_method(std::shared_ptr<const gguf::File> file, const QuantMix& mix,
                                             const WeightLabOptions& options);

// The calibration activations of the model in `file` as stored (options.calibration_text or the
// shipped text, options.calibration, options.n_threads).
Result<Calibration> read_calibration(std::shared_ptr<const gguf::File> file, const WeightLabOptions& options);

// The text shipped for calibration, and a distinct one for the held-out evaluation.
const std::string& default_calibration_text();
const std::string& default_eval_text();

}  // namespace inferscope
