#include "orchestrator/engine/shard.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <charconv>
#include <ctime>

#include "orchestrator/engine/naming.hpp"

namespace bootstorm::engine {

namespace {

bool parse_int(std::string_view text, int& out) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

}  // namespace

Expected<ShardSpec> parse_shard(std::string_view text) {
  const std::string shown(text);
  auto slash = text.find('/');
  if (slash == std::string_view::npos)
    return make_error(ErrorKind::invalid_input, fmt::format("--shard '{}' is not INDEX/COUNT", shown),
                      "write it as e.g. --shard 0/3 (INDEX from 0 to COUNT-1)");
  ShardSpec spec;
  if (!parse_int(text.substr(0, slash), spec.index))
    return make_error(ErrorKind::invalid_input,
                      fmt::format("--shard '{}': INDEX '{}' is not a non-negative integer", shown,
                                  std::string(text.substr(0, slash))),
                      "write it as e.g. --shard 0/3 (INDEX from 0 to COUNT-1)");
  if (!parse_int(text.substr(slash + 1), spec.count))
    return make_error(ErrorKind::invalid_input,
                      fmt::format("--shard '{}': COUNT '{}' is not a positive integer", shown,
                                  std::string(text.substr(slash + 1))),
                      "write it as e.g. --shard 0/3 (INDEX from 0 to COUNT-1)");
  if (spec.count < 1 || spec.count > 10000)
    return make_error(ErrorKind::invalid_input,
                      fmt::format("--shard '{}': COUNT must be between 1 and 10000", shown));
  if (spec.index >= spec.count)
    return make_error(ErrorKind::invalid_input,
                      fmt::format("--shard '{}': INDEX must be below COUNT ({} shards are numbered 0 to {})",
                                  shown, spec.count, spec.count - 1),
                      "in an Indexed Job, pass $(JOB_COMPLETION_INDEX)/<completions>");
  return spec;
}

std::optional<int> vm_number_from_name(std::string_view name) {
  auto dash = name.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  int number = 0;
  if (!parse_int(name.substr(dash + 1), number)) return std::nullopt;
  return number;
}

Expected<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  const std::string s(text);
  auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::invalid_input, fmt::format("'{}' is not an RFC 3339 time: {}", s, why),
                      "write it as e.g. 2026-11-30T10:00:00Z (UTC) or 2026-11-30T11:00:00+01:00");
  };
  // YYYY-MM-DDTHH:MM:SS
  if (s.size() < 20) return bad("too short");
  auto digits = [&](std::size_t at, std::size_t n, int& out) { return parse_int(text.substr(at, n), out); };
  int year, month, day, hour, minute, second;
  if (!digits(0, 4, year) || s[4] != '-' || !digits(5, 2, month) || s[7] != '-' || !digits(8, 2, day) ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(11, 2, hour) || s[13] != ':' ||
      !digits(14, 2, minute) || s[16] != ':' || !digits(17, 2, second))
    return bad("expected YYYY-MM-DDTHH:MM:SS");
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return bad("a date or time field is out of range");
  std::size_t at = 19;
  long long nanos = 0;
  if (at < s.size() && s[at] == '.') {
    ++at;
    std::size_t begin = at;
    long long scale = 100000000;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      if (scale > 0) nanos += (s[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == begin) return bad("no digits after the decimal point");
  }
  int offset_minutes = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    int oh, om;
    if (at + 6 != s.size() || !digits(at + 1, 2, oh) || s[at + 3] != ':' || !digits(at + 4, 2, om) ||
        oh > 23 || om > 59)
      return bad("the UTC offset must be Z or +HH:MM / -HH:MM");
    offset_minutes = (oh * 60 + om) * (s[at] == '-' ? -1 : 1);
    at += 6;
  } else {
    return bad("a time zone is required (Z or +HH:MM)");
  }
  if (at != s.size()) return bad("unexpected characters at the end");
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t secs = ::timegm(&tm);
  std::tm check{};
  gmtime_r(&secs, &check);
  if (check.tm_mday != day && second != 60) return bad("the day does not exist in that month");
  auto t = std::chrono::system_clock::from_time_t(secs) - std::chrono::minutes(offset_minutes);
  return t + std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(nanos));
}

std::string plan_digest(std::string_view plan_yaml) {
  return sha256_hex(plan_yaml);
}

std::string derive_run_id(std::string_view plan_digest_hex, std::chrono::system_clock::time_point start_at) {
  return sha256_hex(fmt::format("bootstorm-shard-run\n{}\n{}", plan_digest_hex, rfc3339_ms(start_at)))
      .substr(0, 6);
}

Expected<void> validate_run_id(std::string_view run_id) {
  bool ok = !run_id.empty() && run_id.size() <= 16;
  for (char c : run_id) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
  if (!ok)
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("run id '{}' must be 1 to 16 characters of a-z and 0-9", std::string(run_id)),
        "it becomes part of every VM name and the bootstorm.io/run label");
  return {};
}

}  // namespace bootstorm::engine
