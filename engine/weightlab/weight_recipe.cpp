#include "engine/weightlab/weight_recipe.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "engine/model/requantized_model.h"
#include "engine/weightlab/head_pruning.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// The recipe's method prepared for `file`.
Result<PreparedMethod> prepare(std::shared_ptr<const gguf::File> file, const WeightRecipe& recipe, int n_threads) {
  WeightLabOptions lab;
  lab.method = recipe.method;
  lab.n_threads = std::max(1, n_threads);
  return prepare_weight_method(std::move(file), recipe.mix, lab);
}

constexpr std::string_view kHeads = "heads:";

// The smaller model of a "heads:N" recipe, ready to be written.
Result<HeadPruning> pruned_heads(std::shared_ptr<const gguf::File> file, int kv_groups, int n_threads) {
  WeightLabOptions lab;
  lab.n_threads = std::max(1, n_threads);
  auto calibration = read_calibration(file, lab);
  if (!calibration) return calibration.status();
  const QuantModelInfo info = QuantModelInfo::from_gguf(*file);
  const int64_t group = info.n_head_kv > 0 ? info.n_head / info.n_head_kv : 1;
  return prune_heads(std::move(file), *calibration, static_cast<int>(kv_groups * group));
}

}  // namespace

std::string WeightRecipe::text() const {
  if (kv_groups_removed > 0) return std::string(kHeads) + std::to_string(kv_groups_removed);
  return method == WeightMethod::Rtn ? mix.name : mix.name + "+" + weight_method_name(method);
}

std::string WeightRecipe::label() const {
  if (kv_groups_removed > 0) return "Heads - " + std::to_string(kv_groups_removed) + " KV group";
  return method == WeightMethod::Rtn ? upper(mix.name) : upper(mix.name) + " · " + upper(weight_method_name(method));
}

Result<WeightRecipe> parse_weight_recipe(std::string_view text) {
  if (text.substr(0, kHeads.size()) == kHeads) {
    WeightRecipe r;
    const std::string_view n = text.substr(kHeads.size());
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), r.kv_groups_removed);
    if (ec != std::errc() || end != n.data() + n.size() || r.kv_groups_removed < 1) {
      return Result<WeightRecipe>::error(std::string(text) + ": heads:N needs N >= 1 (KV groups removed per layer)");
    }
    return r;
  }
  const size_t plus = text.find('+');
  const std::string_view mix_name = text.substr(0, plus);
  WeightRecipe r;
  const auto mix = quant_mix_from_name(mix_name);
  if (!mix) {
    return Result<WeightRecipe>::error("unknown weight format " + std::string(mix_name) + " (known: " +
                                       quant_mix_names() +
                                       ", each optionally +imatrix, +gptq, +awq, +ternary, +magnitude, +wanda, +2:4 "
                                       "or +llm-int8)");
  }
  r.mix = *mix;
  if (plus != std::string_view::npos) {
    const auto method = weight_method_from_name(text.substr(plus + 1));
    if (!method) {
      return Result<WeightRecipe>::error("unknown weight method " + std::string(text.substr(plus + 1)) +
                                         " (known: rtn, imatrix, gptq, awq, ternary, magnitude, wanda, 2:4, llm-int8)");
    }
    r.method = *method;
  }
  const bool ternary_mix = r.mix.base == kernels::GgmlType::TQ1_0 || r.mix.base == kernels::GgmlType::TQ2_0;
  if ((r.method == WeightMethod::Ternary) != ternary_mix && r.method != WeightMethod::Rtn) {
    return Result<WeightRecipe>::error(r.text() + ": the ternary method goes with tq1_0 or tq2_0, and only it");
  }
  if ((r.method == WeightMethod::LlmInt8) != (r.mix.base == kernels::GgmlType::I8) && r.method != WeightMethod::Rtn &&
      !is_pruning(r.method)) {
    return Result<WeightRecipe>::error(r.text() + ": llm-int8 goes with int8");
  }
  if (r.method == WeightMethod::Imatrix && !kernels::takes_importance(r.mix.base)) {
    return Result<WeightRecipe>::error(r.text() + ": an importance matrix weighs the K-quants, iq4_nl and iq4_xs");
  }
  if (r.method == WeightMethod::Gptq && !gptq_supports(r.mix.base)) {
    return Result<WeightRecipe>::error(r.text() +
                                       ": GPTQ places weights on q8_0, q4_0, q4_1, iq4_nl, iq4_xs, q3_k, q4_k or q5_k grids");
  }
  return r;
}

Result<std::shared_ptr<const Model>> load_model_as(const std::string& path, const std::string& weights,
                                                   const ModelLoadOptions& options, int n_threads) {
  if (weights.empty()) return Model::load(path, options);
  auto recipe = parse_weight_recipe(weights);
  if (!recipe) return recipe.status();
  if (recipe->kv_groups_removed > 0) {
    auto file = gguf::File::open(path);
    if (!file) return file.status();
    auto pruned = pruned_heads(*file, recipe->kv_groups_removed, n_threads);
    if (!pruned) return pruned.status();
    return load_written(pruned->writer, path + " less " + std::to_string(recipe->kv_groups_removed) + " KV group(s)",
                        options);
  }
  if (recipe->method == WeightMethod::Rtn) return load_requantized(path, recipe->mix, options, n_threads);
  if (options.on_progress) options.on_progress(0.0);
  auto file = gguf::File::open(path);
  if (!file) return file.status();
  auto method = prepare(*file, *recipe, n_threads);
  if (!method) return method.status();
  const QuantizeOptions qo{recipe->mix, std::max(1, n_threads), method->rewriter};
  return load_converted(*file, qo, requantized_name(path, recipe->mix, weight_method_name(recipe->method)), options);
}

Status save_model_as(const std::string& source, const std::string& weights, const std::string& output, int n_threads) {
  auto recipe = parse_weight_recipe(weights);
  if (!recipe) return recipe.status();
  auto file = gguf::File::open(source);
  if (!file) return file.status();
  if (recipe->kv_groups_removed > 0) {
    auto pruned = pruned_heads(*file, recipe->kv_groups_removed, n_threads);
    if (!pruned) return pruned.status();
    return pruned->writer.write(output);
  }
  auto method = prepare(*file, *recipe, n_threads);
  if (!method) return method.status();
  auto converted = quantized_gguf(*file, QuantizeOptions{recipe->mix, std::max(1, n_threads), method->rewriter});
  if (!converted) return converted.status();
  return converted->writer.write(output);
}

}  // namespace inferscope
