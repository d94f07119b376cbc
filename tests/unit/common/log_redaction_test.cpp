// A registered secret must never reach the log output, in text or JSON format, at any level.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "common/log.hpp"

namespace bootstorm::log {
namespace {

// Logs through the process logger with the given format and returns what reached stderr.
std::string logged(Format format, const std::function<void()>& emit) {
  Options options;
  options.format = format;
  options.level = spdlog::level::trace;
  options.color = false;
  init(options);
  ::testing::internal::CaptureStderr();
  emit();
  spdlog::default_logger()->flush();
  std::fflush(stderr);
  return ::testing::internal::GetCapturedStderr();
}

TEST(Redact, ReplacesEveryOccurrence) {
  register_secret("hunter2-redact-test");
  EXPECT_EQ(redact("a hunter2-redact-test b hunter2-redact-test"), "a *** b ***");
  EXPECT_EQ(redact("nothing secret here"), "nothing secret here");
}

TEST(Redact, ShortAndEmptySecretsAreIgnored) {
  register_secret("");
  register_secret("abc");
  // Three letters would redact ordinary words all over the log.
  EXPECT_EQ(redact("abc abcd"), "abc abcd");
  EXPECT_EQ(redact(""), "");
}

TEST(Redact, LongerSecretContainingAShorterOneIsRemovedWhole) {
  register_secret("tok-AAAA");
  register_secret("tok-AAAA-BBBB-CCCC");
  EXPECT_EQ(redact("Bearer tok-AAAA-BBBB-CCCC"), "Bearer ***");
  EXPECT_EQ(redact("Bearer tok-AAAA"), "Bearer ***");
}

TEST(LogRedaction, TextFormatNeverShowsTheSecret) {
  const std::string secret = "S3cr3t-Pa55w0rd!text";
  register_secret(secret);
  std::string out = logged(Format::text, [&] {
    spdlog::info("login as admin with password {}", secret);
    spdlog::trace("trace {}", secret);
    spdlog::error("{}{}", secret, secret);
  });
  EXPECT_EQ(out.find(secret), std::string::npos) << out;
  EXPECT_NE(out.find("login as admin with password ***"), std::string::npos) << out;
  EXPECT_NE(out.find("trace ***"), std::string::npos) << out;
  EXPECT_NE(out.find("******"), std::string::npos) << out;
}

TEST(LogRedaction, JsonFormatNeverShowsTheSecretEvenWhenItNeedsEscaping) {
  const std::string secret = "pa\"ss\\word-json";
  register_secret(secret);
  std::string out = logged(Format::json, [&] { spdlog::warn("token={} done", secret); });
  EXPECT_EQ(out.find(secret), std::string::npos) << out;
  EXPECT_EQ(out.find("pa\\\"ss\\\\word-json"), std::string::npos) << out;  // nor its JSON-escaped form
  EXPECT_NE(out.find("\"msg\":\"token=*** done\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"level\":\"warning\""), std::string::npos) << out;
}

TEST(LogRedaction, LevelFiltersStillApply) {
  std::string out = [&] {
    Options options;
    options.format = Format::text;
    options.level = spdlog::level::warn;
    init(options);
    ::testing::internal::CaptureStderr();
    spdlog::info("quiet info line");
    spdlog::warn("loud warn line");
    spdlog::default_logger()->flush();
    return ::testing::internal::GetCapturedStderr();
  }();
  EXPECT_EQ(out.find("quiet info line"), std::string::npos) << out;
  EXPECT_NE(out.find("loud warn line"), std::string::npos) << out;
}

}  // namespace
}  // namespace bootstorm::log
