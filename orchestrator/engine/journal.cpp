#include "orchestrator/engine/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "common/log.hpp"
#include "common/rfc3339.hpp"

namespace bootstorm::engine {

using nlohmann::json;

Expected<std::unique_ptr<Journal>> Journal::open(const std::filesystem::path& file,
                                                 std::chrono::steady_clock::time_point mono_origin,
                                                 std::chrono::milliseconds flush_interval) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    return make_error(ErrorKind::io,
                      fmt::format("cannot open journal {}: {}", file.string(), std::strerror(errno)),
                      "check that the run directory exists and is writable");
  }
  std::FILE* f = ::fdopen(fd, "a");
  if (!f) {
    ::close(fd);
    return make_error(ErrorKind::io,
                      fmt::format("cannot open journal {}: {}", file.string(), std::strerror(errno)));
  }
  return std::unique_ptr<Journal>(new Journal(f, file, mono_origin, flush_interval));
}

Journal::Journal(std::FILE* file, std::filesystem::path path, std::chrono::steady_clock::time_point origin,
                 std::chrono::milliseconds flush_interval)
    : file_(file), path_(std::move(path)), origin_(origin), flush_interval_(flush_interval) {
  thread_ = std::thread([this] { flusher(); });
}

Journal::~Journal() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::fflush(file_);
  ::fsync(::fileno(file_));
  std::fclose(file_);
}

void Journal::flusher() {
  std::unique_lock lock(mutex_);
  while (!closing_) {
    cv_.wait_for(lock, flush_interval_);
    if (dirty_) {
      check_written_locked(std::fflush(file_) == 0);
      dirty_ = false;
    }
  }
}

double Journal::mono_of(std::chrono::steady_clock::time_point t) const {
  return std::chrono::duration<double>(t - origin_).count();
}

json Journal::write(std::string_view type, json payload) {
  const auto wall = std::chrono::system_clock::now();
  return write_at(type, std::move(payload), wall, mono_of(std::chrono::steady_clock::now()));
}

json Journal::write_at(std::string_view type, json payload, std::chrono::system_clock::time_point wall,
                       double mono) {
  if (!payload.is_object()) payload = json::object();
  payload.erase("t");
  payload.erase("mono");
  payload.erase("type");
  redact_json(payload);
  const std::string t = format_rfc3339(wall);
  const double mono_s = std::round(mono * 1e6) / 1e6;
  const json type_json = log::redact(type);
  // "t", "mono" and "type" lead every line (easier to read and to grep); the payload follows in key order.
  // Invalid UTF-8 in a detail string must not make the journal unwritable: it is replaced.
  std::string rest = payload.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string line = fmt::format(R"({{"t":"{}","mono":{},"type":{}{}{})", t, json(mono_s).dump(),
                                 type_json.dump(), rest.size() > 2 ? "," : "",
                                 rest.size() > 2 ? std::string_view(rest).substr(1, rest.size() - 2) : "");
  line += "}\n";
  {
    std::lock_guard lock(mutex_);
    check_written_locked(std::fwrite(line.data(), 1, line.size(), file_) == line.size());
    dirty_ = true;
  }
  payload["t"] = t;
  payload["mono"] = mono_s;
  payload["type"] = type_json;
  return payload;
}

void Journal::sync() {
  std::lock_guard lock(mutex_);
  check_written_locked(std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0);
  dirty_ = false;
}

// A full disk or an I/O error must not pass silently: from then on the journal misses events (a crash would
// lose them, `bootstorm report` could not rebuild the run), so the user is told at once, naming the file.
void Journal::check_written_locked(bool ok) {
  if (ok || !write_error_.empty()) return;
  write_error_ = std::strerror(errno != 0 ? errno : EIO);
  spdlog::error(
      "cannot write the journal {}: {}; the run goes on, but events from now on may be missing "
      "from it (free space on that file system, or choose another --out)",
      path_.string(), write_error_);
}

std::string Journal::write_error() const {
  std::lock_guard lock(mutex_);
  return write_error_;
}

void redact_json(json& value) {
  if (value.is_string()) {
    auto& s = value.get_ref<std::string&>();
    std::string r = log::redact(s);
    if (r != s) s = std::move(r);
  } else if (value.is_array() || value.is_object()) {
    for (auto& item : value) redact_json(item);
  }
}

}  // namespace bootstorm::engine
