// SPDX-License-Identifier: MIT
// The solution's history for delay differential equations (method of steps): every accepted step
// of the integrator adds, per delay(g, τ), the values G(s) = g(s, x(s), p) at five equidistant
// points of the step taken from the integrator's dense output (odeSD: quintic Hermite or implicit
// sub-step, NUMERICS.md §2.7; CVODES: CVodeGetDky), and with sensitivities ∂G/∂p = ∂g/∂x·S(s) +
// ∂g/∂p there. The quartic through them gives the delay inputs of symbolic/delays.h at
// s = t − τ(t, x, p): z, w = dG/ds, q = d²G/ds², sigma, omega = ∂²G/∂s∂p. Before t0 every state
// is its initial value as a function of time: G(s) = before(s, p) (DelayDef::before; the SBML
// Test Suite's reading of the history, e.g. delay(sin(10 t), 0.2) = sin(−2) at t = 0), with its
// derivatives in closed form. At s = t0 the history is the solution (right-continuous).
//
// Discontinuities: the history's slope jumps at t0 (the constant initial history meets the
// solution), so the solution's derivatives jump at t0 + τ, t0 + 2τ, ...; breakpoints() lists them
// for the delays whose τ depends on the parameters only, and the driver restarts the integrator
// there, so that no step (and no interpolating quartic) straddles one. The driver also caps the
// step size at the smallest such τ, so that t − τ always lies in a finished step.
#pragma once

#include <vector>

#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/tape.h"

namespace sensode::simulation {

class DelayHistory final : public symbolic::DelayInputSource {
 public:
  explicit DelayHistory(const symbolic::OdeSystem& system);

  // Forward sensitivities for `paramIndices`: the history then keeps ∂G/∂p of those parameters
  // (the others' sigma and omega inputs stay 0). Differentiates g (adds nodes to the pool).
  void enableSensitivities(const std::vector<int>& paramIndices);
  // Clears the history; before t0 it is before(s, x0, p) (and with sensitivities its derivative
  // through x0 by s0, column-major nx × ns). `p` must outlive the run.
  void start(double t0, const double* x0, const double* p, const double* s0);
  // Appends the accepted step [ta, tb] (replacing whatever the history held after ta).
  void addStep(double ta, double tb, integrators::StepDenseOutput& dense);

  void fill(double t, const double* x, const double* p, double* inputs) const override;

  // Times t0 + τ_i + τ_j + ... (up to kBreakpointOrder delays) in (t0, tEnd] of the delays whose
  // τ depends on the parameters only, ascending and distinct.
  std::vector<double> breakpoints(double t0, double tEnd) const;
  // The smallest positive τ of those delays (+∞ when none).
  double smallestConstantDelay() const;

  // Propagated discontinuities up to this order: past it the solution is smooth enough for the
  // integrators' orders (odeSD 4-5, BDF up to 5).
  static constexpr int kBreakpointOrder = 6;

 private:
  static constexpr int kNodes = 5;  // samples per step (quartic)
  void sample(double s, const double* x, const double* sens, double* g, double* gp);
  void evaluateConstantTaus();

  const symbolic::OdeSystem* system_;
  int nx_ = 0, np_ = 0, nd_ = 0, ns_ = 0;
  std::vector<int> sensParams_;
  void fillBefore(std::size_t j, double s, double* inputs, double* sigma, double* omega) const;

  symbolic::Tape gTape_, tauTape_, gxTape_, gpTape_;
  // The history before t0 per delay: [b, ∂b/∂t, ∂²b/∂t²] and with sensitivities
  // [∂b/∂x (nx), ∂b/∂p (np), ∂²b/∂t∂x (nx), ∂²b/∂t∂p (np)].
  std::vector<symbolic::Tape> beforeTapes_, beforeSensTapes_;
  std::vector<bool> constantTau_;  // τ_j depends on p only
  std::vector<double> constantTauValue_;
  const double* p_ = nullptr;
  double t0_ = 0;
  std::vector<double> x0_, s0_;  // x and S at t0 (S: nx × ns)
  // Steps: [ta_k, tb_k] and per step kNodes × nd values (node-major), kNodes × nd × ns
  // sensitivities (node, delay, parameter).
  std::vector<double> ta_, tb_, values_, sens_;
  // Scratch.
  mutable std::vector<double> tau_;
  std::vector<double> xs_, ss_, gx_, gpFull_;
  mutable std::vector<double> before_;
};

}  // namespace sensode::simulation
