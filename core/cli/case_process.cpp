// SPDX-License-Identifier: MIT
#include "core/cli/case_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>

#include "core/common/errors.h"

extern char** environ;

namespace sensode::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string signalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGFPE:
      return "SIGFPE";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(sig);
  }
}

// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Parses "<id> <status>[ <reason>]"; false when `line` is not the line of case `id`.
bool parseCaseLine(const std::string& line, const std::string& id, suite::CaseResult& r) {
  if (line.rfind(id + " ", 0) != 0) return false;
  const std::string rest = line.substr(id.size() + 1);
  const auto space = rest.find(' ');
  const std::string word = rest.substr(0, space);
  if (word == "passed")
    r.status = suite::CaseStatus::Passed;
  else if (word == "failed")
    r.status = suite::CaseStatus::Failed;
  else if (word == "skipped")
    r.status = suite::CaseStatus::Skipped;
  else
    return false;
  r.id = id;
  r.reason = space == std::string::npos ? "" : rest.substr(space + 1);
  return true;
}

// One child over ids[first..]: appends the results it reports to `results`; when it dies before
// reporting all of them, appends a failure for the case it was running. Returns how many ids it
// consumed (≥ 1).
std::size_t runChild(const CaseProcess& p, const std::vector<std::string>& ids, std::size_t first,
                     std::vector<suite::CaseResult>& results) {
  std::string selection;
  for (std::size_t i = first; i < ids.size(); ++i) selection += (i > first ? "," : "") + ids[i];
  std::vector<std::string> args = {
      p.executable.string(), "test-suite", p.casesDir.string(), "--cases", selection, "--jobs", "1",
      "--in-process"};
  args.insert(args.end(), p.childOptions.begin(), p.childOptions.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::size_t next = first;  // the case the child is running
  const auto failHere = [&](const std::string& reason) {
    suite::CaseResult r;
    r.id = ids[next];
    r.status = suite::CaseStatus::Failed;
    r.reason = reason;
    results.push_back(std::move(r));
    return std::size_t{1};
  };

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return failHere(std::string("pipe: ") + std::strerror(errno));
  Fd readEnd(fds[0]), writeEnd(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, writeEnd.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, writeEnd.get(), STDERR_FILENO);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, p.executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  writeEnd.reset();
  if (rc != 0) return failHere("cannot start " + p.executable.string() + ": " + std::strerror(rc));

  // Read lines as they come; every reported case restarts the kill timer.
  std::string pending, errorLine;
  auto caseStarted = Clock::now();
  bool timedOut = false;
  char buf[4096];
  for (;;) {
    int timeoutMs = -1;
    if (p.killAfterSeconds > 0) {
      const auto deadline = caseStarted + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(p.killAfterSeconds));
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        timedOut = true;
        break;
      }
      timeoutMs = static_cast<int>(std::min<long long>(left, 60'000));
    }
    pollfd pfd{readEnd.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, timeoutMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(readEnd.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // EOF: the child exited (or closed its output)
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      suite::CaseResult r;
      if (next < ids.size() && parseCaseLine(line, ids[next], r)) {
        const auto now = Clock::now();
        r.wallSeconds = std::chrono::duration<double>(now - caseStarted).count();
        caseStarted = now;
        results.push_back(std::move(r));
        ++next;
      } else if (line.rfind("sensode: ", 0) == 0 && errorLine.empty()) {
        errorLine = line;
      }
    }
  }
  if (timedOut) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Every case reported: a failure while the child shuts down is not theirs.
  if (next == ids.size()) return next - first;

  if (timedOut) {
    std::ostringstream m;
    m << "timed out: killed after " << p.killAfterSeconds << " s";
    failHere(m.str());
  } else if (WIFSIGNALED(status)) {
    failHere("crashed: " + signalName(WTERMSIG(status)));
  } else {
    failHere("worker exited with status " +
             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
             (errorLine.empty() ? std::string() : ": " + errorLine));
  }
  results.back().wallSeconds = std::chrono::duration<double>(Clock::now() - caseStarted).count();
  return next - first + 1;
}

}  // namespace

std::filesystem::path selfExecutable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path("sensode") : p;
}

std::vector<suite::CaseResult> CaseProcess::run(const std::vector<std::string>& ids) const {
  std::vector<suite::CaseResult> results;
  results.reserve(ids.size());
  for (std::size_t first = 0; first < ids.size();) first += runChild(*this, ids, first, results);
  return results;
}

}  // namespace sensode::cli
