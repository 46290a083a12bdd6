// SPDX-License-Identifier: MIT
#include "core/symbolic/detached_compile.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/symbolic/native_cache.h"

extern char** environ;

namespace sensode::symbolic {

namespace fs = std::filesystem;

bool detachedCompilesEnabled() {
  const char* v = std::getenv("SENSODE_NATIVE_DETACH");
  if (!v) return true;
  const std::string s = v;
  return !(s == "0" || s == "off" || s == "false" || s == "OFF" || s == "FALSE");
}

namespace {

// The job, as /bin/sh runs it: the subshell in the background is what outlives the run (the
// outer shell exits at once and is reaped by the caller); the session is the outer shell's, so
// its process group id stays valid while the subshell or the compiler live. Paths are arguments,
// never spliced into the script.
constexpr const char* kScript =
    "lock=$1 c=$2 o=$3 log=$4 pending=$5; shift 5\n"
    "( \"$@\" -o \"$o\" \"$c\" -lm >\"$log\" 2>&1 && mv -f \"$o\" \"$pending\" && rm -f \"$log\"\n"
    "  rm -f \"$c\" \"$o\" \"$lock\" ) </dev/null >/dev/null 2>&1 &\n";

}  // namespace

bool startDetachedCompile(const NativeCache& cache, const std::string& key,
                          const std::string& source, const std::vector<std::string>& command,
                          DetachedCompile& job, std::string& error) {
  std::error_code ec;
  const fs::path lock = cache.lockPath(key);
  job.source = cache.temporaryPath(key, ".c");
  job.object = cache.temporaryPath(key, ".so");
  job.log = cache.temporaryPath(key, ".log");
  auto fail = [&](const std::string& why) {
    fs::remove(job.source, ec);
    fs::remove(lock, ec);
    error = why;
    return false;
  };
  {
    std::ofstream out(job.source);
    out << source;
    if (!out) return fail("cannot write " + job.source.string());
  }
  std::vector<std::string> args = {"/bin/sh", "-c", kScript, "sensode-cc", lock.string(),
                                   job.source.string(), job.object.string(), job.log.string(),
                                   cache.pendingPath(key).string()};
  args.insert(args.end(), command.begin(), command.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // No descriptor of the run survives in the job: a caller reading the run's output through a
  // pipe ($(sensode …), a test harness) sees its end when the run ends, not when cc does.
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  // A session of its own: the terminal's Ctrl-C and hang-up reach the run, not the compile.
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int spawnError = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawnError != 0) return fail(std::string("cannot run /bin/sh: ") + std::strerror(spawnError));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail("/bin/sh could not start the compile (status " + std::to_string(status) + ")");
  job.group = pid;
  return true;
}

void killDetachedCompile(const NativeCache& cache, const std::string& key,
                         const DetachedCompile& job) {
  std::error_code ec;
  // While the lock exists the job's process group does too, so the id cannot name another's.
  if (job.group > 0 && fs::exists(cache.lockPath(key), ec)) kill(-job.group, SIGKILL);
  for (const fs::path& f : {job.source, job.object, job.log}) fs::remove(f, ec);
  fs::remove(cache.lockPath(key), ec);
}

}  // namespace sensode::symbolic
