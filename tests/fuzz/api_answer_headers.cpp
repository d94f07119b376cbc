// Fuzz target: an answer's headers as http::ApiStats reads them (Retry-After's delta-seconds, the Warning
// header's quoted texts, API Priority and Fairness's UIDs). The input is split at its first newline into a
// Retry-After value and a Warning value. Whatever they hold, the counts stay consistent: one answer, at most
// one wait asked for, and every warning text no longer than the header it came from.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/header_text.hpp"
#include "protocol/http/api_stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string retry_after(input.substr(0, newline));
  const std::string warning(newline == std::string_view::npos ? std::string_view()
                                                              : input.substr(newline + 1));
  bootstorm::http::ApiStats stats;
  stats.note_answer(429, {{"Retry-After", retry_after}, {"Warning", warning}, {"warning", warning}});
  if (stats.answers != 1 || stats.throttled != 1 || stats.asked_to_wait != 1) std::abort();
  if (stats.retry_after_s < 0) std::abort();
  std::uint64_t texts = 0;
  for (const auto& [text, n] : stats.warnings) {
    if (text.size() > warning.size() || n == 0 || n % 2 != 0) std::abort();  // both headers carry each text
    texts += n;
  }
  if (texts != 2 * bootstorm::warning_texts(warning).size()) std::abort();
  return 0;
}
