// SPDX-License-Identifier: MIT
// One start of the multistart as a free function: what threads, MPI ranks and a resumed run all
// call to compute start i (internal to core/estimation). The result depends only on the
// problem, the context and i — not on which thread or rank runs it, nor on the order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

#include "core/estimation/estimation.h"
#include "core/estimation/fit_objective.h"
#include "core/estimation/local_optimizers.h"
#include "core/estimation/work_units.h"

namespace sensode::estimation::detail {

// Everything a start needs besides its index and a copy of the problem; rebuilt identically on
// every rank from (problem, options, plan).
struct StartContext {
  std::filesystem::path yaml;  // for the workers' own copies of the problem
  FitSetup setup;              // gradient and noise residuals as the plan says
  bool leastSquares = true;
  LocalSettings settings;
  std::uint64_t seed = 1;      // of the redraws of a start that cannot be evaluated
  bool continueStalled = true;
  std::vector<std::vector<double>> starts;  // the plan's start points
};

// `setup` as prepared from the problem and options (bounds, free parameters), completed by the
// plan.
StartContext makeStartContext(const std::filesystem::path& yaml, FitSetup setup,
                              const StartPlan& plan, const EstimationOptions& options);

// Runs start `index` on `problem` (the caller's own copy). `stopped` is asked before the start
// begins; the monitor cancels it within one integration step (status Cancelled).
StartResult runStart(const petab::Problem& problem, const StartContext& context, int index,
                     const ProgressMonitor& monitor, const std::function<bool()>& stopped);

}  // namespace sensode::estimation::detail
