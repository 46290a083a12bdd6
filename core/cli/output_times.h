// SPDX-License-Identifier: MIT
// The output-time options that `simulate` and `sensitivities` share: either --times T1,T2,...
// (finite, >= 0, strictly ascending) or --t-end T (default 10) with --points N (default 101),
// linspace(0, T, N) with the last time exactly T.
#pragma once

#include <string>
#include <vector>

#include "core/cli/arguments.h"

namespace sensode::cli {

// Throws UsageError("<command>: <what is wrong>").
std::vector<double> outputTimesFromArguments(const Arguments& a, const std::string& command);

}  // namespace sensode::cli
