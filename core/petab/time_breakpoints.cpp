// SPDX-License-Identifier: MIT
#include "core/petab/time_breakpoints.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace sensode::petab {

std::vector<double> breakpointTimes(const std::vector<TimeBreakpoint>& breakpoints) {
  std::vector<double> t;
  for (const auto& b : breakpoints) t.push_back(b.time);
  return t;
}

std::vector<TimeBreakpoint> timeBreakpoints(const symbolic::OdeSystem& system,
                                            const std::vector<double>& theta, double tStart,
                                            double tEnd, bool* ambiguous) {
  using symbolic::Expr;
  using symbolic::Op;
  symbolic::ExprPool& pool = *system.pool;
  // Parameters carry θ, time 0 (for the offset below), states NaN: a threshold that depends on
  // states is not finite and is skipped (state-dependent switches are events, not breakpoints).
  std::vector<double> values(pool.numSymbols(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t k = 0; k < system.params.size() && k < theta.size(); ++k)
    values[pool.node(system.params[k].symbol).symbol] = theta[k];
  values[pool.node(system.time).symbol] = 0;
  std::unordered_set<Expr> states;
  for (const auto& s : system.states) states.insert(s.symbol);
  const auto stateFree = [&](Expr e) {
    for (Expr d : pool.dependencies(e))
      if (states.count(d)) return false;
    return true;
  };
  // e = slope·t + offset with slope and offset functions of the parameters only.
  const auto linearInTime = [&](Expr e, double& slope, double& offset) {
    if (!stateFree(e)) return false;
    const Expr de = pool.diff(e, system.time);
    if (pool.dependsOn(de, system.time) || !stateFree(de)) return false;
    slope = pool.evaluate(de, values);
    offset = pool.evaluate(e, values);
    return std::isfinite(slope) && std::isfinite(offset);
  };

  std::vector<TimeBreakpoint> out;
  std::unordered_set<Expr> seen;
  std::vector<Expr> stack(system.rhs.begin(), system.rhs.end());
  while (!stack.empty()) {
    const Expr e = stack.back();
    stack.pop_back();
    if (!seen.insert(e).second) continue;
    const Op op = pool.op(e);
    const std::vector<Expr> kids(pool.children(e).begin(), pool.children(e).end());
    // The importer writes `time < c` as `time − c < 0`: solve a(t) = b(t) for both sides linear.
    double sa = 0, oa = 0, sb = 0, ob = 0;
    if ((op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge) && kids.size() == 2 &&
        pool.dependsOn(e, system.time) && linearInTime(kids[0], sa, oa) &&
        linearInTime(kids[1], sb, ob) && sa != sb) {
      const double v = (ob - oa) / (sa - sb);
      if (std::isfinite(v) && v > tStart && v <= tEnd) {
        // a(τ) = b(τ) ⇒ dτ/dθ_k = −(∂a/∂θ_k − ∂b/∂θ_k)|_τ / (slope_a − slope_b).
        TimeBreakpoint b{v, std::vector<double>(system.params.size(), 0.0)};
        values[pool.node(system.time).symbol] = v;
        for (std::size_t k = 0; k < system.params.size(); ++k) {
          const Expr p = system.params[k].symbol;
          if (!pool.dependsOn(e, p)) continue;
          const double da = pool.evaluate(pool.diff(kids[0], p), values);
          const double db = pool.evaluate(pool.diff(kids[1], p), values);
          b.dTime[k] = -(da - db) / (sa - sb);
        }
        values[pool.node(system.time).symbol] = 0;
        out.push_back(std::move(b));
      }
    }
    for (Expr k : kids) stack.push_back(k);
  }
  std::sort(out.begin(), out.end(), [](const TimeBreakpoint& a, const TimeBreakpoint& b) {
    return a.time < b.time;
  });
  std::vector<TimeBreakpoint> merged;
  if (ambiguous) *ambiguous = false;
  for (auto& b : out) {
    if (!merged.empty() && merged.back().time == b.time) {
      if (merged.back().dTime != b.dTime && ambiguous) *ambiguous = true;
      continue;
    }
    merged.push_back(std::move(b));
  }
  return merged;
}

}  // namespace sensode::petab
