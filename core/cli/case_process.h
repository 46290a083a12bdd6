// SPDX-License-Identifier: MIT
// Runs SBML Test Suite cases in a child process (`sensode test-suite DIR --cases a,b,... --jobs 1
// --in-process ...`), so that a crash or a hang in one case becomes that case's failure instead
// of the end of the whole run. A batch of cases shares one child (starting one costs more than
// most cases); when the child dies, the case it was running fails with the cause ("crashed:
// SIGSEGV", "timed out: ...") and a new child takes the rest of the batch. POSIX only
// (posix_spawn, poll, waitpid).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/suite/suite_runner.h"

namespace sensode::cli {

struct CaseProcess {
  std::filesystem::path executable;  // this sensode binary
  std::filesystem::path casesDir;
  // Options passed on to the child (method, tolerances, per-case time limit).
  std::vector<std::string> childOptions;
  // The child is killed when one case takes longer than this many seconds (0 = never).
  double killAfterSeconds = 0;

  // Results for `ids`, in order.
  std::vector<suite::CaseResult> run(const std::vector<std::string>& ids) const;
};

// Path of the running executable (/proc/self/exe), or `argv0` when that cannot be read.
std::filesystem::path selfExecutable();

}  // namespace sensode::cli
