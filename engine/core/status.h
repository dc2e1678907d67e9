// Status and Result<T>: how expected failures (bad file, unsupported model, out of memory,
// missing driver) travel through the engine. Exceptions never cross the public API.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace inferscope {

class [[nodiscard]] Status {
 public:
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool is_ok() const { return !message_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const std::string& message() const {
    static const std::string empty;
    return message_ ? *message_ : empty;
  }

 private:
  Status() = default;
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.is_ok()); }  // NOLINT

  static Result error(std::string message) { return Result(Status::error(std::move(message))); }

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }
  const std::string& message() const { return status_.message(); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_ = Status::ok();
};

}  // namespace inferscope

// Propagates a failed Status from an expression returning Status.
#define INFERSCOPE_RETURN_IF_ERROR(expr)            \
  do {                                              \
    ::inferscope::Status _st = (expr);              \
    if (!_st.is_ok()) return _st;                   \
  } while (0)
