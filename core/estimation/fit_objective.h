// SPDX-License-Identifier: MIT
// The PEtab objective as the local optimisers see it (internal to core/estimation): a function
// of the free parameters only (on their scales), either as weighted residuals with their exact
// Jacobian (least squares) or as a value with its gradient (quasi-Newton).
//
// Residuals (least squares), with ½Σ res² + a constant = the PEtab objective:
//   r_i = z_i/σ_i, z_i = m_i − y_i on the observable's transformed scale (lin, log, log10),
//       dr_i/dq = (dz/dy·dy/dq)/σ_i − r_i/σ_i·dσ_i/dq  (dy/dq, dσ/dq from forward sensitivities)
//   s_i = √(2 log σ_i + c), c = kNoiseOffset, when σ depends on estimated parameters: ½ s_i² =
//       log σ_i + c/2 carries the noise's normalisation (AMICI's and pyPESTO's "sigma
//       residuals"); ds_i/dq = dσ_i/dq/(σ_i s_i)
//   p_k = (v_k − μ_k)/σ_k for a normal prior of a free parameter (v its linear value, or its
//       value on the scale for parameterScaleNormal); uniform priors are constant in the bounds.
// The objective itself always comes from core/petab (not re-added from the residuals).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "core/common/progress.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"

namespace sensode::estimation::detail {

// Residual offset c of the noise residuals: σ down to e^(−c/2) ≈ 1e-11 keeps 2 log σ + c > 0.
constexpr double kNoiseOffset = 50;

struct FitSetup {
  // Every estimated parameter of the PEtab table (table order), on its scale: the values of
  // the fixed ones, and the template the free ones are written into.
  std::vector<double> point;
  std::vector<int> free;              // positions in `point` the optimiser moves
  std::vector<double> lower, upper;   // bounds of the free ones (scale)
  bool noiseResiduals = false;        // σ depends on estimated parameters
  petab::GradientMethod gradient = petab::GradientMethod::Forward;
  petab::ObjectiveOptions objective;
};

// Why the objective is not a sum of squares of the form above (Laplace noise, priors other
// than normal or uniform on free parameters), or nullopt.
std::optional<std::string> notLeastSquares(const petab::Problem& problem,
                                           const std::vector<int>& freeTableIndices);

class FitObjective {
 public:
  // `problem` must outlive this and be used by one thread at a time.
  FitObjective(const petab::Problem& problem, FitSetup setup, ProgressMonitor monitor);

  int size() const { return static_cast<int>(setup_.free.size()); }
  const FitSetup& setup() const { return setup_; }
  // The full point (all estimated parameters, table order) for free values x.
  std::vector<double> fullPoint(const double* x) const;

  struct Residuals {
    double objective = 0;  // the PEtab objective there
    Eigen::VectorXd values;
    Eigen::MatrixXd jacobian;  // values.size() × size()
    petab::ObjectiveResult evaluation;
  };
  // Throws what evaluateObjective throws (sensode::Error, Cancelled). Without `jacobian`: the
  // residuals alone (a simulation without sensitivities; jacobian and the evaluation's
  // sensitivities empty), counted as an objective evaluation, not a gradient evaluation.
  Residuals residuals(const double* x, bool jacobian = true);
  // The objective and, when gradient != nullptr, its gradient w.r.t. the free parameters.
  // Fallbacks of the gradient method (Forward → ssASA → adjoint → fd) go into fallbacks().
  double value(const double* x, double* gradient);

  long objectiveEvaluations() const { return evaluations_; }
  long gradientEvaluations() const { return gradientEvaluations_; }
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }
  // Evaluations with derivatives whose objective reported a fallback (ObjectiveResult::
  // fallbacks, e.g. steady-state sensitivities by integration where J_r is singular), and the
  // last such sentence.
  long fallbackEvaluations() const { return fallbackEvaluations_; }
  // Evaluations (objective or derivatives) that odeSD could not do and CVODES did
  // (ObjectiveOptions::forwardIntegrator odeSD; petab::kOdeSdFallback).
  long cvodesFallbacks() const { return cvodesFallbacks_; }
  const std::string& lastCvodesFallback() const { return lastCvodesFallback_; }
  const std::string& lastFallback() const { return lastFallback_; }

 private:
  const petab::Problem& problem_;
  FitSetup setup_;
  ProgressMonitor monitor_;
  std::vector<int> tableIndex_;  // PEtab parameter index of each position in `point`
  long evaluations_ = 0, gradientEvaluations_ = 0, fallbackEvaluations_ = 0;
  long cvodesFallbacks_ = 0;
  std::vector<std::string> fallbacks_;
  std::string lastFallback_, lastCvodesFallback_;
  void countIntegrator(const petab::ObjectiveResult& r) {
    if (r.integrator == setup_.objective.forwardIntegrator) return;
    ++cvodesFallbacks_;
    if (!r.fallbacks.empty()) lastCvodesFallback_ = r.fallbacks.front();
  }
  void countFallbacks(const petab::ObjectiveResult& r) {
    if (r.fallbacks.empty()) return;
    ++fallbackEvaluations_;
    lastFallback_ = r.fallbacks.back();
  }
};

// Σ over measurements of the weighted residuals' summaries and the Fisher information of the
// free parameters (expected information: normal and Laplace noise both give
// (dz/dq)ᵀ(dz/dq)/σ² for the location and 2(dσ/dq)ᵀ(dσ/dq)/σ² resp. (dσ/dq)ᵀ(dσ/dq)/σ² for the
// scale; normal priors (dv/dq)²/σ_prior²). `evaluation` needs simulatedSensitivities.
Eigen::MatrixXd fisherInformation(const petab::Problem& problem,
                                  const petab::ObjectiveResult& evaluation,
                                  const std::vector<int>& free);

// z/σ per measurement (NaN where not evaluated).
std::vector<double> weightedResiduals(const petab::Problem& problem,
                                      const petab::ObjectiveResult& evaluation);

}  // namespace sensode::estimation::detail
