#include "engine/compare/comparison_json.h"

#include <nlohmann/json.hpp>

namespace inferscope {
namespace {

using nlohmann::json;

json spread_json(const Spread& s) { return {{"min", s.min}, {"max", s.max}, {"samples", s.samples}}; }

Spread spread_from(const json& j, double median) {
  Spread s = Spread::of(j.value("samples", std::vector<double>{}));
  s.median = median;
  return s;
}

// A figure that may be missing (quality of a configuration that did not compare).
json number_or_null(bool present, double v) { return present ? json(v) : json(nullptr); }
double number_from(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

json memory_json(const MemoryUsage& m) {
  return {{"weights_bytes", m.weights_bytes},
          {"device_weights_bytes", m.device_weights_bytes},
          {"kv_cache_bytes", m.kv_cache_bytes},
          {"scratch_bytes", m.scratch_bytes},
          {"total_bytes", m.weights_bytes + m.device_weights_bytes + m.kv_cache_bytes + m.scratch_bytes}};
}

json config_result_json(const ConfigResult& r) {
  const QualityFigures& q = r.quality;
  const bool has_q = r.quality_comparable;
  const bool has_ppl = has_q && q.perplexity_positions > 0;
  json j = {{"label", r.config.label},
            {"config", compare_config_text(r.config)},
            {"ran", r.ran},
            {"refusal", r.refusal},
            {"backend", r.backend_name},
            {"model", r.model_name},
            {"load_ms", r.load_ms},
            {"prefill_tokens_per_s", r.prefill_tokens_per_s.median},
            {"decode_tokens_per_s", r.decode_tokens_per_s.median},
            {"ttft_ms", r.ttft_ms.median},
            {"prefill_tokens_per_s_spread", spread_json(r.prefill_tokens_per_s)},
            {"decode_tokens_per_s_spread", spread_json(r.decode_tokens_per_s)},
            {"ttft_ms_spread", spread_json(r.ttft_ms)},
            {"memory", memory_json(r.memory)},
            {"predicted_memory",
             {{"weights_bytes", r.predicted.weights_bytes},
              {"kv_cache_bytes", r.predicted.kv_cache_bytes},
              {"scratch_bytes", r.predicted.scratch_bytes},
              {"total_bytes", r.predicted.total_bytes()}}},
            {"kv_bytes_used", r.kv_bytes_used},
            {"prompt_tokens", r.prompt_tokens},
            {"reused_tokens", r.reused_tokens},
            {"replies", r.replies},
            {"reply_tokens", r.reply_token_counts},
            {"mean_kl", number_or_null(has_q, q.mean_kl)},
            {"top1_agreement", number_or_null(has_q, q.top1_agreement)},
            {"max_kl", number_or_null(has_q, q.max_kl)},
            {"perplexity", number_or_null(has_ppl, q.perplexity)},
            {"max_kl_at", {{"sequence", q.worst.sequence}, {"position", q.worst.position}, {"token", r.worst_token_text}}},
            {"quality_positions", q.positions},
            {"perplexity_positions", q.perplexity_positions},
            {"kl_per_position", q.kl_per_position},
            {"quality_note", r.quality_note}};
  return j;
}

Result<ConfigResult> config_result_from(const json& j) {
  ConfigResult r;
  auto config = parse_compare_config(j.value("config", std::string("defaults")) == "defaults"
                                         ? std::string()
                                         : j.value("config", std::string()));
  if (!config) return config.status();
  r.config = *config;
  r.config.label = j.value("label", std::string());
  r.ran = j.value("ran", false);
  r.refusal = j.value("refusal", std::string());
  r.backend_name = j.value("backend", std::string());
  r.model_name = j.value("model", std::string());
  r.load_ms = number_from(j, "load_ms");
  r.prefill_tokens_per_s = spread_from(j.value("prefill_tokens_per_s_spread", json::object()), number_from(j, "prefill_tokens_per_s"));
  r.decode_tokens_per_s = spread_from(j.value("decode_tokens_per_s_spread", json::object()), number_from(j, "decode_tokens_per_s"));
  r.ttft_ms = spread_from(j.value("ttft_ms_spread", json::object()), number_from(j, "ttft_ms"));
  const json m = j.value("memory", json::object());
  r.memory.weights_bytes = m.value("weights_bytes", uint64_t{0});
  r.memory.device_weights_bytes = m.value("device_weights_bytes", uint64_t{0});
  r.memory.kv_cache_bytes = m.value("kv_cache_bytes", uint64_t{0});
  r.memory.scratch_bytes = m.value("scratch_bytes", uint64_t{0});
  const json p = j.value("predicted_memory", json::object());
  r.predicted.weights_bytes = p.value("weights_bytes", uint64_t{0});
  r.predicted.kv_cache_bytes = p.value("kv_cache_bytes", uint64_t{0});
  r.predicted.scratch_bytes = p.value("scratch_bytes", uint64_t{0});
  r.kv_bytes_used = j.value("kv_bytes_used", uint64_t{0});
  r.prompt_tokens = j.value("prompt_tokens", int64_t{0});
  r.reused_tokens = j.value("reused_tokens", int64_t{0});
  r.replies = j.value("replies", std::vector<std::string>{});
  r.reply_token_counts = j.value("reply_tokens", std::vector<int32_t>{});
  r.quality_comparable = j.contains("mean_kl") && j["mean_kl"].is_number();
  r.quality.mean_kl = number_from(j, "mean_kl");
  r.quality.top1_agreement = number_from(j, "top1_agreement");
  r.quality.max_kl = number_from(j, "max_kl");
  r.quality.perplexity = number_from(j, "perplexity");
  const json at = j.value("max_kl_at", json::object());
  r.quality.worst.sequence = at.value("sequence", -1);
  r.quality.worst.position = at.value("position", int64_t{-1});
  r.quality.worst.kl = r.quality.max_kl;
  r.worst_token_text = at.value("token", std::string());
  r.quality.positions = j.value("quality_positions", int64_t{0});
  r.quality.perplexity_positions = j.value("perplexity_positions", int64_t{0});
  r.quality.kl_per_position = j.value("kl_per_position", std::vector<float>{});
  r.quality_note = j.value("quality_note", std::string());
  return r;
}

json options_json(const ComparisonOptions& o) {
  json configs = json::array();
  for (const CompareConfig& c : o.configs) configs.push_back({{"label", c.label}, {"config", compare_config_text(c)}});
  return {{"default_model", o.default_model},
          {"prompts", o.prompts},
          {"quality_text", o.quality_text},
          {"reps", o.reps},
          {"max_tokens", o.max_tokens},
          {"chat", o.chat},
          {"sampling", {{"temperature", o.sampling.temperature}, {"seed", o.sampling.seed}}},
          {"requested", configs}};
}

json results_json(const ComparisonResult& r) {
  json list = json::array();
  for (const ConfigResult& c : r.configs) list.push_back(config_result_json(c));
  return {{"cancelled", r.cancelled}, {"configurations", list}};
}

Result<ComparisonResult> from_objects(const json& options, const json& results) {
  if (!options.is_object() || !results.is_object() || !results.contains("configurations") ||
      !results["configurations"].is_array()) {
    return Status::error("not a comparison: no configurations");
  }
  ComparisonResult r;
  try {
    ComparisonOptions& o = r.options;
    o.default_model = options.value("default_model", std::string());
    o.prompts = options.value("prompts", std::vector<std::string>{});
    o.quality_text = options.value("quality_text", std::string());
    o.reps = options.value("reps", 1);
    o.max_tokens = options.value("max_tokens", 64);
    o.chat = options.value("chat", false);
    const json s = options.value("sampling", json::object());
    o.sampling.temperature = s.value("temperature", 0.0f);
    o.sampling.seed = s.value("seed", SamplingParams::kRandomSeed);
    r.cancelled = results.value("cancelled", false);
    for (const json& c : results["configurations"]) {
      auto config = config_result_from(c);
      if (!config) return config.status();
      o.configs.push_back(config->config);
      r.configs.push_back(std::move(*config));
    }
  } catch (const json::exception& e) {
    return Status::error(std::string("not a comparison: ") + e.what());
  }
  return r;
}

}  // namespace

std::string comparison_json(const ComparisonResult& result, int indent) {
  json j = options_json(result.options);
  j.update(results_json(result));
  return j.dump(indent);
}

Result<ComparisonResult> comparison_from_json(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return Status::error("not a comparison: the text is not JSON");
  return from_objects(j, j);
}

ComparisonJsonParts comparison_json_parts(const ComparisonResult& result) {
  return {options_json(result.options).dump(), results_json(result).dump()};
}

Result<ComparisonResult> comparison_from_json_parts(std::string_view config_json, std::string_view metrics_json) {
  const json options = json::parse(config_json, nullptr, false);
  const json results = json::parse(metrics_json, nullptr, false);
  if (options.is_discarded() || results.is_discarded()) return Status::error("not a comparison: the text is not JSON");
  return from_objects(options, results);
}

}  // namespace inferscope
