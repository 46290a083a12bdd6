// SPDX-License-Identifier: MIT
// OdeSystem's own lookups and the names of its enums (the builder is ode_builder.cpp).
#include "core/symbolic/ode_system.h"

#include <algorithm>
#include <cstddef>
#include <string>

namespace sensode::symbolic {

const char* toString(StateKind k) {
  switch (k) {
    case StateKind::SpeciesAmount: return "species amount";
    case StateKind::SpeciesConcentration: return "species concentration";
    case StateKind::Compartment: return "compartment size";
    case StateKind::Parameter: return "parameter";
    case StateKind::SpeciesReference: return "stoichiometry";
    case StateKind::ConservedPool: return "conserved pool of fast reactions";
  }
  return "?";
}

const char* toString(ParamKind k) {
  switch (k) {
    case ParamKind::GlobalParameter: return "global parameter";
    case ParamKind::LocalParameter: return "local parameter";
    case ParamKind::SpeciesInitial: return "species initial value";
    case ParamKind::CompartmentSize: return "compartment size";
    case ParamKind::Stoichiometry: return "stoichiometry";
  }
  return "?";
}

namespace {
template <class V>
int findById(const V& v, const std::string& id) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].id == id) return static_cast<int>(i);
  return -1;
}
}  // namespace

int OdeSystem::findState(const std::string& id) const { return findById(states, id); }
bool OdeSystem::isDae() const {
  return std::any_of(states.begin(), states.end(), [](const StateVar& s) { return s.algebraic; });
}
int OdeSystem::findParam(const std::string& id) const { return findById(params, id); }
int OdeSystem::findOutput(const std::string& id) const { return findById(outputs, id); }

}  // namespace sensode::symbolic
