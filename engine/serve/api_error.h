// An error as the OpenAI API reports it: an HTTP status and the body
// {"error": {"message", "type", "param", "code"}} that OpenAI client libraries parse.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace inferscope::serve {

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";  // or "authentication_error", "server_error", ...
  std::string param;                           // the request field at fault; "" = none
  std::string code;                            // a stable machine-readable reason; "" = none

  nlohmann::json body() const;
};

ApiError bad_request(std::string message, std::string param = {});
ApiError unauthorized(std::string message);
ApiError not_found(std::string message);
ApiError too_large(std::string message);
ApiError overloaded(std::string message);  // 503: the queue is full; Retry-After says when to come back
ApiError server_error(std::string message);

}  // namespace inferscope::serve
