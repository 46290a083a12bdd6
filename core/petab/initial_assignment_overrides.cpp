// SPDX-License-Identifier: MIT
#include "core/petab/initial_assignment_overrides.h"

#include <algorithm>
#include <unordered_set>

#include "core/common/errors.h"

namespace sensode::petab {

namespace {

// Every id the model defines, so that a hidden parameter's id clashes with none.
std::unordered_set<std::string> modelIds(const model::Model& m) {
  std::unordered_set<std::string> ids;
  for (const auto& c : m.compartments) ids.insert(c.id);
  for (const auto& s : m.species) ids.insert(s.id);
  for (const auto& p : m.parameters) ids.insert(p.id);
  for (const auto& r : m.reactions) {
    ids.insert(r.id);
    for (const auto* refs : {&r.reactants, &r.products})
      for (const auto& sr : *refs)
        if (!sr.id.empty()) ids.insert(sr.id);
  }
  for (const auto& e : m.events) ids.insert(e.id);
  return ids;
}

// Makes `id` a free constant with a placeholder value; false when it is no species, parameter
// or compartment (a species reference keeps its assignment and the condition table refuses it).
bool makeFree(model::Model& m, const std::string& id) {
  // The placeholder is never used: the nominal value becomes the assignment's value
  // (takeInitialAssignmentDefaults), and every condition sets the parameter.
  constexpr double kPlaceholder = 0;
  for (auto& s : m.species)
    if (s.id == id) {
      // An initial assignment gives the species' value in its SBML units.
      s.initialAmount = s.hasOnlySubstanceUnits ? kPlaceholder : model::kNaN;
      s.initialConcentration = s.hasOnlySubstanceUnits ? model::kNaN : kPlaceholder;
      return true;
    }
  for (auto& p : m.parameters)
    if (p.id == id) {
      p.value = kPlaceholder;
      return true;
    }
  for (auto& c : m.compartments)
    if (c.id == id) {
      c.size = kPlaceholder;
      return true;
    }
  return false;
}

}  // namespace

std::vector<FreedTarget> freeInitialAssignmentTargets(model::Model& model,
                                                      const std::set<std::string>& targets) {
  std::vector<FreedTarget> freed;
  std::unordered_set<std::string> ids = modelIds(model);
  for (auto it = model.initialAssignments.begin(); it != model.initialAssignments.end();) {
    if (!targets.count(it->symbol) || !makeFree(model, it->symbol)) {
      ++it;
      continue;
    }
    std::string hidden = "petab_initial_assignment_of_" + it->symbol;
    while (ids.count(hidden)) hidden += "_";
    ids.insert(hidden);
    model::Parameter p;
    p.id = hidden;
    p.constant = true;
    model.parameters.push_back(p);
    freed.push_back({it->symbol, hidden});
    const model::InitialAssignment moved{hidden, it->math};
    it = model.initialAssignments.erase(it);
    it = model.initialAssignments.insert(it, moved) + 1;
  }
  return freed;
}

std::vector<InitialAssignmentDefault> takeInitialAssignmentDefaults(
    symbolic::OdeSystem& system, const std::vector<FreedTarget>& freed) {
  symbolic::ExprPool& pool = *system.pool;
  std::vector<InitialAssignmentDefault> pending;
  for (const FreedTarget& f : freed) {
    const int k = system.findParam(f.id), o = system.findOutput(f.hiddenId);
    if (k < 0 || o < 0)
      throw Error(system.modelFile + ": '" + f.id +
                  "': its initial assignment could not be replaced by the condition table");
    pending.push_back({k, system.outputs[static_cast<std::size_t>(o)].value});
    system.outputs.erase(system.outputs.begin() + o);
  }
  // Dependency order: a default may use another freed parameter (V = u_2 with u_2 freed too).
  std::vector<InitialAssignmentDefault> ordered;
  while (!pending.empty()) {
    const auto ready = std::find_if(pending.begin(), pending.end(), [&](const auto& d) {
      return std::none_of(pending.begin(), pending.end(), [&](const auto& other) {
        return pool.dependsOn(d.value, system.params[static_cast<std::size_t>(other.param)].symbol);
      });
    });
    if (ready == pending.end())  // the builder has already refused cyclic assignments
      throw Error(system.modelFile + ": initial assignments of condition-table targets form a cycle");
    ordered.push_back(*ready);
    pending.erase(ready);
  }
  // Nominal values: each default at the nominal point, earlier defaults included.
  std::vector<double> values(pool.numSymbols(), 0.0);
  for (const auto& p : system.params) values[pool.node(p.symbol).symbol] = p.nominal;
  for (const auto& d : ordered) {
    auto& p = system.params[static_cast<std::size_t>(d.param)];
    p.nominal = pool.evaluate(d.value, values);
    values[pool.node(p.symbol).symbol] = p.nominal;
  }
  return ordered;
}

}  // namespace sensode::petab
