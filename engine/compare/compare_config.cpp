#include "engine/compare/compare_config.h"

#include <charconv>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/model/quant_mix.h"
#include "engine/weightlab/weight_recipe.h"

namespace inferscope {
namespace {

struct Item {
  std::string key;
  std::string value;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Result<std::vector<Item>> split_items(std::string_view text) {
  std::vector<Item> items;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::error("configuration item '" + std::string(item) + "' is not key=value");
    }
    items.push_back({std::string(trim(item.substr(0, eq))), std::string(trim(item.substr(eq + 1)))});
  }
  return items;
}

Result<std::vector<Item>> json_items(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error("configuration is not a JSON object");
  std::vector<Item> items;
  for (const auto& [key, value] : j.items()) {
    if (value.is_string()) items.push_back({key, value.get<std::string>()});
    else if (value.is_boolean()) items.push_back({key, value.get<bool>() ? "on" : "off"});
    else if (value.is_number_integer()) items.push_back({key, std::to_string(value.get<int64_t>())});
    else return Status::error("configuration key '" + key + "' must be a string, an integer or a boolean");
  }
  return items;
}

Result<int64_t> integer(const Item& item, int64_t min, int64_t max) {
  int64_t v = 0;
  const char* end = item.value.data() + item.value.size();
  const auto [ptr, ec] = std::from_chars(item.value.data(), end, v);
  if (ec != std::errc() || ptr != end || v < min || v > max) {
    return Status::error(item.key + "=" + item.value + ": expected an integer in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  }
  return v;
}

Result<bool> on_off(const Item& item) {
  for (const char* yes : {"on", "true", "1", "yes"}) {
    if (item.value == yes) return true;
  }
  for (const char* no : {"off", "false", "0", "no"}) {
    if (item.value == no) return false;
  }
  return Status::error(item.key + "=" + item.value + ": expected on or off");
}

Status apply_backend(const Item& item, CompareConfig& c) {
  const size_t colon = item.value.find(':');
  const std::string name = item.value.substr(0, colon);
  if (!is_backend_name(name)) {
    std::string known;
    for (const std::string& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
    return Status::error("backend=" + item.value + ": unknown backend (available: " + known + ")");
  }
  c.backend.backend = name;
  if (colon != std::string::npos) {
    auto device = integer({item.key, item.value.substr(colon + 1)}, 0, 1024);
    if (!device) return device.status();
    c.backend.device = static_cast<int>(*device);
  }
  return Status::ok();
}

Status apply(const Item& item, CompareConfig& c) {
  const std::string& k = item.key;
  if (k == "label") c.label = item.value;
  else if (k == "model") c.model_path = item.value;
  else if (k == "weights") {
    auto recipe = parse_weight_recipe(item.value);
    if (!recipe) return Status::error("weights=" + item.value + ": " + recipe.message());
    c.weights = recipe->text();
  } else if (k == "cache-type-k" || k == "cache-type-v") {
    auto type = parse_kv_type_name(item.value);
    if (!type) return Status::error(k + "=" + item.value + ": " + type.message());
    (k == "cache-type-k" ? c.kv_types.k : c.kv_types.v) = *type;
  } else if (k == "kv-block-size") {
    auto n = integer(item, 1, 1 << 20);
    if (!n) return n.status();
    c.cache.kv_block_size = static_cast<int32_t>(*n);
    const Status valid = check_kv_block_size(c.cache.kv_block_size);
    if (!valid) return Status::error(k + "=" + item.value + ": " + valid.message());
  } else if (k == "cache-budget") {
    auto n = integer(item, 0, int64_t(1) << 30);
    if (!n) return n.status();
    c.cache.kv_cache_budget_bytes = static_cast<uint64_t>(*n) << 20;
  } else if (k == "prefix-cache" || k == "context-shift") {
    auto b = on_off(item);
    if (!b) return b.status();
    (k == "prefix-cache" ? c.cache.prefix_cache : c.cache.context_shift) = *b;
  } else if (k == "kv-window" || k == "kv-sinks") {
    auto n = integer(item, 0, int64_t(1) << 24);
    if (!n) return n.status();
    (k == "kv-window" ? c.cache.kv_window : c.cache.kv_sinks) = *n;
  } else if (k == "backend") {
    return apply_backend(item, c);
  } else if (k == "device") {
    auto n = integer(item, 0, 1024);
    if (!n) return n.status();
    c.backend.device = static_cast<int>(*n);
  } else if (k == "threads") {
    auto n = integer(item, 0, 1024);
    if (!n) return n.status();
    c.n_threads = static_cast<int>(*n);
  } else if (k == "context") {
    auto n = integer(item, 0, int64_t(1) << 24);
    if (!n) return n.status();
    c.n_ctx = *n;
  } else {
    return Status::error("unknown configuration key '" + k +
                         "' (known: label, model, weights, cache-type-k, cache-type-v, kv-block-size, cache-budget, "
                         "prefix-cache, kv-window, kv-sinks, context-shift, backend, device, threads, context)");
  }
  return Status::ok();
}

}  // namespace

Result<CompareConfig> parse_compare_config(std::string_view text) {
  text = trim(text);
  auto items = !text.empty() && text.front() == '{' ? json_items(text) : split_items(text);
  if (!items) return items.status();
  CompareConfig config;
  for (const Item& item : *items) INFERSCOPE_RETURN_IF_ERROR(apply(item, config));
  return config;
}

std::string compare_config_text(const CompareConfig& c) {
  const CompareConfig d;
  std::vector<std::string> parts;
  auto add = [&](const std::string& key, const std::string& value) { parts.push_back(key + "=" + value); };
  if (!c.model_path.empty()) add("model", c.model_path);
  if (!c.weights.empty()) add("weights", c.weights);
  if (c.kv_types.k != d.kv_types.k) add("cache-type-k", std::string(kernels::kv_type_name(c.kv_types.k)));
  if (c.kv_types.v != d.kv_types.v) add("cache-type-v", std::string(kernels::kv_type_name(c.kv_types.v)));
  if (c.cache.kv_block_size != d.cache.kv_block_size) add("kv-block-size", std::to_string(c.cache.kv_block_size));
  if (c.cache.kv_cache_budget_bytes != 0) add("cache-budget", std::to_string(c.cache.kv_cache_budget_bytes >> 20));
  if (!c.cache.prefix_cache) add("prefix-cache", "off");
  if (c.cache.kv_window != d.cache.kv_window) add("kv-window", std::to_string(c.cache.kv_window));
  if (c.cache.kv_sinks != d.cache.kv_sinks) add("kv-sinks", std::to_string(c.cache.kv_sinks));
  if (c.cache.context_shift) add("context-shift", "on");
  if (!c.backend.on_cpu()) add("backend", c.backend.backend + ":" + std::to_string(c.backend.device));
  if (c.n_threads != 0) add("threads", std::to_string(c.n_threads));
  if (c.n_ctx != 0) add("context", std::to_string(c.n_ctx));
  if (parts.empty()) return "defaults";
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : ",") + p;
  return text;
}

}  // namespace inferscope
