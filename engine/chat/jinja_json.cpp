#include "engine/chat/jinja_json.h"

#include <nlohmann/json.hpp>

namespace inferscope::jinja {

namespace {

using Json = nlohmann::ordered_json;

Value from_json(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object: {
      ValueDict entries;
      for (const auto& [key, item] : j.items()) entries.emplace_back(std::string(key), from_json(item));
      return Value::dict(std::move(entries));
    }
    case Json::value_t::array: {
      ValueList items;
      for (const Json& item : j) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case Json::value_t::string: return Value::string(j.get<std::string>());
    case Json::value_t::boolean: return Value::boolean(j.get<bool>());
    case Json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case Json::value_t::number_unsigned: return Value::integer(static_cast<int64_t>(j.get<uint64_t>()));
    case Json::value_t::number_float: return Value::number(j.get<double>());
    default: return Value::none();
  }
}

}  // namespace

Value value_from_json_text(std::string_view text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Value::string(std::string(text));
  return from_json(j);
}

}  // namespace inferscope::jinja
