#include "engine/serve/api_error.h"

namespace inferscope::serve {

namespace {

ApiError make(int status, std::string type, std::string message, std::string code, std::string param = {}) {
  return ApiError{status, std::move(message), std::move(type), std::move(param), std::move(code)};
}

nlohmann::json or_null(const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); }

}  // namespace

nlohmann::json ApiError::body() const {
  return {{"error", {{"message", message}, {"type", type}, {"param", or_null(param)}, {"code", or_null(code)}}}};
}

ApiError bad_request(std::string message, std::string param) {
  return make(400, "invalid_request_error", std::move(message), "invalid_request", std::move(param));
}

ApiError unauthorized(std::string message) {
  return make(401, "authentication_error", std::move(message), "invalid_api_key");
}

ApiError not_found(std::string message) { return make(404, "invalid_request_error", std::move(message), "not_found"); }

ApiError too_large(std::string message) {
  return make(413, "invalid_request_error", std::move(message), "request_too_large");
}

ApiError overloaded(std::string message) { return make(503, "server_error", std::move(message), "overloaded"); }

ApiError server_error(std::string message) { return make(500, "server_error", std::move(message), "internal_error"); }

}  // namespace inferscope::serve
