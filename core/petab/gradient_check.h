// SPDX-License-Identifier: MIT
// Every gradient method of the PEtab objective on one problem at one point, side by side: the
// PEtab counterpart of the GUI's Compare methods and what `sensode gradient --all-methods` and
// the collection test (tests/petab) print.
//
//   agreement(a, b) = max_k |g_a,k − g_b,k| / max_k max(|g_a,k|, |g_b,k|)
//
// (relative to the gradient's largest entry, so that entries near zero neither hide nor inflate
// a disagreement). Finite differences are "best of three steps": fourth-order central
// differences with each step of GradientCheckOptions::fdSteps (on the parameter scale), and per
// component the step whose value is closest to the mean of the analytic gradients — large steps
// have truncation error, small ones the integrator's noise divided by the step, and which wins
// differs per parameter.
//
// evaluateWithFallback() is what a default method does when it fails: the next method of the
// chain Forward → Ssasa → Adjoint → FiniteDifferences runs instead, and ObjectiveResult::fallbacks
// says why.
#pragma once

#include <string>
#include <vector>

#include "core/petab/objective.h"

namespace sensode::petab {

// max_k |a_k − b_k| / max_k max(|a_k|, |b_k|); 0 when both are zero; NaN when the sizes differ
// or either is empty.
double relativeDifference(const std::vector<double>& a, const std::vector<double>& b);

struct GradientCheckOptions {
  ObjectiveOptions objective;
  // The analytic methods to run (in this order).
  std::vector<GradientMethod> methods{GradientMethod::Forward, GradientMethod::Adjoint,
                                      GradientMethod::Ssasa};
  // Central-difference steps on the parameter scale; empty = no finite differences.
  std::vector<double> fdSteps{1e-3, 1e-4, 1e-5};
  // The finite differences' objectives at 100× tighter tolerances (integrator rtol, floor
  // 1e-13; steady-state criterion rtol, floor 1e-12): a difference quotient divides the
  // objective's noise by the step, and the steady-state criterion (rtol 1e-8) leaves noise of
  // ~1e-7 in a pre-equilibrated objective (Brannmark: FD off by 3.5e-2 with the defaults).
  bool fdTightTolerances = true;
  // Fourth-order central differences (ObjectiveOptions::fdOrder): twice the objectives, but
  // truncation O(h⁴) — Fujita's and Borghans's curvature left second-order differences 1e-2
  // off at every step where the noise allowed.
  int fdOrder = 4;
};

struct MethodRun {
  std::string label;  // "forward", "adjoint", "ssasa", "fd 1e-05", "fd best"
  GradientMethod method = GradientMethod::None;
  double fdStep = 0;    // finite differences: the step (0 for the analytic methods)
  bool ok = false;
  std::string error;    // why it failed (ok = false)
  double seconds = 0;   // wall time of the evaluation (objective + gradient)
  ObjectiveResult result;
};

struct GradientCheck {
  double objective = 0;  // from the first method that ran
  std::vector<std::string> parameterIds;
  // The analytic methods, then one run per finite-difference step, then (when any step ran and
  // an analytic gradient exists) "fd best": per component the step closest to the analytic mean
  // (its seconds: the sum of the steps' times).
  std::vector<MethodRun> runs;
  std::vector<double> fdBestStep;  // per component, the step "fd best" took
  // agreement[a][b] per relativeDifference over runs (NaN where either failed).
  std::vector<std::vector<double>> agreement;
  // Largest agreement among the analytic methods that ran (NaN when fewer than two ran), and
  // between "fd best" and each analytic method (NaN without both).
  double analyticSpread() const;
  double fdSpread() const;
  const MethodRun* find(const std::string& label) const;
};

GradientCheck checkGradients(const Problem& problem, const std::vector<double>& scaled,
                             const GradientCheckOptions& options = {},
                             const ProgressMonitor& monitor = {});

// evaluateObjective with `method`; when it fails with sensode::Error (not Cancelled, not an
// InvalidOptions), the next method of Forward → Ssasa → Adjoint → FiniteDifferences (those after
// `method`) runs instead, and the result's fallbacks name what failed and why. Rethrows the
// last failure when every method failed.
ObjectiveResult evaluateWithFallback(const Problem& problem, const std::vector<double>& scaled,
                                     GradientMethod method, const ObjectiveOptions& options = {},
                                     const ProgressMonitor& monitor = {});

}  // namespace sensode::petab
