// SPDX-License-Identifier: MIT
#include "core/symbolic/reduced_system.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace sensode::symbolic {
namespace {

// Symbol values (indexed by symbol index) with every parameter at its nominal value.
std::vector<double> nominalSymbolValues(const OdeSystem& sys) {
  std::vector<double> v(sys.pool->numSymbols(), 0.0);
  for (const auto& p : sys.params) v[sys.pool->node(p.symbol).symbol] = p.nominal;
  return v;
}

}  // namespace

ConservationAnalysis analyzeConservation(const OdeSystem& sys) {
  ConservationAnalysis a;
  if (!sys.stoichiometryIsConstant) return a;
  std::unordered_map<int, int> column;  // state index → row of N
  for (int i = 0; i < sys.numStates(); ++i)
    if (sys.states[i].byReactions) {
      column[i] = static_cast<int>(a.species.size());
      a.species.push_back(i);
    }
  if (a.species.empty()) return a;
  Eigen::MatrixXd n = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(a.species.size()),
                                            static_cast<Eigen::Index>(sys.reactionIds.size()));
  for (const auto& e : sys.stoichiometry) n(column.at(e.state), e.reaction) += e.coefficient;

  const auto values = nominalSymbolValues(sys);
  std::vector<double> abundance;
  std::vector<std::string> ids;
  for (int i : a.species) {
    abundance.push_back(std::abs(sys.pool->evaluate(sys.initial[i], values)));
    ids.push_back(sys.states[i].id);
  }
  a.laws = model::findConservationLaws(n, abundance);
  a.descriptions = a.laws.describe(ids);
  for (int r = 0; r < a.laws.count(); ++r)
    a.totalIds.push_back("total_" + ids[a.laws.dependent[r]]);
  return a;
}

OdeSystem reduceSystem(const OdeSystem& sys, const ConservationAnalysis& a) {
  if (a.laws.count() == 0) return sys;
  OdeSystem out = sys;
  ExprPool& pool = *sys.pool;
  const auto values = nominalSymbolValues(sys);

  // x_D = T − Σ_{i independent} Γ_ri x_i, with T a new parameter per law.
  std::unordered_map<Expr, Expr> dependentValue;
  std::vector<char> isDependent(sys.states.size(), 0);
  for (int r = 0; r < a.laws.count(); ++r) {
    double total = 0;
    std::vector<Expr> terms;
    for (int c = 0; c < static_cast<int>(a.species.size()); ++c) {
      const double g = a.laws.gamma(r, c);
      if (g == 0.0) continue;
      const auto& st = sys.states[a.species[c]];
      total += g * pool.evaluate(sys.initial[a.species[c]], values);
      if (c != a.laws.dependent[r]) terms.push_back(pool.mul(pool.constant(-g), st.symbol));
    }
    const std::string& id = a.totalIds[r];
    const Expr t = pool.symbol("@p:" + id);
    out.params.push_back({id, ParamKind::GlobalParameter, total, t});
    terms.push_back(t);
    const int dep = a.species[a.laws.dependent[r]];
    isDependent[dep] = 1;
    dependentValue[sys.states[dep].symbol] = pool.add(terms);
  }

  out.states.clear();
  out.rhs.clear();
  out.initial.clear();
  std::vector<int> newIndex(sys.states.size(), -1);
  for (std::size_t i = 0; i < sys.states.size(); ++i) {
    if (isDependent[i]) continue;
    newIndex[i] = static_cast<int>(out.states.size());
    out.states.push_back(sys.states[i]);
    out.rhs.push_back(pool.substitute(sys.rhs[i], dependentValue));
    out.initial.push_back(sys.initial[i]);
  }
  for (auto& o : out.outputs) {
    o.value = pool.substitute(o.value, dependentValue);
    o.amount = pool.substitute(o.amount, dependentValue);
    o.concentration = pool.substitute(o.concentration, dependentValue);
  }
  out.stoichiometry.clear();
  for (const auto& e : sys.stoichiometry)
    if (newIndex[e.state] >= 0) out.stoichiometry.push_back({newIndex[e.state], e.reaction, e.coefficient});
  return out;
}

}  // namespace sensode::symbolic
