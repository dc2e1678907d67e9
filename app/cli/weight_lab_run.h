// The part quantize and prune share: convert a model file by a weight-lab method (weight_method.h),
// show the plan and a progress bar, write the file, then the quality report against the source.
#pragma once

#include <string>

#include "engine/model/quant_mix.h"
#include "engine/weightlab/weight_method.h"

namespace inferscope::cli {

struct WeightLabRun {
  std::string model, output;
  QuantMix mix;
  WeightLabOptions lab;
  std::string eval_text;  // empty: the shipped evaluation text
  bool json = false;      // the report as JSON on stdout (the plan goes to stderr)
  bool report = true;
};

// Returns the exit code.
int run_weight_lab(const WeightLabRun& run);

// The quality report of run.output against run.model (unless !run.report); the exit code.
int report_quality(const WeightLabRun& run);

}  // namespace inferscope::cli
