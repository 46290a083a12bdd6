// SPDX-License-Identifier: MIT
// The subcommands of the `sensode` tool (see "Command-line contract" in ARCHITECTURE.md). Each
// takes the arguments after its name, prints its output, and returns the exit status; errors are
// thrown (UsageError for command-line mistakes, sensode::Error for everything else) and turned
// into the one-line stderr message by main().
#pragma once

#include <span>
#include <string>

namespace sensode::cli {

int runSimulate(std::span<const std::string> args);
int runSensitivities(std::span<const std::string> args);
int runTestSuite(std::span<const std::string> args);
int runSteadyState(std::span<const std::string> args);
int runGradient(std::span<const std::string> args);
int runEstimate(std::span<const std::string> args);

}  // namespace sensode::cli
