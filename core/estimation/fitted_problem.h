// SPDX-License-Identifier: MIT
// The best fit of an estimation as PEtab nominal values, and the PEtab problem written with them
// (core/petab/problem_writer.h): what `sensode estimate --out DIR` writes as DIR/problem.yaml and
// the estimation plugin's "Save fitted problem...", one function for both.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/estimation/estimation.h"
#include "core/petab/problem_writer.h"

namespace sensode::estimation {

// Every parameter of the fit (EstimationResult::parameters, the fixed ones at their values too)
// at the best point, on linear scale as PEtab nominal values are. Empty without a best point.
std::vector<std::pair<std::string, double>> bestFitNominalValues(const EstimationResult& result);

// Writes DIR/problem.yaml: the problem `yamlFile` with bestFitNominalValues() as its nominal
// values. Throws as petab::writeProblemWithNominalValues, and Error when the result has no best
// point.
petab::WrittenProblem writeFittedProblem(const std::filesystem::path& yamlFile,
                                         const EstimationResult& result,
                                         const std::filesystem::path& dir);

}  // namespace sensode::estimation
