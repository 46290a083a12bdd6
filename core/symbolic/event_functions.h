// SPDX-License-Identifier: MIT
// Compiled evaluators for a system's events (OdeSystem::events), as functions of (t, x, p): the
// trigger values, the continuous functions whose sign changes are where triggers can switch, the
// times of triggers that depend on t and p alone, and per event its delay, priority and
// assignment values. Tapes only (no native code: these are small and called only around events).
// Not thread-safe (tapes own scratch slots); one per simulation.
#pragma once

#include <vector>

#include "core/symbolic/delays.h"
#include "core/symbolic/ode_system.h"
#include "core/symbolic/tape.h"

namespace sensode::symbolic {

class EventFunctions {
 public:
  explicit EventFunctions(const OdeSystem& system);

  int numEvents() const { return static_cast<int>(events_.size()); }
  const EventDef& event(int e) const { return system_->events[static_cast<std::size_t>(e)]; }

  // out[e] = 1 when event e's trigger is true at (t, x), else 0.
  void triggers(double t, const double* x, const double* p, double* out) const;

  // Root functions g_k = a − b of every relational a ⋚ b inside a trigger that depends on the
  // states or on t in another way than t ⋚ c(p). Triggers can only switch where one of them
  // changes sign (or where a non-relational trigger jumps, which the driver bisects).
  int numRoots() const { return static_cast<int>(rootTape_.numOutputs() / 2); }
  void roots(double t, const double* x, const double* p, double* out) const;

  // Whether a trigger or a root function reads the states (or a delayed value): where none does,
  // the driver scans a step for switches without the states inside it.
  bool readsStates() const { return readsStates_; }

  // The times c(p) of relationals t ⋚ c(p) (time events): hit exactly rather than root-found.
  int numTimeRoots() const { return static_cast<int>(timeRootTape_.numOutputs()); }
  void timeRoots(const double* p, double* out) const;

  bool hasDelay(int e) const { return event(e).delay.has_value(); }
  double delay(int e, double t, const double* x, const double* p) const;
  bool hasPriority(int e) const { return event(e).priority.has_value(); }
  double priority(int e, double t, const double* x, const double* p) const;
  // New values of event e's assignments (in the order of EventDef::assignments).
  void assignmentValues(int e, double t, const double* x, const double* p, double* out) const;
  // Their scales (EventDef::assignments[i].scale), at the state before the execution.
  void assignmentScales(int e, double t, const double* x, const double* p, double* out) const;
  // ---- derivatives for the sensitivity jumps at events (built by enableDerivatives()) ----
  // Builds the tapes below. Differentiation adds nodes to the system's expression pool, so this
  // is done only for sensitivity runs (a plain time course leaves the shared pool untouched).
  void enableDerivatives();
  // Root function k: out = [∂g/∂x (nx), ∂g/∂p (np), ∂g/∂t].
  void rootGradient(int k, double t, const double* x, const double* p, double* out) const;
  // Event e's delay: out = [∂d/∂x (nx), ∂d/∂p (np), ∂d/∂t] (zeros for an event without one).
  void delayGradient(int e, double t, const double* x, const double* p, double* out) const;
  // Time root j: out = ∂c/∂p (np).
  void timeRootGradient(int j, const double* p, double* out) const;
  // Event e: for each assignment i (EventDef::assignments order), the row of the new state value
  // value_i × scale_i: out = [∂/∂x (nx), ∂/∂p (np), ∂/∂t] per assignment, one after another.
  void assignmentJacobian(int e, double t, const double* x, const double* p, double* out) const;

  // Sizes of the compartments of EventDef::rescaled (evaluated before and after an execution).
  void rescaleSizes(int e, double t, const double* x, const double* p, double* out) const;

  // delay() inside event math reads the history the simulation driver attaches (delays.h).
  void attachDelayHistory(const DelayInputSource* source) const { delayInputs_.attach(source); }

 private:
  struct PerEvent {
    Tape delay, priority, values, scales, sizes, jacobian, delayGradient;
  };
  const OdeSystem* system_;
  TapeInputs inputs_;
  std::vector<std::pair<Expr, Expr>> rootSides_;  // a_k, b_k of root function k
  std::vector<Expr> timeRootExprs_;               // c_j of time root j
  std::vector<Tape> rootGradients_, timeRootGradients_;
  bool derivatives_ = false;
  bool readsStates_ = true;
  Tape triggerTape_, rootTape_, timeRootTape_;
  std::vector<PerEvent> events_;
  mutable std::vector<double> sides_;  // a_k, b_k of every root function
  DelayInputs delayInputs_;
};

}  // namespace sensode::symbolic
