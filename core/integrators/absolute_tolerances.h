// SPDX-License-Identifier: MIT
// Per-state absolute tolerances: the user's atol bounds the error of the value the user reads.
//
// Species are integrated as amounts, but most are read in concentration (not
// hasOnlySubstanceUnits). One atol on the amounts means a different accuracy in every
// compartment: with a cell of 1e-15 L (many BioModels give sizes in litres) the amounts are
// ~1e-16, below the default atol of 1e-12, and the error test checks nothing — CVODES crossed
// Goldbeter1995's circadian clock (BIOMD0000000016) in 5 straight-line steps at rtol 1e-12, and
// the result changed with the number of output times. So a species state read in concentration
// gets atol × its compartment's size: the error of its concentration is then bounded by atol, as
// COPASI's tolerances on concentrations and libRoadRunner's concentration tolerance do
// (roadrunner issues #247, #360 and #1092, pull request #555). Every other state, and a species
// read as an amount, keeps atol.
#pragma once

#include <vector>

#include "core/symbolic/compiled_model.h"

namespace sensode::integrators {

// atol_i for every state of `model` at (t0, x0, p): atol / (∂value_i/∂x_i), where value_i is the
// output of state i's species in SBML semantics (concentration = amount / size, so the factor is
// the compartment's size at t0), or atol when that derivative is not a positive finite number
// (no such output, a 0-D compartment, a size of 0) or cannot be evaluated.
std::vector<double> absoluteTolerances(const symbolic::CompiledModel& model, double atol, double t0,
                                       const std::vector<double>& x0, const std::vector<double>& p);

}  // namespace sensode::integrators
