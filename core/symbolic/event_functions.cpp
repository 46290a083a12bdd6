// SPDX-License-Identifier: MIT
#include "core/symbolic/event_functions.h"

#include <algorithm>
#include <set>

#include "core/common/errors.h"
#include "core/symbolic/delays.h"

namespace sensode::symbolic {

namespace {

bool isRelational(Op op) {
  return op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge || op == Op::Eq ||
         op == Op::Ne;
}

// Every relational node reachable from e (each once).
void collectRelationals(const ExprPool& pool, Expr e, std::set<Expr>& seen,
                        std::vector<Expr>& out) {
  if (!seen.insert(e).second) return;
  if (isRelational(pool.op(e))) out.push_back(e);
  for (Expr c : pool.children(e)) collectRelationals(pool, c, seen, out);
}

}  // namespace

EventFunctions::EventFunctions(const OdeSystem& system) : system_(&system), delayInputs_(system) {
  // Read only: the pool is shared with the compiled model, so nothing new is built in it (a root
  // function a − b is taped as the pair a, b).
  const ExprPool& pool = *system.pool;
  TapeInputs& in = inputs_;
  in.time = system.time;
  for (const auto& s : system.states) in.x.push_back(s.symbol);
  for (const auto& p : system.params) in.p.push_back(p.symbol);
  // Value tapes also read the delay inputs after p (delay() in triggers and assignments).
  TapeInputs withDelays = in;
  withDelays.p.insert(withDelays.p.end(), system.delayInputs.begin(), system.delayInputs.end());

  std::vector<Expr> triggers, roots, timeRoots;
  std::set<Expr> seen, timeSet;
  std::set<std::pair<Expr, Expr>> rootSet;
  std::vector<Expr> relationals;
  for (const auto& ev : system.events) {
    triggers.push_back(ev.trigger);
    collectRelationals(pool, ev.trigger, seen, relationals);
  }
  auto dependsOnStates = [&](Expr e) {
    for (Expr s : pool.dependencies(e))
      if (s != system.time && std::find(in.p.begin(), in.p.end(), s) == in.p.end()) return true;
    return false;
  };
  for (Expr r : relationals) {
    const Expr a = pool.children(r)[0];
    const Expr b = pool.children(r)[1];
    // t ⋚ c(p) or c(p) ⋚ t: a time event, located exactly at c.
    if (!dependsOnStates(r)) {
      if (a == system.time && !pool.dependsOn(b, system.time)) {
        if (timeSet.insert(b).second) timeRoots.push_back(b);
        continue;
      }
      if (b == system.time && !pool.dependsOn(a, system.time)) {
        if (timeSet.insert(a).second) timeRoots.push_back(a);
        continue;
      }
      if (!pool.dependsOn(r, system.time)) continue;  // constant between events
    }
    if (rootSet.insert({a, b}).second) {
      roots.push_back(a);
      roots.push_back(b);
      rootSides_.emplace_back(a, b);
    }
  }
  readsStates_ = std::ranges::any_of(triggers, dependsOnStates) ||
                 std::ranges::any_of(roots, dependsOnStates);
  triggerTape_ = Tape(pool, withDelays, triggers);
  rootTape_ = Tape(pool, withDelays, roots);
  sides_.resize(roots.size());
  timeRootTape_ = Tape(pool, withDelays, timeRoots);
  timeRootExprs_ = timeRoots;
  for (const auto& ev : system.events) {
    PerEvent pe;
    const Expr zero = pool.zero();  // placeholders for an absent delay or priority
    pe.delay = Tape(pool, withDelays, std::vector<Expr>{ev.delay.value_or(zero)});
    pe.priority = Tape(pool, withDelays, std::vector<Expr>{ev.priority.value_or(zero)});
    std::vector<Expr> values, scales;
    for (const auto& a : ev.assignments) {
      values.push_back(a.value);
      scales.push_back(a.scale);
    }
    std::vector<Expr> sizes;
    for (const auto& r : ev.rescaled) sizes.push_back(r.size);
    pe.sizes = Tape(pool, withDelays, sizes);
    pe.values = Tape(pool, withDelays, values);
    pe.scales = Tape(pool, withDelays, scales);
    events_.push_back(std::move(pe));
  }
}

void EventFunctions::triggers(double t, const double* x, const double* p, double* out) const {
  triggerTape_.evaluate(t, x, delayInputs_.extend(t, x, p), out);
  for (int e = 0; e < numEvents(); ++e) out[e] = out[e] != 0 ? 1.0 : 0.0;
}

void EventFunctions::roots(double t, const double* x, const double* p, double* out) const {
  rootTape_.evaluate(t, x, delayInputs_.extend(t, x, p), sides_.data());
  for (int k = 0; k < numRoots(); ++k)
    out[k] = sides_[2 * static_cast<std::size_t>(k)] - sides_[2 * static_cast<std::size_t>(k) + 1];
}

void EventFunctions::timeRoots(const double* p, double* out) const {
  timeRootTape_.evaluate(0, nullptr, delayInputs_.extendWithoutHistory(p), out);  // reads no state
}

double EventFunctions::delay(int e, double t, const double* x, const double* p) const {
  double d = 0;
  events_[static_cast<std::size_t>(e)].delay.evaluate(t, x, delayInputs_.extend(t, x, p), &d);
  return d;
}

double EventFunctions::priority(int e, double t, const double* x, const double* p) const {
  double v = 0;
  events_[static_cast<std::size_t>(e)].priority.evaluate(t, x, delayInputs_.extend(t, x, p), &v);
  return v;
}

void EventFunctions::assignmentValues(int e, double t, const double* x, const double* p,
                                      double* out) const {
  events_[static_cast<std::size_t>(e)].values.evaluate(t, x, delayInputs_.extend(t, x, p), out);
}

void EventFunctions::assignmentScales(int e, double t, const double* x, const double* p,
                                      double* out) const {
  events_[static_cast<std::size_t>(e)].scales.evaluate(t, x, delayInputs_.extend(t, x, p), out);
}

void EventFunctions::enableDerivatives() {
  if (derivatives_) return;
  derivatives_ = true;
  ExprPool& pool = *system_->pool;
  // The jumps' derivatives would need the delay chain rule (delays.h) through the history.
  for (const auto& d : system_->delays)
    for (const auto& ev : system_->events) {
      bool uses = pool.dependsOn(ev.trigger, d.z);
      for (const auto& a : ev.assignments) uses = uses || pool.dependsOn(a.value, d.z);
      if (ev.delay) uses = uses || pool.dependsOn(*ev.delay, d.z);
      if (uses)
        throw UnsupportedFeature(system_->modelFile, ev.id,
                                 "sensitivities across an event whose math holds " +
                                     describeDelay(pool, d.node));
    }
  auto gradient = [&](Expr e, bool withStates, bool withTime) {
    std::vector<Expr> out;
    if (withStates)
      for (Expr x : inputs_.x) out.push_back(pool.diff(e, x));
    for (Expr p : inputs_.p) out.push_back(pool.diff(e, p));
    if (withTime) out.push_back(pool.diff(e, inputs_.time));
    return out;
  };
  for (const auto& [a, b] : rootSides_)
    rootGradients_.emplace_back(pool, inputs_, gradient(pool.sub(a, b), true, true));
  for (Expr c : timeRootExprs_) timeRootGradients_.emplace_back(pool, inputs_, gradient(c, false, false));
  for (std::size_t e = 0; e < events_.size(); ++e) {
    std::vector<Expr> rows;
    for (const auto& a : system_->events[e].assignments) {
      const std::vector<Expr> g = gradient(pool.mul(a.value, a.scale), true, true);
      rows.insert(rows.end(), g.begin(), g.end());
    }
    events_[e].jacobian = Tape(pool, inputs_, rows);
    events_[e].delayGradient =
        Tape(pool, inputs_, gradient(system_->events[e].delay.value_or(pool.zero()), true, true));
  }
}

void EventFunctions::rootGradient(int k, double t, const double* x, const double* p,
                                  double* out) const {
  rootGradients_[static_cast<std::size_t>(k)].evaluate(t, x, p, out);
}

void EventFunctions::delayGradient(int e, double t, const double* x, const double* p,
                                   double* out) const {
  events_[static_cast<std::size_t>(e)].delayGradient.evaluate(t, x, p, out);
}

void EventFunctions::timeRootGradient(int j, const double* p, double* out) const {
  timeRootGradients_[static_cast<std::size_t>(j)].evaluate(0, nullptr, p, out);
}

void EventFunctions::assignmentJacobian(int e, double t, const double* x, const double* p,
                                        double* out) const {
  events_[static_cast<std::size_t>(e)].jacobian.evaluate(t, x, p, out);
}

void EventFunctions::rescaleSizes(int e, double t, const double* x, const double* p,
                                  double* out) const {
  events_[static_cast<std::size_t>(e)].sizes.evaluate(t, x, delayInputs_.extend(t, x, p), out);
}

}  // namespace sensode::symbolic
