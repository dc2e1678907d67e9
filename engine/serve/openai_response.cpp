#include "engine/serve/openai_response.h"

namespace inferscope::serve {

namespace {

using nlohmann::json;

const char* object_name(Api api, bool chunk) {
  if (api == Api::Text) return "text_completion";
  return chunk ? "chat.completion.chunk" : "chat.completion";
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

// A token's text with invalid UTF-8 (a token that ends mid-character) replaced by U+FFFD, so
// JSON can carry it.
std::string token_text(const Tokenizer& tokenizer, std::int32_t id) {
  const std::string dumped = json(tokenizer.token_to_piece(id)).dump(-1, ' ', false, json::error_handler_t::replace);
  return json::parse(dumped).get<std::string>();
}

json bytes_of(const std::string& s) {
  json bytes = json::array();
  for (unsigned char c : s) bytes.push_back(static_cast<int>(c));
  return bytes;
}

// The chosen token's logprob among its alternatives; null when it was not among them.
json chosen_logprob(const TokenChoice& t) {
  for (const TokenLogprob& alt : t.top) {
    if (alt.id == t.id) return alt.logprob;
  }
  return nullptr;
}

}  // namespace

std::string finish_reason(const std::string& stop_reason, bool stop_string_matched) {
  if (stop_string_matched) return "stop";
  return stop_reason == "max_tokens" || stop_reason == "context_full" ? "length" : "stop";
}

json logprobs_json(Api api, const Tokenizer& tokenizer, const std::vector<TokenChoice>& tokens) {
  if (api == Api::Chat) {
    json content = json::array();
    for (const TokenChoice& t : tokens) {
      const std::string text = token_text(tokenizer, t.id);
      json top = json::array();
      for (const TokenLogprob& alt : t.top) {
        const std::string alt_text = token_text(tokenizer, alt.id);
        top.push_back({{"token", alt_text}, {"logprob", alt.logprob}, {"bytes", bytes_of(alt_text)}});
      }
      content.push_back({{"token", text}, {"logprob", chosen_logprob(t)}, {"bytes", bytes_of(text)}, {"top_logprobs", top}});
    }
    return {{"content", content}};
  }
  json texts = json::array(), logprobs = json::array(), tops = json::array(), offsets = json::array();
  std::size_t offset = 0;
  for (const TokenChoice& t : tokens) {
    const std::string text = token_text(tokenizer, t.id);
    texts.push_back(text);
    logprobs.push_back(chosen_logprob(t));
    json top = json::object();
    for (const TokenLogprob& alt : t.top) top[token_text(tokenizer, alt.id)] = alt.logprob;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += text.size();
  }
  return {{"tokens", texts}, {"token_logprobs", logprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json completion_json(const ReplyIdentity& reply, const std::string& text, const std::string& finish, const Usage& usage,
                     const json& logprobs, const std::string& reasoning) {
  json choice = {{"index", 0}, {"finish_reason", finish}, {"logprobs", logprobs}};
  if (reply.api == Api::Chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
    if (!reasoning.empty()) choice["message"]["reasoning_content"] = reasoning;
  } else {
    choice["text"] = reasoning.empty() ? text : reasoning + text;  // a plain completion has no place for it
  }
  return {{"id", reply.id},           {"object", object_name(reply.api, false)}, {"created", reply.created},
          {"model", reply.model},     {"choices", json::array({choice})},        {"usage", usage_json(usage)},
          {"system_fingerprint", "inferscope"}};
}

json chunk_json(const ReplyIdentity& reply, const std::string& text, const json& logprobs, bool first,
                const std::string* finish, const Usage* usage, bool reasoning) {
  json choice = {{"index", 0}, {"logprobs", logprobs}, {"finish_reason", finish ? json(*finish) : json()}};
  if (reply.api == Api::Chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || (!first && !finish)) delta[reasoning ? "reasoning_content" : "content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  json chunk = {{"id", reply.id},       {"object", object_name(reply.api, true)}, {"created", reply.created},
                {"model", reply.model}, {"choices", json::array({choice})},       {"system_fingerprint", "inferscope"}};
  if (usage) chunk["usage"] = usage_json(*usage);
  return chunk;
}

std::string sse_event(const json& j) {
  return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

json embeddings_json(const std::string& model, const std::vector<std::vector<float>>& vectors, std::int64_t prompt_tokens) {
  json data = json::array();
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", vectors[i]}});
  }
  return {{"object", "list"},
          {"data", data},
          {"model", model},
          {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
}

json models_json(const std::vector<std::string>& ids, std::int64_t created) {
  json data = json::array();
  for (const std::string& id : ids) data.push_back({{"id", id}, {"object", "model"}, {"created", created}, {"owned_by", "inferscope"}});
  return {{"object", "list"}, {"data", data}};
}

}  // namespace inferscope::serve
