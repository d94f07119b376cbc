// Plain helpers shared by the client and the server: header lookup, percent-encoding, URL parsing, query
// parameters. No Beast here.
#include "protocol/http/types.hpp"

#include <charconv>

#include "common/header_text.hpp"
#include "protocol/http/server.hpp"

namespace bootstorm::http {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// Calls `visit(decoded_name, raw_value)` for every name=value pair of a query string until it returns true.
template <class Visit>
void for_each_query_pair(std::string_view query, Visit&& visit) {
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    std::size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (visit(url_decode(name), value)) return;
  }
}

}  // namespace

std::optional<std::string_view> find_header(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (equals_ignoring_ascii_case(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

std::string url_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (is_unreserved(c)) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
  return out;
}

// Query strings use '+' for a space (application/x-www-form-urlencoded); a malformed escape is kept literally
// rather than rejected, like most servers do.
std::string url_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += c == '+' ? ' ' : c;
  }
  return out;
}

std::string Url::origin() const {
  std::string out = scheme + "://";
  if (host.find(':') != std::string::npos) {
    out += '[' + host + ']';
  } else {
    out += host;
  }
  out += ':' + std::to_string(port);
  return out;
}

std::optional<Url> parse_url(std::string_view text) {
  Url url;
  std::size_t scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  std::string scheme(text.substr(0, scheme_end));
  for (auto& c : scheme) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  url.scheme = scheme;
  url.port = scheme == "https" ? 443 : 80;
  std::string_view rest = text.substr(scheme_end + 3);
  std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view target =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (std::size_t at = authority.rfind('@'); at != std::string_view::npos)
    authority = authority.substr(at + 1);
  if (authority.empty()) return std::nullopt;
  std::string_view port_text;
  if (authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port_text = after.substr(1);
    }
  } else {
    std::size_t colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) return std::nullopt;
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return std::nullopt;
    }
    url.port = static_cast<unsigned short>(value);
  }
  if (std::size_t hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
  // Built with reserve + append: g++ 12 at -O3 reports a false -Wrestrict on `"/" + std::string(...)`.
  url.target.clear();
  url.target.reserve(target.size() + 1);
  if (target.empty() || target.front() == '?') url.target.push_back('/');
  url.target.append(target);
  return url;
}

std::optional<std::string> ServerRequest::query_param(std::string_view name) const {
  std::optional<std::string> found;
  for_each_query_pair(query, [&](const std::string& key, std::string_view value) {
    if (key != name) return false;
    found = url_decode(value);
    return true;
  });
  return found;
}

std::vector<std::string> ServerRequest::query_params(std::string_view name, bool split_commas) const {
  std::vector<std::string> values;
  for_each_query_pair(query, [&](const std::string& key, std::string_view value) {
    if (key != name) return false;
    std::string decoded = url_decode(value);
    if (!split_commas) {
      values.push_back(std::move(decoded));
      return false;
    }
    std::string_view rest(decoded);
    while (true) {
      std::size_t comma = rest.find(',');
      std::string_view piece = rest.substr(0, comma);
      if (!piece.empty()) values.emplace_back(piece);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    return false;
  });
  return values;
}

}  // namespace bootstorm::http
