// SPDX-License-Identifier: MIT
// cc -O2 as a job that outlives the run which started it (docs/native-cache.md).
//
// Most runs a user starts from the CLI last milliseconds to seconds, far less than cc -O2 needs
// for a model's C (0.4–7 s for the PEtab models, minutes for Lang's). When the compile died with
// the run, such runs never got past tcc's object: every later run of the model evaluated tcc's
// unoptimised code (odeSD's time courses 0.83× CVODES's at the PEtab problems' measurement times
// with it, 0.71× with cc -O2's code; docs/benchmarks/performance.md §12). So the compile runs in
// a session of its own, writes into the cache folder, and goes on when the run ends; the next
// run of the model adopts its object as the cc entry (NativeCache::adoptPending).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace sensode::symbolic {

class NativeCache;

// False when $SENSODE_NATIVE_DETACH is "0", "off" or "false": the compile then ends with its run
// (a killed job), as before — for test suites that must not leave compiles running behind them.
bool detachedCompilesEnabled();

struct DetachedCompile {
  pid_t group = -1;  // the job's process group (kill(-group, …) ends it while its lock exists)
  std::filesystem::path source, object, log;  // its temporaries in the cache folder
};

// Writes `source` to a temporary .c in the cache folder and starts `command` (compiler and flags)
// `-o OBJECT SOURCE -lm` in a session of its own, with no terminal and no inherited descriptors
// but the log. When the compiler succeeds the job renames OBJECT to cache.pendingPath(key) and
// removes the log; whatever the outcome it then removes the C, OBJECT and key's lock, which the
// caller must hold (cache.tryLock(key)). False with `error` when the job could not be started
// (the lock is released then).
bool startDetachedCompile(const NativeCache& cache, const std::string& key,
                          const std::string& source, const std::vector<std::string>& command,
                          DetachedCompile& job, std::string& error);

// Ends a job that still holds key's lock and removes its files and the lock.
void killDetachedCompile(const NativeCache& cache, const std::string& key,
                         const DetachedCompile& job);

}  // namespace sensode::symbolic
