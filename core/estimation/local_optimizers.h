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
  // Least squares: geodesic acceleration of the LM step (least_squares.cpp).
  bool geodesicAcceleration = false;
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

// What the least-squares optimiser needs of its objective: FitObjective (through an adapter in
// least_squares.cpp), or a test function. evaluate throws sensode::Error for a point that cannot
// be evaluated, Cancelled to end the start.
class ResidualFunction {
 public:
  struct Values {
    double objective = 0;      // the objective reported (½|r|² + a constant)
    Eigen::VectorXd values;    // r
    Eigen::MatrixXd jacobian;  // dr/dx, empty when not asked for
  };
  virtual ~ResidualFunction() = default;
  virtual int size() const = 0;
  virtual const std::vector<double>& lower() const = 0;
  virtual const std::vector<double>& upper() const = 0;
  // The residuals, with their Jacobian when `jacobian` (without: the residuals alone, which for
  // an ODE model is one simulation without sensitivities).
  virtual Values evaluate(const double* x, bool jacobian) = 0;
};

LocalResult minimizeLeastSquares(FitObjective& f, const std::vector<double>& x0,
                                 const LocalSettings& settings);
LocalResult minimizeLeastSquares(ResidualFunction& f, const std::vector<double>& x0,
                                 const LocalSettings& settings);
LocalResult minimizeQuasiNewton(FitObjective& f, const std::vector<double>& x0,
                                const LocalSettings& settings);

}  // namespace sensode::estimation::detail
