#include "common/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "common/json_string.hpp"

namespace bootstorm::log {
namespace {

std::shared_mutex g_secrets_mutex;
std::vector<std::string> g_secrets;

// A sink wrapper that redacts the formatted payload before handing it to the real sink.
class RedactingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  RedactingSink(spdlog::sink_ptr inner, Format format) : inner_(std::move(inner)), format_(format) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string text = redact(std::string_view(msg.payload.data(), msg.payload.size()));
    if (format_ == Format::json) {
      auto secs = std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch()).count();
      std::string line = fmt::format(
          R"({{"ts":{}.{:03d},"level":"{}","logger":{},"msg":{}}})", secs / 1000,
          static_cast<int>(secs % 1000), spdlog::level::to_string_view(msg.level).data(),
          json_quoted(std::string_view(msg.logger_name.data(), msg.logger_name.size())), json_quoted(text));
      spdlog::details::log_msg copy(msg.time, msg.source, msg.logger_name, msg.level, line);
      inner_->log(copy);
    } else {
      spdlog::details::log_msg copy(msg.time, msg.source, msg.logger_name, msg.level, text);
      inner_->log(copy);
    }
  }
  void flush_() override { inner_->flush(); }

 private:
  spdlog::sink_ptr inner_;
  Format format_;
};

}  // namespace

void register_secret(std::string_view secret) {
  if (secret.size() < 4) return;
  std::unique_lock lock(g_secrets_mutex);
  if (std::find(g_secrets.begin(), g_secrets.end(), secret) == g_secrets.end()) {
    // Longest first so that a secret containing another is replaced whole. Inserted in place rather than
    // re-sorted: the beacon registers one token per VM, and sorting per insert made 10,000 VMs quadratic-log.
    auto at = std::upper_bound(g_secrets.begin(), g_secrets.end(), secret.size(),
                               [](std::size_t size, const auto& s) { return size > s.size(); });
    g_secrets.emplace(at, secret);
  }
}

std::string redact(std::string_view text) {
  std::string out(text);
  std::shared_lock lock(g_secrets_mutex);
  for (const auto& secret : g_secrets) {
    std::size_t pos = 0;
    while ((pos = out.find(secret, pos)) != std::string::npos) {
      out.replace(pos, secret.size(), "***");
      pos += 3;
    }
  }
  return out;
}

void init(const Options& options) {
  spdlog::sink_ptr inner;
  bool tty = ::isatty(STDERR_FILENO) != 0;
  auto color = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
      options.color && tty ? spdlog::color_mode::automatic : spdlog::color_mode::never);
  inner = color;
  if (options.format == Format::json) {
    inner->set_pattern("%v");
  } else if (tty) {
    inner->set_pattern("%H:%M:%S.%e %^%-5l%$ %v");
  } else {
    inner->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l [%n] %v");
  }
  auto sink = std::make_shared<RedactingSink>(inner, options.format);
  auto logger = std::make_shared<spdlog::logger>("bootstorm", sink);
  logger->set_level(options.level);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace bootstorm::log
