// SPDX-License-Identifier: MIT
// The conservation-reduced system (NUMERICS.md §8.2): with moieties Γ·x = T over the species
// amounts reactions change, the dependent species x_D = T − Γ_I·x_I are substituted into f, and
// the totals T become parameters. The steady-state solver and ssASA work on this system because
// its Jacobian J_r = J_II − J_ID·Γ_I is non-singular where the full one is not.
#pragma once

#include <string>
#include <vector>

#include "core/model/conservation_laws.h"
#include "core/symbolic/ode_system.h"

namespace sensode::symbolic {

struct ConservationAnalysis {
  // Indices (into OdeSystem::states) of the species-amount states the stoichiometry covers, in the
  // column order of `laws.gamma`.
  std::vector<int> species;
  model::ConservationLaws laws;
  // One text per law, e.g. "E + C", with the total's parameter id ("total_E").
  std::vector<std::string> descriptions;
  std::vector<std::string> totalIds;
};

// Finds the moieties of a system; empty (count() == 0) when there are none or the stoichiometry
// is not constant. Abundance ordering uses the nominal initial state.
ConservationAnalysis analyzeConservation(const OdeSystem& system);

// The reduced system: states without the dependent species, parameters extended by the totals
// (nominal values Γ·x0 at nominal parameters; ids from totalIds), the same outputs with x_D
// substituted. `initial` of the reduced states are the full ones.
OdeSystem reduceSystem(const OdeSystem& system, const ConservationAnalysis& analysis);

}  // namespace sensode::symbolic
