// SPDX-License-Identifier: MIT
#include "core/symbolic/algebraic_rules.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace sensode::symbolic {

std::vector<int> matchRulesToVariables(const std::vector<std::vector<int>>& candidatesOf,
                                       int numCandidates) {
  std::vector<int> ruleOf(static_cast<std::size_t>(numCandidates), -1);
  std::vector<char> visited;
  std::function<bool(int)> augment = [&](int rule) {
    for (const int c : candidatesOf[static_cast<std::size_t>(rule)]) {
      auto& seen = visited[static_cast<std::size_t>(c)];
      if (seen) continue;
      seen = 1;
      int& owner = ruleOf[static_cast<std::size_t>(c)];
      if (owner < 0 || augment(owner)) {
        owner = rule;
        return true;
      }
    }
    return false;
  };
  for (int r = 0; r < static_cast<int>(candidatesOf.size()); ++r) {
    visited.assign(static_cast<std::size_t>(numCandidates), 0);
    augment(r);
  }
  std::vector<int> variableOf(candidatesOf.size(), -1);
  for (int c = 0; c < numCandidates; ++c)
    if (ruleOf[static_cast<std::size_t>(c)] >= 0)
      variableOf[static_cast<std::size_t>(ruleOf[static_cast<std::size_t>(c)])] = c;
  return variableOf;
}

namespace {

// e is affine in z through sums and single-factor products only.
bool isAffineIn(const ExprPool& pool, Expr e, Expr z) {
  if (e == z || !pool.dependsOn(e, z)) return true;
  switch (pool.op(e)) {
    case Op::Add:
      return std::all_of(pool.children(e).begin(), pool.children(e).end(),
                         [&](Expr c) { return isAffineIn(pool, c, z); });
    case Op::Mul: {
      int dependent = 0;
      for (Expr c : pool.children(e)) {
        if (!pool.dependsOn(c, z)) continue;
        if (++dependent > 1 || !isAffineIn(pool, c, z)) return false;
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace

std::optional<Expr> solveLinear(ExprPool& pool, Expr e, Expr z) {
  if (!pool.dependsOn(e, z) || !isAffineIn(pool, e, z)) return std::nullopt;
  const Expr a = pool.diff(e, z);
  if (!pool.isConstant(a) || pool.node(a).value == 0 || !std::isfinite(pool.node(a).value))
    return std::nullopt;
  const Expr r = pool.substitute(e, {{z, pool.zero()}});
  return pool.mul(pool.constant(-1.0 / pool.node(a).value), r);
}

ConservedPools conservedPools(const Eigen::MatrixXd& N) {
  ConservedPools out;
  Eigen::FullPivLU<Eigen::MatrixXd> lu(N.transpose());
  out.rank = static_cast<int>(lu.rank());
  out.L = lu.kernel().transpose();  // rows l with N^T l = 0
  if (out.rank == N.rows()) out.L.resize(0, N.rows());
  const double scale = out.L.size() > 0 ? out.L.cwiseAbs().maxCoeff() : 1.0;
  for (Eigen::Index i = 0; i < out.L.size(); ++i)
    if (std::abs(out.L.data()[i]) < 1e-12 * scale) out.L.data()[i] = 0;
  return out;
}

}  // namespace sensode::symbolic
