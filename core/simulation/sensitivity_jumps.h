// SPDX-License-Identifier: MIT
// The jumps of forward sensitivities S = ∂x/∂p at an event (issue 15), from the exact symbolic
// derivatives of EventFunctions: with h the trigger's root function and x⁺ = g(x⁻, p, τ),
//   dτ/dp = −(∂h/∂x·S⁻ + ∂h/∂p) / (∂h/∂x·f⁻ + ∂h/∂t),
//   S⁺ = ∂g/∂x·S⁻ + ∂g/∂p + (∂g/∂x·f⁻ + ∂g/∂t − f⁺)·dτ/dp.
// S is column-major nx × ns over the parameters `params` (indices into p).
#pragma once

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
