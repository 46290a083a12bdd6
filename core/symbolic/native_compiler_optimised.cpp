// SPDX-License-Identifier: MIT
// NativeCompiler's optimised tier: cc -O2, through the cache as a detached job
// (detached_compile.h) or, without the cache, as a child of the run in a private folder.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/symbolic/native_cache.h"
#include "core/symbolic/native_compiler.h"

extern char** environ;

namespace sensode::symbolic {
namespace {

namespace fs = std::filesystem;

const char* const kFlags[] = {"-O2", "-shared", "-fPIC", "-ffp-contract=off"};

std::string compilerName() {
  const char* cc = std::getenv("SENSODE_CC");
  return cc && *cc ? cc : "cc";
}

std::string firstLines(const fs::path& file, std::size_t maxChars) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text.substr(0, maxChars);
}

}  // namespace

std::vector<std::string> NativeCompiler::compilerCommand() {
  std::vector<std::string> command = {compilerName()};
  for (const char* f : kFlags) command.emplace_back(f);
  return command;
}

std::string NativeCompiler::loadOptimisedEntry(bool hit) {
  std::string problem;
  const auto entry = cache_.find(key_, problem);
  if (!entry || entry->tier != "cc" || !loadEntry(*entry).empty()) return {};
  std::lock_guard lock(mutex_);
  status_.cacheHit = status_.cacheHit || hit;
  return entry->object.filename().string();
}

std::pair<NativeState, std::string> NativeCompiler::compileIntoCache() {
  // Another process (or an earlier run's job) may have compiled the model since it was loaded.
  cache_.adoptPending(key_);
  if (const std::string name = loadOptimisedEntry(true); !name.empty())
    return {NativeState::Ready, "ready (cache hit) " + name};
  if (compilerIdentity(compilerName()).find("(not found)") != std::string::npos)
    return {NativeState::NoCompiler, "cannot run '" + compilerName() + "': not found"};
  // One job per model: a concurrent run's job is waited for and its object adopted.
  const bool ours = cache_.tryLock(key_);
  if (ours) {
    std::string error;
    if (!startDetachedCompile(cache_, key_, source_, compilerCommand(), job_, error))
      return {NativeState::Failed, error};
    std::lock_guard lock(mutex_);
    jobRunning_ = true;
  }
  const std::string kb = std::to_string(source_.size() / 1024);
  source_.clear();
  source_.shrink_to_fit();
  setState(NativeState::Compiling,
           ours ? "compiling " + kb + " kB of C with cc -O2 (" + inUse() + " in use)"
                : "waiting for another run's cc -O2 compile of this model (" + inUse() + " in use)");
  while (cache_.locked(key_)) {
    std::unique_lock lock(mutex_);
    if (changed_.wait_for(lock, std::chrono::milliseconds(20), [this] { return cancel_; })) {
      if (!ours) return {NativeState::Cancelled, "cancelled (" + inUse() + " in use)"};
      if (detachedCompilesEnabled())
        return {NativeState::Cancelled, "cancelled; cc -O2 goes on after the run, and "
                                        "the model's next run loads its code (" + inUse() + " in use)"};
      lock.unlock();
      killDetachedCompile(cache_, key_, job_);
      std::lock_guard relock(mutex_);
      jobRunning_ = false;
      return {NativeState::Cancelled, "cancelled (" + inUse() + " in use)"};
    }
  }
  {
    std::lock_guard lock(mutex_);
    jobRunning_ = false;
  }
  const std::string adoption = cache_.adoptPending(key_);
  // This run's own compile is not a hit; another run's, waited for, is.
  if (const std::string name = loadOptimisedEntry(!ours); !name.empty())
    return {NativeState::Ready, (ours ? "ready (compiled) " : "ready (cache hit) ") + name};
  std::error_code ec;
  if (ours && fs::exists(job_.log, ec)) {
    const std::string log = firstLines(job_.log, 300);
    fs::remove(job_.log, ec);
    return {NativeState::Failed, "'" + command_ + "' failed: " + log};
  }
  return {NativeState::Failed, "cc -O2 left no loadable object (" + adoption + ")"};
}

void NativeCompiler::compileAfterTheRun() {
  if (!cacheUsable_ || source_.empty() || !detachedCompilesEnabled()) return;
  {
    std::lock_guard lock(mutex_);
    // Only a run whose optimised tier never started: a failed compile is not retried at exit,
    // and a job already running goes on by itself.
    if (status_.state != NativeState::Cancelled || status_.tier == EvaluationTier::Optimised ||
        jobRunning_)
      return;
  }
  std::error_code ec;
  if (fs::exists(cache_.pendingPath(key_), ec)) return;
  // No job for a compiler that is not there: its shell would fail at once and leave its log
  // behind (the in-run path makes the same test, compileIntoCache).
  if (compilerIdentity(compilerName()).find("(not found)") != std::string::npos) return;
  // A loop of short runs over many models starts one compile at a time, not one per model; the
  // models left get theirs at the end of a later run.
  if (cache_.compilesUnderWay() > 0 || !cache_.tryLock(key_)) return;
  DetachedCompile job;
  std::string error;
  startDetachedCompile(cache_, key_, source_, compilerCommand(), job, error);  // nothing to tell at exit
}

std::string NativeCompiler::compileOptimised(const fs::path& cFile, const fs::path& soFile,
                                             NativeState& failure) {
  const fs::path logFile = fs::path(soFile).replace_extension(".log");
  {
    std::ofstream out(cFile);
    out << source_;
    if (!out) return "cannot write " + cFile.string();
  }
  source_.clear();
  source_.shrink_to_fit();
  auto cleanup = [&](bool keepObject) {
    std::error_code ignored;
    fs::remove(cFile, ignored);
    fs::remove(logFile, ignored);
    if (!keepObject) fs::remove(soFile, ignored);
  };
  const std::string cc = compilerName();
  std::vector<std::string> args = {cc};
  for (const char* f : kFlags) args.emplace_back(f);
  args.insert(args.end(), {"-o", soFile.string(), cFile.string(), "-lm"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logFile.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // Its own process group, so that cancelling kills the driver's children (cc1, as) too.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int spawnError =
      posix_spawnp(&pid, cc.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawnError != 0) {
    cleanup(false);
    failure = NativeState::NoCompiler;
    return "cannot run '" + cc + "': " + std::strerror(spawnError);
  }
  // Poll rather than block, so that cancellation can kill the compiler; the thread is the
  // only one that waits for this child, so the pid cannot be reused under it.
  int wstatus = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &wstatus, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      cleanup(false);
      return "lost the compiler process";
    }
    std::unique_lock lock(mutex_);
    if (changed_.wait_for(lock, std::chrono::milliseconds(20), [this] { return cancel_; })) {
      lock.unlock();
      kill(-pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      cleanup(false);
      failure = NativeState::Cancelled;
      return "cancelled (" + inUse() + " in use)";
    }
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    const bool missing = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127;
    const std::string log = firstLines(logFile, 300);
    cleanup(false);
    failure = missing ? NativeState::NoCompiler : NativeState::Failed;
    return "'" + command_ + "' failed: " + log;
  }
  cleanup(true);
  return {};
}


}  // namespace sensode::symbolic
