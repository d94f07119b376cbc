#include "orchestrator/engine/shard.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <charconv>
#include <ctime>

#include "common/rfc3339.hpp"
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

std::string plan_digest(std::string_view plan_yaml) {
  return sha256_hex(plan_yaml);
}

std::string derive_run_id(std::string_view plan_digest_hex, std::chrono::system_clock::time_point start_at) {
  return sha256_hex(fmt::format("bootstorm-shard-run\n{}\n{}", plan_digest_hex, format_rfc3339(start_at)))
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
