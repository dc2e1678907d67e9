// A weight recipe: a mix (quant_mix.h) and the method that fills it (weight_method.h), written
// "q4_k_m" (plain rounding) or "q4_k_m+imatrix", "q4_0+gptq", "q4_k_m+awq", "tq2_0+ternary", "f16+wanda" (pruned
// to 50%, then stored as F16), "q8_0+2:4"; or "heads:N", the model as stored less N KV groups
// (a K/V head and its query heads) per layer (head_pruning.h). What the app's
// weight-format toggle and `compare`'s weights= name, applied on load in memory (no file), or
// written to a file (the app's "Save Model As").
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/model/quant_mix.h"
#include "engine/weightlab/weight_method.h"

namespace inferscope {

struct WeightRecipe {
  QuantMix mix;
  WeightMethod method = WeightMethod::Rtn;
  int kv_groups_removed = 0;  // "heads:N": the mix and method are unused

  std::string text() const;   // the canonical form: "q4_0", "q4_0+gptq"
  std::string label() const;  // for menus: "Q4_0", "Q4_0 · GPTQ"
};

// Fails naming the known mixes and methods, or when the method cannot fill the mix.
Result<WeightRecipe> parse_weight_recipe(std::string_view text);

// The recipes the app offers beyond kRequantizeTargets' plain mixes.
inline constexpr const char* kWeightLabRecipes[] = {
    "q4_0+gptq",     "q4_0+awq",   "q4_k_m+imatrix", "q4_k_m+gptq",   "q4_k_m+awq", "iq4_xs+imatrix",
    "q3_k_m+gptq",   "tq2_0+ternary", "f16+magnitude", "f16+wanda",   "f16_2of4+2:4", "int8+llm-int8", "heads:1"};

// `path` as stored when `weights` is empty, else converted on load by the recipe (calibrated
// methods read the shipped calibration text through the model as stored first).
Result<std::shared_ptr<const Model>> load_model_as(const std::string& path, const std::string& weights,
                                                   const ModelLoadOptions& options, int n_threads);

// `source` converted by the recipe `weights`, written to `output`.
Status save_model_as(const std::string& source, const std::string& weights, const std::string& output, int n_threads);

}  // namespace inferscope
