// SPDX-License-Identifier: MIT
// Which states and outputs a parameter can move at all, read from the model's expressions: the
// parameter reaches a state whose right-hand side or initial value mentions it, then every state
// whose right-hand side mentions a reached one, and an output that mentions it or a reached
// state. Every other sensitivity is exactly 0, whatever the method. Finite differences use it so
// that a quantity a parameter does not reach gets 0, not the runs' integration noise divided by
// the step (Lang's kPhFoxE = 5e-16 does not reach _Cyt__CCND ~1e11: the noise over a step of
// 2.7e-20 read as 3.5e16).
//
// "Mentions" includes conditions of piecewise expressions (a parameter that sets a switch time
// moves what the switch drives). Events, delays, algebraic states and fast reactions couple
// quantities outside the right-hand sides (assignments, histories, constraints): for such models
// there is no answer (every quantity counts as reached).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/symbolic/ode_system.h"

namespace sensode::sensitivity {

// Per entry of `params`: nx + outputRows.size() flags, states first, then the outputs in
// `outputRows` order (1 = reached); `outputRows` index CompiledModel::outputs()' rows (values,
// amounts, concentrations). nullopt for models whose coupling is not all in rhs/initial.
std::optional<std::vector<std::vector<char>>> structuralInfluence(
    const symbolic::OdeSystem& system, const std::vector<int>& params,
    const std::vector<std::size_t>& outputRows);

}  // namespace sensode::sensitivity
