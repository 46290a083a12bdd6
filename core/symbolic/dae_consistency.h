// SPDX-License-Identifier: MIT
// Consistent initial values of a differential-algebraic system (OdeSystem::isDae()): the
// algebraic states z solve 0 = g(t0, x_d, z, p) with the differential states x_d as the file
// gives them, and their sensitivities solve ∂g/∂z·S_z = −(∂g/∂x_d·S_d + ∂g/∂p). CompiledModel's
// initialState() and initialSensitivity() apply these, so every consumer (time course output at
// t0, sensitivities, steady states, PEtab) sees the same consistent start; IDAS's IDACalcIC then
// has nothing left to correct at t0 and repairs the algebraic states after events.
//
// ∂g/∂z must be non-singular (index 1); otherwise, or when Newton's method finds no solution,
// the error names the rules (constraints) involved.
#pragma once

#include <string>
#include <vector>

namespace sensode::symbolic {

class CompiledModel;

// Replaces the algebraic entries of x (nx values) by a solution of g = 0 near them. Damped
// Newton on the exact ∂g/∂z; converged when every Newton step is below 1e-12·(1 + |z_i|) and
// |g| ≤ 1e-9·(1 + scale of its terms). Throws Error naming the model file and the constraint.
void solveAlgebraicStates(const CompiledModel& model, double t, double* x, const double* p);

// S (column-major nx × np, dense) at a consistent (t, x): overwrites the algebraic rows.
void solveAlgebraicSensitivities(const CompiledModel& model, double t, const double* x,
                                 const double* p, std::vector<double>& s);

// Indices of the algebraic states, in state order.
std::vector<int> algebraicStates(const CompiledModel& model);

}  // namespace sensode::symbolic
