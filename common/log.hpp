#pragma once
// Logging: spdlog underneath, readable on a TTY, JSON lines for machines, and a redaction layer so that
// every registered secret (password, token, key, beacon token) is replaced by "***" before any sink.
#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

namespace bootstorm::log {

enum class Format { text, json };

struct Options {
  Format format = Format::text;
  spdlog::level::level_enum level = spdlog::level::info;
  bool color = true;  // only used on a TTY
};

// Installs the process-wide logger (stderr). Safe to call again to change options.
void init(const Options& options);

// Registers a secret: from now on it never reaches a sink, whatever the level. Empty strings and strings of
// fewer than 4 characters are ignored (they would redact ordinary words). Thread-safe.
void register_secret(std::string_view secret);

// Replaces every registered secret in `text` by "***". Used by the sinks and by anything that writes
// user-visible artefacts (journal, reports) from strings that might contain secrets.
std::string redact(std::string_view text);

}  // namespace bootstorm::log
