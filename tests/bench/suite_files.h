// SPDX-License-Identifier: MIT
// The SBML Test Suite models the benchmarks draw on: one SBML file per case (the highest
// level/version it ships), and the largest of them by file size.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace sensode::bench {

using SuiteFile = std::pair<std::string, std::filesystem::path>;  // case id, SBML file

// By case id; empty when the folder does not exist.
std::vector<SuiteFile> suiteCaseFiles(const std::filesystem::path& casesDir);

// The `count` largest files, largest first (ties by case id).
std::vector<SuiteFile> largestSuiteCaseFiles(const std::filesystem::path& casesDir, std::size_t count);

}  // namespace sensode::bench
