// SPDX-License-Identifier: MIT
// The final polish of the best starts (internal to core/estimation): each is continued from its
// end point by L-BFGS and then (least squares) Levenberg–Marquardt, with the integration
// tolerances (rtol, atol) divided by kPolishFactor and the optimisers' ftol and xtol by
// kPolishStopFactor. At the estimation's rtol 1e-8 the objective's integration noise
// hides the last descent in flat valleys: a start in Elowitz_Nature2000's published basin
// stopped 0.05 above the published objective and, continued with rtol 1e-10 and ftol 1e-14,
// went 0.04 below it (docs/benchmarks/estimation.md). Only the best few are polished: the
// acceptance is about the best objective, and a polish costs evaluations at tighter tolerances.
#pragma once

#include "core/estimation/estimation.h"
#include "core/estimation/fit_objective.h"
#include "core/estimation/local_optimizers.h"

namespace sensode::estimation::detail {

constexpr double kPolishFactor = 1e-2;
// NLopt's ftol and xtol compare consecutive evaluations: at 1e-10 the L-BFGS polish of a
// Crauste start in the published basin stopped after 9 iterations; at 1e-12 it went on for 182
// and 0.006 lower.
constexpr double kPolishStopFactor = 1e-4;

// Continues `start` (a finished start with a finite objective) from its final point, at the
// tighter tolerances; when that ends lower, the start takes the polished point, objective and
// status (an L-BFGS that ends lower but on NLopt's failure counts as stalled). Iterations,
// evaluations and wall time add to the start's; the message says what the polish did. Never throws (a failed polish leaves the start as it was).
void polishStart(const petab::Problem& problem, const FitSetup& setup, bool leastSquares,
                 const LocalSettings& settings, const ProgressMonitor& monitor, StartResult& start);

}  // namespace sensode::estimation::detail
