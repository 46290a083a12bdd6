// SPDX-License-Identifier: MIT
// Times at which the right-hand side jumps because a piecewise condition compares time with a
// constant (PEtab's step inputs: `piecewise(dose, time >= t_dose, 0)` with t_dose a parameter
// the condition table sets). A BDF step that straddles such a jump sees it as a huge local
// error: with forward sensitivities of a parameter that acts only after the jump (S = 0 before,
// so its error weight is 1/atol) CVODES cuts the step until t + h = t and fails (Weber at
// t = 24). Integrating up to the breakpoint exactly and restarting there removes the jump from
// every step.
#pragma once

#include <vector>

#include "core/symbolic/ode_system.h"

namespace sensode::petab {

// When the breakpoint τ depends on parameters (Beer's `time < tau` with tau estimated), moving
// it moves the jump: x(t > τ) changes by (f(τ⁻) − f(τ⁺))·dτ/dθ, a term the sensitivity
// equations (∂f/∂θ of a piecewise is 0 almost everywhere) do not contain. The forward pass adds
// it to S at τ, the adjoint adds λ(τ)ᵀ(f(τ⁻) − f(τ⁺))·dτ/dθ.
struct TimeBreakpoint {
  double time = 0;
  std::vector<double> dTime;  // dτ/dθ_k per model parameter (np)
  bool operator==(const TimeBreakpoint&) const = default;
};

// Breakpoints in (tStart, tEnd], ascending and distinct: for every relational node (<, <=, >,
// >=) of the right-hand sides whose sides are a(t) and b(t), both linear in time with
// coefficients of the parameters only, the time where a = b under θ = `theta` (model parameter
// order). Two conditions that switch at the same time with different dτ/dθ are one breakpoint
// with `ambiguous` set (the jump cannot be split between them).
std::vector<TimeBreakpoint> timeBreakpoints(const symbolic::OdeSystem& system,
                                            const std::vector<double>& theta, double tStart,
                                            double tEnd, bool* ambiguous = nullptr);
// Their times only.
std::vector<double> breakpointTimes(const std::vector<TimeBreakpoint>& breakpoints);

}  // namespace sensode::petab
