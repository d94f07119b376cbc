#pragma once
// Expected failures (HTTP status, API error, timeout, invalid input) travel as values, not exceptions.
// Each Error carries enough context for a user-facing message: what failed, where, and what to do.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace bootstorm {

enum class ErrorKind {
  invalid_input,  // bad plan, bad argument: exit code 2
  connect,        // could not reach an endpoint
  tls,            // certificate / hostname verification failed
  timeout,        // a deadline fired
  io,             // connection reset, short read, ...
  cancelled,      // operation aborted (Ctrl-C, stop)
  protocol,       // malformed HTTP or JSON
  http_status,    // the server answered with an error status
  api,            // the platform API answered an error body (vCenter error_type, Kubernetes Status)
  auth,           // 401 after re-login, expired credentials
  not_found,      // an object the plan names does not exist
  conflict,       // 409 / ALREADY_IN_DESIRED_STATE / RESOURCE_BUSY
  internal,
};

const char* to_string(ErrorKind kind) noexcept;

struct Error {
  ErrorKind kind = ErrorKind::internal;
  std::string message;  // complete sentence: what failed and where
  std::string hint;     // what the user can do about it (may be empty)
  int status = 0;       // HTTP status when there was one

  std::string what() const { return hint.empty() ? message : message + " (" + hint + ")"; }
};

inline Error make_error(ErrorKind kind, std::string message, std::string hint = {}, int status = 0) {
  return Error{kind, std::move(message), std::move(hint), status};
}

// A small Expected<T>: either a value or an Error. Accessing the wrong side is a programmer bug (asserts).
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!has_value());
    return std::get<1>(v_);
  }
  Error& error() {
    assert(!has_value());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}
  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace bootstorm
