// The run directory: <output>/<plan>-<UTC stamp>-<run id>[-shard<I>of<N>], mode 0700, with the resolved plan
// (plan.yaml, secrets redacted) and the journal opened in it (see run_directory.hpp).
#include "orchestrator/engine/run_directory.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/log.hpp"
#include "orchestrator/engine/detail/run_session.hpp"
#include "orchestrator/engine/naming.hpp"

namespace bootstorm::engine {

Expected<std::filesystem::path> make_run_directory(const std::filesystem::path& out, const std::string& name,
                                                   const std::string& plan_yaml) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec)
    return make_error(ErrorKind::io,
                      fmt::format("cannot create output directory {}: {}", out.string(), ec.message()),
                      "choose another directory with --out");
  auto dir = out / name;
  if (::mkdir(dir.c_str(), 0700) != 0)
    return make_error(ErrorKind::io,
                      fmt::format("cannot create run directory {}: {}", dir.string(), std::strerror(errno)));
  ::chmod(dir.c_str(), 0700);
  std::ofstream plan_file(dir / "plan.yaml", std::ios::binary);
  plan_file << log::redact(plan_yaml);
  if (!plan_file) return make_error(ErrorKind::io, "cannot write " + (dir / "plan.yaml").string());
  return dir;
}

namespace detail {

Expected<void> RunSession::create_run_directory(std::chrono::system_clock::time_point started) {
  std::filesystem::path out =
      options_.output_dir.empty() ? std::filesystem::path(plan_.output) : options_.output_dir;
  std::string name = run_directory_name(plan_.name, started, run_id_);
  if (options_.shard.sharded())
    name += fmt::format("-shard{}of{}", options_.shard.index, options_.shard.count);
  auto dir = make_run_directory(out, name, options_.plan_yaml);
  if (!dir) return dir.error();
  result.run_dir = *dir;
  auto journal = Journal::open(*dir / "journal.jsonl", origin_);
  if (!journal) return journal.error();
  journal_ = std::move(*journal);
  return {};
}

}  // namespace detail

}  // namespace bootstorm::engine
