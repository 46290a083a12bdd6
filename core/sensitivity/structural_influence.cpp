// SPDX-License-Identifier: MIT
#include "core/sensitivity/structural_influence.h"

#include <unordered_map>

namespace sensode::sensitivity {

std::optional<std::vector<std::vector<char>>> structuralInfluence(
    const symbolic::OdeSystem& system, const std::vector<int>& params,
    const std::vector<std::size_t>& outputRows) {
  if (!system.events.empty() || !system.delays.empty() || system.isDae() ||
      !system.fastRateRow.empty())
    return std::nullopt;
  const symbolic::ExprPool& pool = *system.pool;
  const auto nx = static_cast<std::size_t>(system.numStates());
  std::unordered_map<symbolic::Expr, int> stateOf, paramOf;
  for (std::size_t i = 0; i < nx; ++i) stateOf[system.states[i].symbol] = static_cast<int>(i);
  for (std::size_t k = 0; k < system.params.size(); ++k)
    paramOf[system.params[k].symbol] = static_cast<int>(k);

  // The symbols of an expression, split into states and parameters (t and others ignored).
  struct Mentions {
    std::vector<int> states, params;
  };
  auto mentions = [&](std::initializer_list<symbolic::Expr> exprs) {
    Mentions m;
    for (const symbolic::Expr e : exprs) {
      for (const symbolic::Expr s : pool.dependencies(e)) {
        if (auto it = stateOf.find(s); it != stateOf.end()) m.states.push_back(it->second);
        if (auto it = paramOf.find(s); it != paramOf.end()) m.params.push_back(it->second);
      }
    }
    return m;
  };
  // readers[j]: the states whose right-hand side or initial value mentions x_j (an initial value
  // written in terms of another state's counts too); direct[k]: the states whose right-hand side
  // or initial value mentions p_k.
  std::vector<std::vector<int>> readers(nx), direct(system.params.size());
  for (std::size_t i = 0; i < nx; ++i) {
    const Mentions m = mentions({system.rhs[i], system.initial[i]});
    for (const int j : m.states)
      readers[static_cast<std::size_t>(j)].push_back(static_cast<int>(i));
    for (const int k : m.params) direct[static_cast<std::size_t>(k)].push_back(static_cast<int>(i));
  }
  // The rows of CompiledModel::outputs(): every output's value, then every amount, then every
  // concentration.
  const std::size_t ny = system.outputs.size();
  std::vector<Mentions> outputMentions;
  for (const std::size_t r : outputRows) {
    const symbolic::OutputVar& o = system.outputs[r % ny];
    outputMentions.push_back(
        mentions({r < ny ? o.value : r < 2 * ny ? o.amount : o.concentration}));
  }

  std::vector<std::vector<char>> reached;
  for (const int k : params) {
    std::vector<char> flags(nx + outputRows.size(), 0);
    std::vector<int> stack = direct[static_cast<std::size_t>(k)];
    while (!stack.empty()) {
      const auto i = static_cast<std::size_t>(stack.back());
      stack.pop_back();
      if (flags[i]) continue;
      flags[i] = 1;
      for (const int next : readers[i])
        if (!flags[static_cast<std::size_t>(next)]) stack.push_back(next);
    }
    for (std::size_t o = 0; o < outputRows.size(); ++o) {
      const Mentions& m = outputMentions[o];
      bool hit = false;
      for (const int q : m.params) hit = hit || q == k;
      for (const int j : m.states) hit = hit || flags[static_cast<std::size_t>(j)];
      flags[nx + o] = hit ? 1 : 0;
    }
    reached.push_back(std::move(flags));
  }
  return reached;
}

}  // namespace sensode::sensitivity
