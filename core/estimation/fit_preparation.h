// SPDX-License-Identifier: MIT
// The first phase of an estimation, the same on every rank: load the PEtab problem, resolve the
// parameters to fit against its table and lay out the fit (internal to core/estimation).
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "core/estimation/estimation.h"
#include "core/estimation/fit_objective.h"

namespace sensode::estimation::detail {

struct PreparedFit {
  std::optional<petab::Problem> problem;
  std::vector<EstimatedParameter> parameters;  // table order, as fitted
  FitSetup setup;                              // gradient and noise residuals not yet decided
  std::vector<int> freeTable;                  // PEtab parameter indices of the free ones
  std::vector<EstimatedParameter> freeParameters;
  std::vector<int> profiled;                   // positions in setup.free
};

// Throws Error (InvalidOptions, PetabError, ...) with the message an InvalidInput result gives.
PreparedFit prepareFit(const std::filesystem::path& yaml, const EstimationOptions& options);

}  // namespace sensode::estimation::detail
