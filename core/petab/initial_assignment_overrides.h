// SPDX-License-Identifier: MIT
// PEtab: a condition table's value for a species, parameter or compartment wins over the SBML
// initial assignment of that entity (PEtab v1, condition table: "the value ... overrides the
// initial value given in the SBML model, including initial assignments"). The ODE builder folds
// initial assignments into x₀(p) and into the constants that depend on them, so a condition
// cannot reach such an entity through a model parameter. Before the model is built, each
// condition-table target that has an initial assignment is made a free constant (a model
// parameter of its kind: global parameter, species initial value in its SBML units —
// concentration unless hasOnlySubstanceUnits, as the assignment gave it — or compartment size),
// and its assignment's math is kept as that parameter's default: a condition whose cell is empty
// or NaN, and the problem's nominal point, give the parameter the assignment's value as a
// function of the other parameters (so gradients still flow through it).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/symbolic/ode_system.h"

namespace sensode::petab {

// A model parameter that was the target of an initial assignment, and that assignment's value as
// an expression of the model parameters (symbols of OdeSystem::params).
struct InitialAssignmentDefault {
  int param = -1;  // index into OdeSystem::params
  symbolic::Expr value = 0;
};

// A target whose initial assignment now belongs to the hidden constant parameter `hiddenId`.
struct FreedTarget {
  std::string id, hiddenId;
};

// Removes the initial assignments of the species, parameters and compartments among `targets`
// (other ids are ignored) from `model`, gives each a placeholder value so that it becomes a free
// constant, and keeps its math as the initial assignment of a hidden constant parameter.
std::vector<FreedTarget> freeInitialAssignmentTargets(model::Model& model,
                                                      const std::set<std::string>& targets);

// After buildOdeSystem on the model above: the defaults of the freed targets in dependency order
// (a default never depends on a later one), with the hidden parameters' outputs removed from
// `system` and each freed parameter's nominal value set to its default at the nominal point.
std::vector<InitialAssignmentDefault> takeInitialAssignmentDefaults(
    symbolic::OdeSystem& system, const std::vector<FreedTarget>& freed);

}  // namespace sensode::petab
