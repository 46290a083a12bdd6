// SPDX-License-Identifier: MIT
// An output whose formula has no value at a reported time (issue 16): Laske's
// F_rnp_nuc = 100·RNP_nuc/(RNP_nuc + RNP_cyt) is 0/0 at t = 0, where every species it reads is 0.
// Writing NaN with a successful status is silent garbage, and no method can give a number there
// (the limit along the trajectory is not a property of the formula), so the task refuses with the
// output, the time, the values its formula reads and the formula itself. A value the model makes
// non-finite on purpose — a parameter set to INF or NaN (SBML Test Suite case 00951), a constant
// formula such as INF or NaN (cases 00950, 01811, 01813) — is reported as it is: only a non-finite
// value computed from finite inputs is refused.
#pragma once

#include <cstddef>

#include "core/symbolic/compiled_model.h"
#include "core/tasks/task_common.h"

namespace sensode::tasks::detail {

// Throws InvalidInput when `value` (output `column` at time t, states x, parameters p) is not
// finite although every state and parameter its formula reads is finite; returns otherwise.
void checkOutputDefined(const symbolic::CompiledModel& model, const OutputColumn& column, double t,
                        const double* x, const double* p, double value);

// The same check for every value of a result laid out nt × columns (y) with states nt × nx.
void checkOutputsDefined(const symbolic::CompiledModel& model,
                         const std::vector<OutputColumn>& columns, const std::vector<double>& times,
                         const std::vector<double>& states, const std::vector<double>& p,
                         const std::vector<double>& values);

}  // namespace sensode::tasks::detail
