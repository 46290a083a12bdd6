// SPDX-License-Identifier: MIT
#include "core/symbolic/delays.h"


#include <algorithm>

#include "core/common/errors.h"

namespace sensode::symbolic {
namespace {

// Delay nodes reachable from e, children before parents (so a nested delay comes first).
void collectDelays(const ExprPool& pool, Expr e, std::vector<Expr>& seen, std::vector<char>& mark,
                   std::vector<Expr>& out) {
  std::vector<std::pair<Expr, bool>> stack{{e, false}};
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    if (mark[n] == 2) {
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      stack.back().second = true;
      for (Expr c : pool.children(n))
        if (mark[c] != 2) stack.push_back({c, false});
      continue;
    }
    stack.pop_back();
    mark[n] = 2;
    seen.push_back(n);
    if (pool.op(n) == Op::Delay) out.push_back(n);
  }
}

// A copy of e's children: building nodes moves the pool's child array under a span.
std::vector<Expr> childrenOf(const ExprPool& pool, Expr e) {
  return {pool.children(e).begin(), pool.children(e).end()};
}

bool containsDelay(const ExprPool& pool, Expr e) {
  std::vector<Expr> stack{e};
  std::vector<char> seen(pool.size(), 0);
  while (!stack.empty()) {
    const Expr n = stack.back();
    stack.pop_back();
    if (pool.op(n) == Op::Delay) return true;
    for (Expr c : pool.children(n))
      if (!seen[c]) seen[c] = 1, stack.push_back(c);
  }
  return false;
}

}  // namespace

void resolveDelays(OdeSystem& sys, const std::function<std::vector<Expr>()>& initialOverTime) {
  ExprPool& pool = *sys.pool;
  // Every expression that may hold a delay, with the element it belongs to.
  struct Site {
    Expr* expr;
    const std::string* element;
  };
  std::vector<Site> sites;
  for (std::size_t i = 0; i < sys.rhs.size(); ++i) sites.push_back({&sys.rhs[i], &sys.states[i].id});
  for (auto& o : sys.outputs)
    for (Expr* e : {&o.value, &o.amount, &o.concentration}) sites.push_back({e, &o.id});
  for (auto& ev : sys.events) {
    sites.push_back({&ev.trigger, &ev.id});
    if (ev.delay) sites.push_back({&*ev.delay, &ev.id});
    if (ev.priority) sites.push_back({&*ev.priority, &ev.id});
    for (auto& a : ev.assignments)
      for (Expr* e : {&a.value, &a.scale}) sites.push_back({e, &ev.id});
    for (auto& r : ev.rescaled) sites.push_back({&r.size, &ev.id});
  }

  std::vector<char> mark(pool.size(), 0);
  std::vector<Expr> seen, found;
  std::vector<const std::string*> elementOf;
  for (const Site& s : sites) {
    const std::size_t before = found.size();
    collectDelays(pool, *s.expr, seen, mark, found);
    for (std::size_t i = before; i < found.size(); ++i) elementOf.push_back(s.element);
  }
  // Initial values hold delays too (an assignment rule with delay() evaluated at t0).
  std::vector<Expr> initialDelays;
  for (Expr e : sys.initial) collectDelays(pool, e, seen, mark, initialDelays);
  if (found.empty() && initialDelays.empty()) return;
  // IDAS keeps no history of the solution; the method of steps lives in the ODE driver.
  if (sys.isDae()) {
    const bool inInitial = found.empty();
    throw UnsupportedFeature(sys.modelFile, inInitial ? "" : *elementOf.front(),
                             "delay in a differential-algebraic model (" +
                                 describeDelay(pool, inInitial ? initialDelays.front() : found.front()) +
                                 " with algebraic rules or fast reactions)");
  }

  const std::size_t np = sys.params.size();
  std::unordered_map<Expr, Expr> initialOfState;
  const std::vector<Expr> initial = initialOverTime();
  for (std::size_t i = 0; i < sys.states.size(); ++i) initialOfState[sys.states[i].symbol] = initial[i];
  for (std::size_t j = 0; j < found.size(); ++j) {
    const Expr node = found[j];
    const std::vector<Expr> kids = childrenOf(pool, node);
    const Expr value = kids[0], tau = kids[1], before = kids.size() > 2 ? kids[2] : kids[0];
    if (containsDelay(pool, value) || containsDelay(pool, tau) || containsDelay(pool, before))
      throw UnsupportedFeature(sys.modelFile, *elementOf[j],
                               "a delay inside another delay (" + describeDelay(pool, node) + ")");
    DelayDef d;
    d.node = node;
    d.element = *elementOf[j];
    d.value = value;
    d.tau = tau;
    // Before t0 every state is its initial value as a function of time (suite case 00940: a
    // species with initial assignment sin(10 t) echoes sin(10 (t − τ)) until t = τ).
    d.before = pool.substitute(before, initialOfState);
    const std::string base = "@delay" + std::to_string(j) + ":";
    d.z = pool.symbol(base + "z");
    d.w = pool.symbol(base + "w");
    d.q = pool.symbol(base + "q");
    for (std::size_t k = 0; k < np; ++k) {
      d.sigma.push_back(pool.symbol(base + "sigma:" + sys.params[k].id));
      d.omega.push_back(pool.symbol(base + "omega:" + sys.params[k].id));
    }
    sys.delays.push_back(std::move(d));
  }
  for (const DelayDef& d : sys.delays) sys.delayInputs.insert(sys.delayInputs.end(), {d.z, d.w, d.q});
  for (const DelayDef& d : sys.delays)
    sys.delayInputs.insert(sys.delayInputs.end(), d.sigma.begin(), d.sigma.end());
  for (const DelayDef& d : sys.delays)
    sys.delayInputs.insert(sys.delayInputs.end(), d.omega.begin(), d.omega.end());

  // The delay nodes are seeded into the rebuild memo, so rebuild() stops at them.
  std::unordered_map<Expr, Expr> toInputs, noLeaves;
  for (const DelayDef& d : sys.delays) toInputs[d.node] = d.z;
  for (const Site& s : sites) *s.expr = pool.rebuild(*s.expr, toInputs, noLeaves);
  // At t0, s = t0 − τ lies in the history before t0 (or is t0 itself).
  std::unordered_map<Expr, Expr> toValues;
  for (Expr node : initialDelays) {
    const std::vector<Expr> kids = childrenOf(pool, node);
    const std::unordered_map<Expr, Expr> back{{sys.time, pool.sub(sys.time, kids[1])}};
    toValues[node] = pool.substitute(kids.size() > 2 ? kids[2] : kids[0], back);
  }
  for (Expr& e : sys.initial) e = pool.rebuild(e, toValues, noLeaves);
  for (Expr e : sys.initial)
    if (containsDelay(pool, e))
      throw UnsupportedFeature(sys.modelFile, "", "a delay inside another delay in an initial value");
}

OdeSystem withoutDelays(const OdeSystem& system) {
  OdeSystem out = system;
  out.delays.clear();
  out.delayInputs.clear();
  out.delayFreeTwin.reset();
  if (system.delays.empty()) return out;
  ExprPool& pool = *out.pool;
  std::unordered_map<Expr, Expr> toValues;  // the input z of each delay → its g
  for (const DelayDef& d : system.delays) toValues[d.z] = d.value;
  auto present = [&](Expr& e) { e = pool.substitute(e, toValues); };
  for (Expr& e : out.rhs) present(e);
  for (auto& o : out.outputs)
    for (Expr* e : {&o.value, &o.amount, &o.concentration}) present(*e);
  for (auto& ev : out.events) {
    present(ev.trigger);
    if (ev.delay) present(*ev.delay);
    if (ev.priority) present(*ev.priority);
    for (auto& a : ev.assignments)
      for (Expr* e : {&a.value, &a.scale}) present(*e);
    for (auto& r : ev.rescaled) present(r.size);
  }
  return out;
}

std::string describeDelay(const ExprPool& pool, Expr node) {
  const std::vector<Expr> kids = childrenOf(pool, node);  // not the history before t0
  std::string text = "delay(" + pool.toString(kids[0]) + ", " + pool.toString(kids[1]) + ")";
  for (const std::string prefix : {"@x:", "@p:"})
    for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) text.erase(at, prefix.size());
  return text;
}

DelayInputs::DelayInputs(const OdeSystem& system)
    : np_(system.params.size()), hasDelays_(!system.delays.empty()), file_(system.modelFile) {
  if (!hasDelays_) return;
  extended_.assign(np_ + system.delayInputs.size(), 0.0);
  element_ = system.delays.front().element;
  delayText_ = describeDelay(*system.pool, system.delays.front().node);
}

const double* DelayInputs::extend(double t, const double* x, const double* p) const {
  if (!hasDelays_) return p;
  if (!source_)
    throw SbmlError(file_, element_,
                    "unsupported SBML feature: " + delayText_ +
                        " needs the history of the solution, which this computation does not keep");
  std::copy_n(p, np_, extended_.data());
  source_->fill(t, x, p, extended_.data() + np_);
  return extended_.data();
}

const double* DelayInputs::extendWithoutHistory(const double* p) const {
  if (!hasDelays_) return p;
  std::copy_n(p, np_, extended_.data());
  return extended_.data();
}

Expr attachDelayHistories(ExprPool& pool, Expr e, const std::function<Expr(Expr)>& historyOf) {
  std::vector<char> mark(pool.size(), 0);
  std::vector<Expr> seen, nodes;
  collectDelays(pool, e, seen, mark, nodes);
  if (nodes.empty()) return e;
  std::unordered_map<Expr, Expr> memo, noLeaves;
  for (Expr node : nodes) {
    const std::vector<Expr> kids = childrenOf(pool, node);
    if (kids.size() == 2) memo[node] = pool.delay(kids[0], kids[1], historyOf(kids[0]));
  }
  return pool.rebuild(e, memo, noLeaves);
}

Expr withDelayHistoryBefore(ExprPool& pool, Expr e,
                            const std::unordered_map<Expr, Expr>& frozenRates) {
  std::vector<char> mark(pool.size(), 0);
  std::vector<Expr> seen, nodes;
  collectDelays(pool, e, seen, mark, nodes);
  std::unordered_map<Expr, Expr> memo, noLeaves;
  for (Expr node : nodes) {
    const std::vector<Expr> kids = childrenOf(pool, node);
    const Expr history = kids.size() > 2 ? kids[2] : kids[0];
    bool holdsRate = false;
    for (const auto& [placeholder, rate] : frozenRates)
      holdsRate = holdsRate || pool.dependsOn(history, placeholder);
    if (!holdsRate) continue;
    // Frozen rates may hold rateOf themselves: substitute until none is left.
    Expr before = history;
    for (std::size_t round = 0; round <= frozenRates.size(); ++round)
      before = pool.substitute(before, frozenRates);
    memo[node] = pool.delay(kids[0], kids[1], before);
  }
  return memo.empty() ? e : pool.rebuild(e, memo, noLeaves);
}

std::unordered_map<Expr, DelayInputChain> delayChainRule(const OdeSystem& sys) {
  ExprPool& pool = *sys.pool;
  std::unordered_map<Expr, DelayInputChain> chain;
  for (const DelayDef& d : sys.delays) {
    // u = z (slope w, delayed derivative sigma) or u = w (slope q, delayed derivative omega).
    auto build = [&](Expr slope, const std::vector<Expr>& delayed) {
      DelayInputChain c;
      const Expr minusSlope = pool.neg(slope);
      for (std::size_t i = 0; i < sys.states.size(); ++i) {
        const Expr dTau = pool.diff(d.tau, sys.states[i].symbol);
        if (dTau != pool.zero()) c.byState.push_back({static_cast<int>(i), pool.mul(minusSlope, dTau)});
      }
      for (std::size_t k = 0; k < sys.params.size(); ++k) {
        const Expr dTau = pool.diff(d.tau, sys.params[k].symbol);
        const Expr v = pool.add(delayed[k], pool.mul(minusSlope, dTau));
        if (v != pool.zero()) c.byParam.push_back({static_cast<int>(k), v});
      }
      c.byTime = pool.mul(slope, pool.sub(pool.one(), pool.diff(d.tau, sys.time)));
      return c;
    };
    chain[d.z] = build(d.w, d.sigma);
    chain[d.w] = build(d.q, d.omega);
  }
  return chain;
}

}  // namespace sensode::symbolic
