#pragma once
// Child processes and files for the tests that drive the real `bootstorm` binary (tests/e2e/*,
// tests/integration/faults): one copy instead of one per test folder.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace bootstorm::test_support {

namespace fs = std::filesystem;

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_file(const fs::path& path, const std::string& text,
                       fs::perms mode = fs::perms::owner_read | fs::perms::owner_write) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  fs::permissions(path, mode, fs::perm_options::replace);
}

// A child process with stdin from /dev/null and stdout/stderr to files; `extra_env` ("K=V") is added to this
// process's environment; `cwd` (when not empty) is its working directory. The destructor SIGKILLs and reaps
// it unless it was waited for.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err,
        const std::vector<std::string>& extra_env = {}, const fs::path& cwd = {})
      : out_(out), err_(err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    // After the opens, so that relative output paths stay relative to this process's directory.
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    for (const auto& e : extra_env) env_strings.push_back(e);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      throw std::runtime_error("posix_spawn " + argv[0] + " failed: " + std::to_string(rc));
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { kill_now(); }

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !status_; }

  // Exit code, or -signal when killed by a signal; nullopt on timeout (the child keeps running).
  std::optional<int> wait_for(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!status_) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status_;
  }

  // Sends `sig` (SIGINT: the user's Ctrl-C) and leaves the child to end as it does.
  void send(int sig) {
    if (pid_ > 0 && !status_) ::kill(pid_, sig);
  }

  void kill_now() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      status_ = -SIGKILL;
    }
  }

  std::string out() const { return read_file(out_); }
  std::string err() const { return read_file(err_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  fs::path out_;
  fs::path err_;
};

}  // namespace bootstorm::test_support
