// SPDX-License-Identifier: MIT
// The local optimisers of one start (internal to core/estimation), both bounded:
//   minimizeLeastSquares  Levenberg–Marquardt with an active set (least_squares.cpp) on the
//                         residuals and their exact Jacobian (FitObjective::residuals).
//   minimizeQuasiNewton   NLopt's L-BFGS (NLOPT_LD_LBFGS, bounds by projection) on the objective
//                         and its gradient (FitObjective::value).
// Neither throws for a failed evaluation: the optimiser treats it as a rejected step (LM) or
// an infinite objective (NLopt), and the result's message says what failed. A Cancelled from the
// objective's monitor ends the start with status Cancelled.
#pragma once

#include <string>
#include <vector>

#include "core/estimation/estimation.h"
#include "core/estimation/fit_objective.h"

namespace sensode::estimation::detail {

struct LocalSettings {
  int maxIterations = 500;
  double functionTolerance = 1e-8, parameterTolerance = 1e-8, gradientTolerance = 1e-6;
};

struct LocalResult {
  std::vector<double> x;  // free parameters at the end (the best point seen)
  double startObjective = std::numeric_limits<double>::quiet_NaN();
  double objective = std::numeric_limits<double>::infinity();
  int iterations = 0;
  StartStatus status = StartStatus::Failed;
  std::string message;
  // Failed before the first step because the start point could not be evaluated as the
  // optimiser needs it (least squares: with its Jacobian); the multistart redraws such a start.
  bool startNotEvaluable = false;
};

LocalResult minimizeLeastSquares(FitObjective& f, const std::vector<double>& x0,
                                 const LocalSettings& settings);
LocalResult minimizeQuasiNewton(FitObjective& f, const std::vector<double>& x0,
                                const LocalSettings& settings);

}  // namespace sensode::estimation::detail
