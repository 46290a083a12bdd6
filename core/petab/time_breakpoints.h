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

// Breakpoints in (tStart, tEnd], ascending and distinct: for every relational node (<, <=, >,
// >=) of the right-hand sides with `time` on one side and an expression of parameters only on
// the other, that expression's value under θ = `theta` (model parameter order).
std::vector<double> timeBreakpoints(const symbolic::OdeSystem& system,
                                    const std::vector<double>& theta, double tStart, double tEnd);

}  // namespace sensode::petab
