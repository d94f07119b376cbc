#include "common/expected.hpp"

namespace bootstorm {

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input:
      return "invalid input";
    case ErrorKind::connect:
      return "connection failed";
    case ErrorKind::tls:
      return "TLS verification failed";
    case ErrorKind::timeout:
      return "timed out";
    case ErrorKind::io:
      return "I/O error";
    case ErrorKind::cancelled:
      return "cancelled";
    case ErrorKind::protocol:
      return "protocol error";
    case ErrorKind::http_status:
      return "HTTP error";
    case ErrorKind::api:
      return "API error";
    case ErrorKind::auth:
      return "authentication failed";
    case ErrorKind::not_found:
      return "not found";
    case ErrorKind::conflict:
      return "conflict";
    case ErrorKind::internal:
      return "internal error";
  }
  return "error";
}

}  // namespace bootstorm
