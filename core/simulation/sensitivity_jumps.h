// SPDX-License-Identifier: MIT
// The jumps of forward sensitivities S = ∂x/∂p at an event (issue 15), from the exact symbolic
// derivatives of EventFunctions: with h the trigger's root function and x⁺ = g(x⁻, p, τ),
//   dτ/dp = −(∂h/∂x·S⁻ + ∂h/∂p) / (∂h/∂x·f⁻ + ∂h/∂t),
//   S⁺ = ∂g/∂x·S⁻ + ∂g/∂p + (∂g/∂x·f⁻ + ∂g/∂t − f⁺)·dτ/dp.
// S is column-major nx × ns over the parameters `params` (indices into p).
#pragma once

#include <utility>
#include <vector>

#include "core/symbolic/compiled_model.h"
#include "core/symbolic/event_functions.h"

namespace sensode::simulation {

struct JumpContext {
  const symbolic::CompiledModel& model;
  const symbolic::EventFunctions& events;
  const double* p;
  const std::vector<int>& params;
};

// dτ/dp (ns values) for a trigger whose root function k crossed zero at (t, x) with S = S⁻.
// Throws Error when ∂h/∂x·f + ∂h/∂t = 0 there (a root touched, dτ/dp undefined).
std::vector<double> rootTimeDerivative(const JumpContext& c, int k, double t,
                                       const std::vector<double>& x, const std::vector<double>& s);
// dτ_e/dp of a delayed execution at τ_e = τ + d(τ, x(τ), p) for a trigger at (t, x) = (τ, x(τ))
// with S = S(τ) and dτ/dp = dTaudP: dτ/dp + ∂d/∂x·(S + f·dτ/dp) + ∂d/∂p + ∂d/∂t·dτ/dp.
std::vector<double> delayedExecutionTimeDerivative(const JumpContext& c, int e, double t,
                                                   const std::vector<double>& x,
                                                   const std::vector<double>& s,
                                                   const std::vector<double>& dTaudP);
// For a trigger that switched at (t, x) without a located root (a logical or piecewise trigger
// found by bisection on its value): the root function k whose zero is nearest to t by a Newton
// estimate |g_k| / |dg_k/dt| (within `window`), or the time root j with |c_j − t| ≤ window.
// Returns {root k, −1}, {−1, time root j}, or {−1, −1} when no continuous function of the
// trigger crosses zero there.
std::pair<int, int> switchingRoot(const JumpContext& c, double t, const std::vector<double>& x,
                                  double window);
// dτ/dp for a time event t ⋚ c_j(p): ∂c_j/∂p.
std::vector<double> timeEventDerivative(const JumpContext& c, int j);

// The total derivatives d(value_i)/dp_j = ∂g/∂x·(S + f·dτ/dp) + ∂g/∂p + ∂g/∂t·dτ/dp of event e's
// assignments at (t, x) (assignments × ns, row-major).
std::vector<double> assignmentValueDerivatives(const JumpContext& c, int e, double t,
                                               const std::vector<double>& x,
                                               const std::vector<double>& s,
                                               const std::vector<double>& dTaudP);

// S over one execution of event e that took the state from xMinus to xPlus: assigned rows get
// d(value)/dp − f⁺·dτ/dp, the others S + (f⁻ − f⁺)·dτ/dp.
void jumpSensitivities(const JumpContext& c, int e, double t, const std::vector<double>& xMinus,
                       const std::vector<double>& xPlus, const std::vector<double>& dValue,
                       const std::vector<double>& dTaudP, std::vector<double>& s);

}  // namespace sensode::simulation
