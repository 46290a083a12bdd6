// SPDX-License-Identifier: MIT
#include "core/symbolic/power_families.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace sensode::symbolic {
namespace {

// The exponent as r + k: r its single non-constant summand (or the exponent itself when it is
// not a sum), k the sum of its constant summands. False when it is not of that form.
bool splitExponent(const ExprPool& pool, Expr exponent, Expr& r, int& k) {
  if (pool.op(exponent) != Op::Add) {
    r = exponent;
    k = 0;
    return true;
  }
  double constant = 0;
  int nonConstant = 0;
  for (Expr c : pool.children(exponent)) {
    if (pool.isConstant(c)) {
      constant += pool.node(c).value;
    } else {
      r = c;
      ++nonConstant;
    }
  }
  if (nonConstant != 1 || constant != std::floor(constant) || std::abs(constant) > 64) return false;
  k = static_cast<int>(constant);
  return true;
}

bool normal(double v) {
  const double a = std::fabs(v);
  return a >= 2.2250738585072014e-308 && a <= 1.7976931348623157e308;
}

}  // namespace

std::unordered_map<Expr, PowerStep> powerFamilies(const ExprPool& pool, std::span<const Expr> nodes) {
  // (base, r) → (k, node), every member.
  std::map<std::pair<Expr, Expr>, std::vector<std::pair<int, Expr>>> families;
  for (Expr e : nodes) {
    if (pool.op(e) != Op::Pow) continue;
    const Expr base = pool.children(e)[0], exponent = pool.children(e)[1];
    if (pool.isConstant(exponent)) continue;  // integer and constant powers have their own ops
    Expr r = 0;
    int k = 0;
    if (splitExponent(pool, exponent, r, k)) families[{base, r}].push_back({k, e});
  }
  std::unordered_map<Expr, PowerStep> steps;
  for (auto& [key, members] : families) {
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end());
    const auto [kAnchor, anchor] = members.back();
    for (std::size_t i = 0; i + 1 < members.size(); ++i) {
      const int step = kAnchor - members[i].first;
      if (step >= 1 && step <= kMaxPowerStep) steps[members[i].second] = {anchor, step};
    }
  }
  return steps;
}

double powStep(double u, double anchor, int step, double exponent) {
  if (!normal(u) || !normal(anchor)) return std::pow(u, exponent);
  double v = anchor;
  for (int i = 0; i < step; ++i) v /= u;
  return v;
}

}  // namespace sensode::symbolic
