// SPDX-License-Identifier: MIT
// Continuations of finished starts at tighter integration tolerances (internal to
// core/estimation). At the estimation's rtol 1e-8 the objective's integration error hides the
// last descent in flat valleys, and the optimiser either stops early or stalls:
//   continueStalledStart  a start that stalled goes on by the run's own optimiser with rtol
//                         and atol divided by kPolishFactor and the run's stopping tolerances;
//                         if it stalls again at a lower point, once more, 100 times tighter
//                         again (kStalledContinuations, not below kTightestRtol). On
//                         Fujita_SciSignal2010 14 of 20 starts stalled at rtol 1e-8, where the
//                         objective's error is ~0.13 (2966.69 against 2966.8226 at 1e-12) and
//                         central differences of it grow as the step shrinks; the start that
//                         reaches the lowest basin stalled at −34.53 at 1e-8, went on to −34.90
//                         at 1e-10 and stalled again, and from there reached −45.80 at 1e-12
//                         (docs/benchmarks/estimation.md, session 13).
//   polishStart           the best few starts go on by L-BFGS and then (least squares)
//                         Levenberg–Marquardt at rtol and atol / kPolishFactor (or the start's
//                         own rtol when a stalled continuation went tighter), with the
//                         optimisers' ftol and xtol divided by kPolishStopFactor. A start in
//                         Elowitz_Nature2000's published basin stopped 0.05 above the published
//                         objective and, continued with rtol 1e-10 and ftol 1e-14, went 0.04
//                         below it. Only the best few are polished: the acceptance is about the
//                         best objective, and a polish costs evaluations at tighter tolerances.
// The polish keeps the continued point when its objective (at the tighter rtol) is below the
// start's; the stalled continuation when it is below the same start point's objective at the
// tighter rtol (the run's value there carries the error that stalled it). A kept point records
// the tighter rtol in StartResult::objectiveRtol. Iterations, evaluations and wall time
// add to the start's; the message says what was done. Neither throws (a failed continuation
// leaves the start as it was).
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
// Stalled continuations per start, and the tightest rtol they use: below ~1e-12 the
// integrators' own rounding is of the order of the tolerance.
constexpr int kStalledContinuations = 2;
constexpr double kTightestRtol = 1e-12;

// Continues `start` while its status is Stalled (otherwise does nothing).
void continueStalledStart(const petab::Problem& problem, const FitSetup& setup,
                          bool leastSquares, const LocalSettings& settings,
                          const ProgressMonitor& monitor, StartResult& start);

// Continues `start` (a finished start with a finite objective) from its final point; an
// L-BFGS that ends lower but on NLopt's failure counts as stalled.
void polishStart(const petab::Problem& problem, const FitSetup& setup, bool leastSquares,
                 const LocalSettings& settings, const ProgressMonitor& monitor, StartResult& start);

}  // namespace sensode::estimation::detail
