#include "engine/serve/openai_request.h"

#include <nlohmann/json.hpp>

namespace inferscope::serve {

namespace {

using nlohmann::json;

// The body as a JSON object, or why not.
Parsed<json> parse_object(std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad_request("the request body is not valid JSON");
  if (!j.is_object()) return bad_request("the request body must be a JSON object");
  return j;
}

// Reads optional fields of an object, remembering the first one of the wrong type or range.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}

  bool failed() const { return failed_; }
  const ApiError& error() const { return error_; }
  void fail(std::string message, std::string param) {
    if (failed_) return;
    failed_ = true;
    error_ = bad_request(std::move(message), std::move(param));
  }
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  void string(const char* key, std::string& out) {
    if (!has(key)) return;
    if (!j_.at(key).is_string()) return fail(std::string("'") + key + "' must be a string", key);
    out = j_.at(key).get<std::string>();
  }
  void boolean(const char* key, bool& out) {
    if (!has(key)) return;
    if (!j_.at(key).is_boolean()) return fail(std::string("'") + key + "' must be a boolean", key);
    out = j_.at(key).get<bool>();
  }
  template <class T>
  void number(const char* key, T& out, double lo, double hi) {
    if (!has(key)) return;
    const json& v = j_.at(key);
    if (!v.is_number()) return fail(std::string("'") + key + "' must be a number", key);
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi)) {
      return fail(std::string("'") + key + "' must be between " + json(lo).dump() + " and " + json(hi).dump(), key);
    }
    if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) return fail(std::string("'") + key + "' must be an integer", key);
      out = static_cast<T>(v.get<std::int64_t>());
    } else {
      out = static_cast<T>(d);
    }
  }

 private:
  const json& j_;
  bool failed_ = false;
  ApiError error_;
};

// "stop": a string or an array of strings, at most limits.max_stop_strings, none empty.
void read_stop(const json& j, const RequestLimits& limits, Fields& f, std::vector<std::string>& out) {
  if (!f.has("stop")) return;
  const json& stop = j.at("stop");
  if (stop.is_string()) {
    out.push_back(stop.get<std::string>());
  } else if (stop.is_array()) {
    for (const json& s : stop) {
      if (!s.is_string()) return f.fail("'stop' must be a string or an array of strings", "stop");
      out.push_back(s.get<std::string>());
    }
  } else {
    return f.fail("'stop' must be a string or an array of strings", "stop");
  }
  if (out.size() > limits.max_stop_strings) {
    return f.fail("'stop' takes at most " + std::to_string(limits.max_stop_strings) + " strings", "stop");
  }
  for (const std::string& s : out) {
    if (s.empty()) return f.fail("'stop' strings must not be empty", "stop");
  }
}

// The fields chat and text completions share; logprobs are read by each (their shapes differ).
void read_text(const json& j, const RequestLimits& limits, Fields& f, TextRequest& out) {
  f.string("model", out.model);
  out.max_tokens = limits.default_max_tokens;
  f.number("max_tokens", out.max_tokens, 1, limits.max_tokens);
  f.number("max_completion_tokens", out.max_tokens, 1, limits.max_tokens);
  f.number("temperature", out.sampling.temperature, 0, 2);
  f.number("top_p", out.sampling.top_p, 0, 1);
  f.number("top_k", out.sampling.top_k, 0, 1 << 20);
  f.number("min_p", out.sampling.min_p, 0, 1);
  f.number("frequency_penalty", out.sampling.frequency_penalty, -2, 2);
  f.number("presence_penalty", out.sampling.presence_penalty, -2, 2);
  f.number("repeat_penalty", out.sampling.repeat_penalty, 0, 10);
  std::int64_t seed = -1;
  f.number("seed", seed, 0, 9007199254740991.0);
  if (seed >= 0) out.sampling.seed = static_cast<std::uint64_t>(seed);
  f.boolean("stream", out.stream);
  read_stop(j, limits, f, out.stop);
  std::int32_t n = 1;
  f.number("n", n, 1, 128);
  if (n != 1) f.fail("only n = 1 is supported: send the request again for another choice", "n");
}

// The body as a JSON object read into a T by read(j, fields, value), or the first error.
template <class T, class Read>
Parsed<T> parse_with(std::string_view body, const Read& read) {
  Parsed<json> parsed = parse_object(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const json& j = std::get<json>(parsed);
  Fields f(j);
  T value;
  read(j, f, value);
  if (f.failed()) return f.error();
  return value;
}

// One message's content: a string, or an array of {"type": "text", "text": ...} parts (joined).
bool read_content(const json& m, std::string& out) {
  const json& c = m.at("content");
  if (c.is_string()) {
    out = c.get<std::string>();
    return true;
  }
  if (!c.is_array()) return false;
  for (const json& part : c) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part.at("text").is_string()) {
      return false;
    }
    out += part.at("text").get<std::string>();
  }
  return true;
}

void read_messages(const json& j, const RequestLimits& limits, Fields& f, std::vector<ChatMessage>& out) {
  if (!j.contains("messages") || !j.at("messages").is_array()) {
    return f.fail("'messages' must be an array of {role, content} objects", "messages");
  }
  const json& messages = j.at("messages");
  if (messages.empty()) return f.fail("'messages' must not be empty", "messages");
  if (messages.size() > limits.max_messages) {
    return f.fail("'messages' holds at most " + std::to_string(limits.max_messages) + " messages", "messages");
  }
  for (const json& m : messages) {
    if (!m.is_object() || !m.contains("role") || !m.at("role").is_string() || !m.contains("content")) {
      return f.fail("each message must be an object with a string 'role' and a 'content'", "messages");
    }
    ChatMessage message{m.at("role").get<std::string>(), {}};
    if (message.role != "system" && message.role != "user" && message.role != "assistant" && message.role != "developer") {
      return f.fail("unsupported message role '" + message.role + "' (system, user or assistant)", "messages");
    }
    if (message.role == "developer") message.role = "system";
    if (!read_content(m, message.content)) {
      return f.fail("a message's 'content' must be a string or an array of text parts", "messages");
    }
    out.push_back(std::move(message));
  }
}

}  // namespace

Parsed<ChatCompletionRequest> parse_chat_completion(std::string_view body, const RequestLimits& limits) {
  return parse_with<ChatCompletionRequest>(body, [&](const json& j, Fields& f, ChatCompletionRequest& r) {
    read_text(j, limits, f, r.text);
    f.boolean("logprobs", r.text.logprobs);
    f.number("top_logprobs", r.text.top_logprobs, 0, limits.max_top_logprobs);
    if (r.text.logprobs && r.text.top_logprobs == 0) r.text.top_logprobs = 1;  // the chosen token's own
    if (!r.text.logprobs) r.text.top_logprobs = 0;
    read_messages(j, limits, f, r.messages);
  });
}

Parsed<CompletionRequest> parse_completion(std::string_view body, const RequestLimits& limits) {
  return parse_with<CompletionRequest>(body, [&](const json& j, Fields& f, CompletionRequest& r) {
    read_text(j, limits, f, r.text);
    f.number("logprobs", r.text.top_logprobs, 0, limits.max_top_logprobs);  // the legacy API's count
    r.text.logprobs = r.text.top_logprobs > 0;
    if (!j.contains("prompt") || !j.at("prompt").is_string()) return f.fail("'prompt' must be a string", "prompt");
    r.prompt = j.at("prompt").get<std::string>();
    if (r.prompt.empty()) f.fail("'prompt' must not be empty", "prompt");
  });
}

Parsed<EmbeddingRequest> parse_embedding(std::string_view body, const RequestLimits& limits) {
  return parse_with<EmbeddingRequest>(body, [&](const json& j, Fields& f, EmbeddingRequest& r) {
    f.string("model", r.model);
    const json input = j.value("input", json());
    if (input.is_string()) {
      r.inputs.push_back(input.get<std::string>());
    } else if (input.is_array() && !input.empty()) {
      for (const json& s : input) {
        if (!s.is_string()) return f.fail("'input' must be a string or an array of strings", "input");
        r.inputs.push_back(s.get<std::string>());
      }
    } else {
      return f.fail("'input' must be a string or a non-empty array of strings", "input");
    }
    if (r.inputs.size() > limits.max_embedding_inputs) {
      return f.fail("'input' holds at most " + std::to_string(limits.max_embedding_inputs) + " texts", "input");
    }
    for (const std::string& s : r.inputs) {
      if (s.empty()) return f.fail("'input' texts must not be empty", "input");
    }
  });
}

}  // namespace inferscope::serve
