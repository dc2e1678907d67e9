#include "engine/route/cloud_client.h"

#include <httplib.h>

#include <chrono>

#include <nlohmann/json.hpp>

namespace inferscope::route {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// "https://host:port/v1" -> ("https://host:port", "/v1").
std::pair<std::string, std::string> split_endpoint(const std::string& endpoint) {
  const std::size_t scheme_end = endpoint.find("://") + 3;
  const std::size_t path = endpoint.find('/', scheme_end);
  if (path == std::string::npos) return {endpoint, ""};
  return {endpoint.substr(0, path), endpoint.substr(path)};
}

httplib::Client client_for(const CloudTier& tier) {
  httplib::Client client(split_endpoint(tier.endpoint).first);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(tier.timeout);
  client.set_connection_timeout(std::min<std::chrono::seconds>(seconds, std::chrono::seconds(10)));
  client.set_read_timeout(seconds);
  client.set_write_timeout(seconds);
  if (!tier.api_key.empty()) client.set_bearer_token_auth(tier.api_key);
  return client;
}

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

json request_body(const CloudTier& tier, const CloudRequest& r) {
  json body = {{"model", tier.model}, {"max_tokens", r.max_tokens}, {"temperature", r.temperature},
               {"top_p", r.top_p},    {"stream", true}};
  if (r.seed >= 0) body["seed"] = r.seed;
  if (r.messages.empty()) {
    body["prompt"] = r.prompt;
  } else {
    body["messages"] = json::array();
    for (const ChatMessage& m : r.messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  }
  return body;
}

// Reads server-sent events out of the byte stream: each complete "data: ..." event is handed on.
class SseReader {
 public:
  // on_event(data) returns false to stop.
  explicit SseReader(std::function<bool(const std::string&)> on_event) : on_event_(std::move(on_event)) {}
  bool feed(const char* data, std::size_t size) {
    buffer_.append(data, size);
    for (std::size_t end; (end = buffer_.find("\n\n")) != std::string::npos;) {
      const std::string event = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      if (event.rfind("data: ", 0) == 0 && !on_event_(event.substr(6))) return false;
    }
    return true;
  }

 private:
  std::function<bool(const std::string&)> on_event_;
  std::string buffer_;
};

}  // namespace

Result<double> CloudClient::probe() const {
  httplib::Client client = client_for(tier_);
  const auto start = Clock::now();
  auto res = client.Get(split_endpoint(tier_.endpoint).second + "/models");
  if (!res) return Status::error(tier_.endpoint + " does not answer: " + httplib::to_string(res.error()));
  if (res->status != 200) return Status::error(tier_.endpoint + "/models answered " + std::to_string(res->status));
  return ms_since(start);
}

Result<CloudReply> CloudClient::complete(const CloudRequest& request,
                                         const std::function<bool(const std::string&)>& on_text) const {
  httplib::Client client = client_for(tier_);
  const bool chat = !request.messages.empty();
  const std::string path = split_endpoint(tier_.endpoint).second + (chat ? "/chat/completions" : "/completions");
  CloudReply reply;
  std::string error;
  const auto start = Clock::now();
  bool first = true, stopped = false;
  SseReader reader([&](const std::string& data) {
    if (data == "[DONE]") return true;
    const json chunk = json::parse(data, nullptr, false);
    if (!chunk.is_object()) return true;
    if (chunk.contains("error")) {
      error = chunk["error"].value("message", "the cloud tier reported an error");
      return false;
    }
    if (chunk.contains("usage") && chunk["usage"].is_object()) {
      reply.completion_tokens = chunk["usage"].value("completion_tokens", 0LL);
    }
    if (!chunk.contains("choices") || chunk["choices"].empty()) return true;
    const json& choice = chunk["choices"][0];
    std::string piece;
    if (chat && choice.contains("delta") && choice["delta"].contains("content") && choice["delta"]["content"].is_string()) {
      piece = choice["delta"]["content"].get<std::string>();
    } else if (!chat && choice.contains("text") && choice["text"].is_string()) {
      piece = choice["text"].get<std::string>();
    }
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      reply.finish_reason = choice["finish_reason"].get<std::string>();
    }
    if (piece.empty()) return true;
    if (first) reply.ttft_ms = ms_since(start);
    first = false;
    reply.text += piece;
    if (on_text && !on_text(piece)) {
      stopped = true;
      return false;
    }
    return true;
  });
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = request_body(tier_, request).dump();
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  int status = 0;
  std::string error_body;
  req.response_handler = [&](const httplib::Response& res) {
    status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
    if (status != 200) {
      error_body.append(data, size);
      return error_body.size() < 65536;
    }
    return reader.feed(data, size);
  };
  httplib::Response res;
  httplib::Error transport = httplib::Error::Success;
  const bool sent = client.send(req, res, transport);
  reply.total_ms = ms_since(start);
  if (stopped) return reply;
  if (!error.empty()) return Status::error(tier_.endpoint + ": " + error);
  if (!sent) return Status::error(tier_.endpoint + " failed: " + httplib::to_string(transport));
  if (status != 200) {
    const json body = json::parse(error_body, nullptr, false);
    const std::string why = body.is_object() && body.contains("error") ? body["error"].value("message", error_body) : error_body;
    return Status::error(tier_.endpoint + " answered " + std::to_string(status) + ": " + why);
  }
  return reply;
}

Status CloudClient::forward(const std::string& api_path, const std::string& body,
                            const std::function<void(int, const std::string&)>& on_head,
                            const std::function<bool(const char*, std::size_t)>& on_bytes) const {
  json request = json::parse(body, nullptr, false);
  if (!request.is_object()) return Status::error("the request to forward is not a JSON object");
  request["model"] = tier_.model;
  httplib::Client client = client_for(tier_);
  httplib::Request req;
  req.method = "POST";
  req.path = split_endpoint(tier_.endpoint).second + api_path;
  req.body = request.dump();
  req.set_header("Content-Type", "application/json");
  bool stopped = false;
  req.response_handler = [&](const httplib::Response& res) {
    on_head(res.status, res.get_header_value("Content-Type"));
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
    stopped = !on_bytes(data, size);
    return !stopped;
  };
  httplib::Response res;
  httplib::Error transport = httplib::Error::Success;
  if (!client.send(req, res, transport) && !stopped) {
    return Status::error(tier_.endpoint + " failed: " + httplib::to_string(transport));
  }
  return Status::ok();
}

}  // namespace inferscope::route
