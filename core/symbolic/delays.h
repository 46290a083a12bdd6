// SPDX-License-Identifier: MIT
// SBML delay(g, τ) in the symbolic pipeline. buildOdeSystem() leaves Op::Delay nodes in the math;
// resolveDelays() replaces each distinct one by the input symbols of its DelayDef (value and
// derivatives of g on the solution's history at t − τ), which the simulation driver fills before
// every evaluation (simulation/delay_history.h), and by g itself in initial values (the history
// before t0 is the initial value, so delay(g, τ) = g at t0).
//
// delayChainRule() gives the total derivatives of those inputs with respect to x(t), p and t,
// through τ(t, x, p): with s = t − τ,
//   dz/dx = −w ∂τ/∂x,  dz/dp_k = sigma_k − w ∂τ/∂p_k,  dz/dt = w (1 − ∂τ/∂t),
//   dw/dx = −q ∂τ/∂x,  dw/dp_k = omega_k − q ∂τ/∂p_k,  dw/dt = q (1 − ∂τ/∂t),
// which CompiledModel adds to every Jacobian (J, ∂f/∂p, ∂f/∂t, and those of ẍ and the outputs).
// So J·S + ∂f/∂p holds the delayed sensitivity terms ∂f/∂x_τ · S(t − τ) and, for a τ that depends
// on p or x, −∂f/∂x_τ · ẋ(t − τ) · dτ/dp.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/symbolic/ode_system.h"

namespace sensode::symbolic {

// The values of a system's delay inputs (OdeSystem::delayInputs, after p) at (t, x): what a
// simulation driver keeps of the solution's history (simulation/delay_history.h).
class DelayInputSource {
 public:
  virtual void fill(double t, const double* x, const double* p, double* inputs) const = 0;

 protected:
  ~DelayInputSource() = default;
};

// p followed by the delay inputs from an attached source, for the evaluators of a system with
// delays (CompiledModel, EventFunctions). Without delays it hands p through.
class DelayInputs {
 public:
  explicit DelayInputs(const OdeSystem& system);
  // Throws SbmlError naming the first delay when the system has delays and no source is attached.
  const double* extend(double t, const double* x, const double* p) const;
  // p followed by zeros (for evaluators that read no delay input: initial values, time roots).
  const double* extendWithoutHistory(const double* p) const;
  void attach(const DelayInputSource* source) const { source_ = source; }
  const DelayInputSource* source() const { return source_; }

 private:
  // Copies, not a pointer to the system: the owner (CompiledModel) is copied by clone().
  std::size_t np_ = 0;
  bool hasDelays_ = false;
  std::string file_, element_, delayText_;  // for the error without a source
  mutable std::vector<double> extended_;
  mutable const DelayInputSource* source_ = nullptr;
};

// "delay(S1, tau)": the delay as the modeller wrote it (the builder's @x:/@p: prefixes dropped).
std::string describeDelay(const ExprPool& pool, Expr node);

// Replaces every delay node of `system` (rhs, outputs, events, initial values) as described
// above. Throws SbmlError for a delay nested inside another delay's expression or τ.
// `initialOverTime` gives x0 per state with csymbol time kept (the history before t0); it is
// called only when the system has delays.
void resolveDelays(OdeSystem& system, const std::function<std::vector<Expr>()>& initialOverTime);

// The system with every delay(g, τ) read as g: what holds at a steady state, where the solution
// does not change and its past equals its present. Same states, parameters, outputs and events;
// no delays. (For steady states of delay models: core/tasks/steady_state_task.cpp.)
OdeSystem withoutDelays(const OdeSystem& system);

// `e` (SBML math before its symbols are resolved) with every delay(g, τ) given its history
// before t0, delay(g, τ, historyOf(g)). Called by the builder.
Expr attachDelayHistories(ExprPool& pool, Expr e, const std::function<Expr(Expr)>& historyOf);

// `e` with every delay(g, τ) whose g holds one of the rateOf placeholders of `frozenRates` given
// its history before t0, delay(g, τ, g with those placeholders replaced): there the states are
// frozen at x0, so rateOf(X) is ∂X/∂t only (SBML Test Suite cases 01400-01409). Called by the
// builder before rateOf is resolved.
Expr withDelayHistoryBefore(ExprPool& pool, Expr e,
                            const std::unordered_map<Expr, Expr>& frozenRates);

// Total derivative of an input symbol: per state, per parameter and with respect to t.
struct DelayInputChain {
  std::vector<std::pair<int, Expr>> byState;  // (state index, derivative), non-zero only
  std::vector<std::pair<int, Expr>> byParam;  // (parameter index, derivative), non-zero only
  Expr byTime;
};
// The chain rule of the z and w symbols of every delay (q, sigma, omega are treated as
// independent inputs: the second derivatives that would need them do not occur).
std::unordered_map<Expr, DelayInputChain> delayChainRule(const OdeSystem& system);

}  // namespace sensode::symbolic
