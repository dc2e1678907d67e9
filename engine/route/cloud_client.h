// A client of one cloud tier: any OpenAI-compatible endpoint (cpp-httplib, with TLS from
// OpenSSL for https). probe() times GET <endpoint>/models; complete() streams a chat or text
// completion, passing each piece of text on as it arrives, and says how long the first took.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/core/status.h"
#include "engine/route/route_config.h"

namespace inferscope::route {

struct CloudRequest {
  std::vector<ChatMessage> messages;  // a chat; empty: a text completion of `prompt`
  std::string prompt;
  int max_tokens = 128;
  double temperature = 0.8;
  double top_p = 0.95;
  long long seed = -1;  // -1: none
};

struct CloudReply {
  std::string text;
  std::string finish_reason;
  double ttft_ms = 0;   // request sent to first piece of text
  double total_ms = 0;
  long long completion_tokens = 0;  // the endpoint's usage, when it sends one
};

class CloudClient {
 public:
  explicit CloudClient(CloudTier tier) : tier_(std::move(tier)) {}

  // The round trip of GET <endpoint>/models, in ms; an error when it does not answer 200.
  Result<double> probe() const;
  // on_text returning false stops reading (the request is abandoned).
  Result<CloudReply> complete(const CloudRequest& request, const std::function<bool(const std::string&)>& on_text) const;
  // Passes an OpenAI request through: POSTs `body` (its "model" set to the tier's) to
  // <endpoint><api_path> ("/chat/completions"), then on_head(status, content type) once and
  // on_bytes with the reply's bytes as they come, unchanged (false stops). An error when the
  // endpoint could not be reached or the transfer broke.
  Status forward(const std::string& api_path, const std::string& body,
                 const std::function<void(int, const std::string&)>& on_head,
                 const std::function<bool(const char*, std::size_t)>& on_bytes) const;
  const CloudTier& tier() const { return tier_; }

 private:
  CloudTier tier_;
};

}  // namespace inferscope::route
