// SPDX-License-Identifier: MIT
// odeSD: the second-derivative integrator of Gonnet, Dimopoulos, Widmer and Stelling,
// "A specialized ODE integrator for the efficient computation of parameter sensitivities",
// BMC Systems Biology 6:46 (2012), doi:10.1186/1752-0509-6-46, as specified and verified in
// NUMERICS.md §2–§5 (formulas, defaults and pitfalls there; section numbers below refer to it).
//
// Each step solves the implicit two-point Obrechkoff rule of order 4 on x, ẋ = f, ẍ = a = J f
//
//     x_{n+1} = x_n + (h/2)(f_n + f_{n+1}) + (h²/12)(a_n − a_{n+1})                 (R-O)
//
// with simplified Newton on W = I − (h/2)J + (h²/12)J_J, J and J_J evaluated at the predictor;
// W has the fixed union pattern of I, J and J_J, analysed once (KLU, or dense LU for
// nx ≤ IntegratorOptions::kDenseLimit, for a half-full W, and wherever KLU would save too little
// arithmetic: SparseLu::denseIsFaster). Without sensitivities W is kept across steps as CVODES
// keeps its Newton matrix (OdeSdOptions::jacobianReuseSteps, luReuseRatio); with them the
// sensitivity step needs J, J_J and W_s at x_{n+1} every step (sensitivityJacobianReuse). Phases:
//   1. step size: controller proposal, capped by maxStepSize and by z = h‖J‖₁ ≤ zMax (§4.3);
//      landing exactly on the stop time when one is set (setStopTime)
//   2. predictor (§2.3): Taylor-2 on the first step; quintic Hermite through (x, f, a) at
//      t_{n−1}, t_n when the previous step had z < 10; else quadratic extrapolation of x only
//   3. (J, J_J) at the predictor, W, LU (or the kept ones); Newton: rate-based test
//      ‖δ‖·min(1, ρ) ≤ κ = 0.1 in the weighted RMS norm, divergence ‖δ_m‖ > 2‖δ_{m−1}‖, at
//      most 4 iterations; failure → h/4 (with a kept W: first the same h with fresh J, J_J)
//   4. error estimate ε = W⁻¹(g5 − g4) with the closed-form variable-ratio coefficients of §2.4
//      (first step: ε = W⁻¹(x₁ − Taylor-2), exponent 1/3, §2.6); accept iff ‖ε‖ ≤ 1
//   5. staggered direct sensitivities (§3) when enabled: W_s at x_{n+1}, one LU, all parameter
//      columns in one solve; S in the error test unless disabled
//   6. step control (§2.5): σ = (1/(2‖ε‖))^{1/5} clipped to [0.2, 5], no growth after a
//      rejection or Newton failure or a slowly converging Newton; rejected:
//      h·max(0.2, 0.9‖ε‖^{−1/5})
// Output times never shorten steps: the integrator steps past tout and evaluates the dense
// output (§2.7): the quintic Hermite on steps with z < 1, otherwise an implicit sub-step of the
// same rule from the step start (the Hermite is polluted by stiff components there).
//
// Stiff tails (§4): the rule is A- but not L-stable (R(−∞) = +1), so near a stiff steady state
// the step size stalls. z = h‖J‖₁ is capped at zMax = 1e5 (or z = h·ρ̂, a power-iteration
// estimate of the spectral radius, with OdeSdOptions::stiffnessEstimate); when the cap cuts the
// controller's step on handoverAfter = 3 consecutive attempts, the rest of the integration (this
// and every later advanceTo) is handed to CVODES BDF, started from the current (t, x) (and S),
// and the statistics record handoverTime and handoverSteps. With sensitivities CVODES runs in the
// corrector IntegratorOptions::handoverCorrector (default Augmented: [x; S] as one vector;
// Staggered/Simultaneous: the forward sensitivity module).
//
// Statistics: every IntegratorStats field counts odeSD and, after a hand-over, CVODES together
// (steps − handoverSteps are odeSD's own steps). rhsEvals counts f evaluations,
// secondDerivativeEvals ẍ evaluations (f and ẍ are evaluated together), jacEvals and
// jacobianOfSecondEvals the (J, J_J) pair evaluations, luFactorizations LUs of W (Newton, dense
// output sub-steps and sensitivities).
//
// Points odeSD cannot step from (issue 16). Second-derivative methods need ẍ = J·f and
// J_J = ∂(J·f)/∂x, which can be infinite where f and J are finite (x^n, n < 2, at x = 0):
//   - J_J only builds the Newton matrix W (the rule and its error estimate use f and ẍ): its
//     non-finite entries are set to 0 there, counted, and reported in one fallback sentence;
//   - any other failure of a step or of the start (ẍ, J, J_J for the sensitivities, ∂f/∂p not
//     finite; Newton or error-test failures; step-size underflow) is bridged: CVODES BDF
//     integrates from the last accepted point until odeSD's derivatives are finite again at one
//     of its step ends (or to the output time), odeSD restarts there (OdeSdOptions::maxBridges,
//     IntegratorStats::fallbackSteps), and each bridge is a sentence in
//     IntegratorStats::fallbacks; a failure right after a bridge, or past maxBridges, hands the
//     rest of the run to CVODES.
// Failures throw IntegrationFailure with time, step size and the cause in a modeller's words
// (what(); the evaluator entry or iteration test in details()): when a bridge or the takeover
// fails too, the message names both attempts. Causes: Newton failing maxNewtonFailures times in
// a row, the error test failing maxErrorTestFailures times in a row, non-finite values (naming
// the state), too much work (IntegratorOptions::maxSteps per advanceTo), the step size
// underflowing t. The ProgressMonitor is checked every step.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "core/integrators/integrator.h"
#include "core/integrators/idas_integrator.h"

namespace sensode::integrators {

// odeSD-specific settings; the defaults are NUMERICS.md §5's measured configuration.
struct OdeSdOptions {
  // κ_N: converged when ‖δ_m‖·min(1, ρ_m) ≤ κ_N (weighted RMS; 1 = the error test's tolerance).
  // 0.33 rather than 0.1: 5–25 % fewer Newton iterations (Blasi 232 → 168, Okuonghae 115 → 69)
  // and errors within the bench's scatter (2026-11-26c).
  double newtonTolerance = 0.33;
  // κ_N while sensitivities are integrated: S_{n+1} is solved with J, J_J at x_{n+1}, so the
  // states' Newton error moves S too (Robertson at rtol 1e-8 with the LU reused: S error 9e-6
  // at 0.33 against a test bound of 1e-6).
  double sensitivityNewtonTolerance = 0.1;
  // Newton's last iterate kept with its own f and ẍ (no evaluation at a corrected point) when
  // its next correction, in error weights at the iterate itself, is within iterateTolerance of
  // the error test's tolerance after an observed contraction (d_m ≤ 0.3 d_(m−1)); states only
  // (not with sensitivities, not in dense-output sub-steps). 0 = off. Measured (2026-11-26c,
  // rtol 1e-6): f evaluations −3 to −13 % (Blasi 293 → 268, Elowitz 1334 → 1236, Zheng 201 →
  // 175, SalazarCavazos 508 → 461), errors unchanged but Boehm's hand-over run (9.9e-6 → 2.9e-5).
  // The weights matter: with those of the predictor (Newton's own) Alkan's error went 1.2e-5 →
  // 4.2e-3 (a component far below its predicted value gets a loose absolute allowance there);
  // 0.1 saved a little more but put Robertson at rtol 1e-8 over its reference bound (1.3e-7),
  // 0.33 cost Giordano's error ×3.6.
  double iterateTolerance = 0.03;
  int maxNewtonIterations = 4;   // per attempt; more → fewer Newton failures on stiff problems
  double zMax = 1e5;             // cap on z = h·(stiffness estimate) (§4.3)
  // The stiffness the cap uses: ‖J‖₁ (an upper bound of the spectral radius, possibly far
  // above it), or a power-iteration estimate of the spectral radius ρ(J) (never above ‖J‖₁),
  // computed only when ‖J‖₁ would cap the step. Measured on the 16 models that hand over
  // (docs/benchmarks/performance.md §3): the estimate saves steps (Bachmann 242 → 120) but not
  // time — odeSD's steps cost more than CVODES BDF's on those tails (median 1.07×, up to 1.7×
  // slower) — so ‖J‖₁ stays the default.
  enum class StiffnessEstimate { Norm1, SpectralRadius };
  StiffnessEstimate stiffnessEstimate = StiffnessEstimate::Norm1;
  int handoverAfter = 3;         // hand over to CVODES BDF when the cap cuts the controller's step
                                 // on this many consecutive attempts (0 = never: cap only)
  // Hand over to CVODES BDF when Newton keeps failing across accepted steps: every step whose
  // Newton fails to converge (once per step, however many attempts; not for non-finite values)
  // adds 1 to a load that decays by failureLoadDecay per accepted step, and the load reaching
  // failureHandoverLoad hands the rest of the run over (0 = never). The steady load of one such
  // step in k is 1/(1 − decay^k): 12.8 at k = 2, 8.7 at k = 3, so 12 hands over a run that fails
  // every second step for ~70 steps and never one that fails every third. Measured on
  // BIOMD0000000009 at atol 1e-12 (amounts of 1e-17–5e-12 mol: the tolerance does not control
  // the solution, which leaves the physical region near t = 15.7): 450960 steps with 225481
  // Newton failures, a failure after every growth of h from 2e-4 to 8e-4, without the guard.
  double failureHandoverLoad = 12;
  double failureLoadDecay = 0.96;
  double predictorSwitch = 10;   // quintic Hermite predictor when the previous step's z < this
  // Above predictorSwitch the predictor extrapolates x alone (f and ẍ carry the stiff
  // components' deviations amplified by z and z²), through the last stiffPredictorDegree + 1
  // points (2–4; 2 is the former quadratic). On stiff steps the first Newton correction was
  // 10³–10⁴ tolerances (Perelson: median 8.5e3 quadratic, 2.4e3 cubic, 6.7e2 quartic) and set
  // the 3–4 Newton iterations per step; the cubic saved 5–10 % of them at equal errors
  // (docs/benchmarks/integrators-inprocess-2026-11-26c.md), the quartic as much with more
  // scatter (Bachmann +8 % steps, Zheng's error ×1.7).
  int stiffPredictorDegree = 3;
  double denseSwitch = 1;        // quintic Hermite dense output when the step's z < this
  // Above denseSwitch the Hermite value at θ is kept when one Newton correction of the sub-step
  // rule from it, filtered through the step's own W(h) instead of a fresh W(θh), is within
  // denseTolerance·min(1, θh/h_W)² (weighted RMS; 1 = the error test's tolerance, the bound each
  // step's own error obeys). For dissipative modes W(θh) ≥ θ²W(h), so the estimate bounds the
  // Hermite value's distance to the sub-step's solution without an LU of W(θh). 0 = off (the
  // raw-residual test alone, as before).
  double denseTolerance = 1;
  int maxNewtonFailures = 10;    // consecutive Newton failures in one step before giving up
  int maxErrorTestFailures = 10; // consecutive error test failures in one step before giving up
  // Bridges over points odeSD cannot step from (non-finite ẍ or J_J where f and J are finite,
  // or any other failed step): CVODES BDF integrates from the last accepted point until odeSD's
  // derivatives are finite again at a CVODES step end after at least bridgeMinSteps steps (or to
  // the output time), then odeSD restarts. After maxBridges bridges the next failure hands the
  // rest of the run to CVODES. 0 = never: odeSD's failure is thrown.
  int maxBridges = 5;
  long bridgeMinSteps = 10;

  // Which sparse LU factorises W when the sparse solver is used (IntegratorOptions::linearSolver).
  enum class SparseBackend { Klu, EigenSparseLu };
  SparseBackend sparseBackend = SparseBackend::Klu;

  // With sensitivities (§3): reuse J(x_{n+1}), J_J(x_{n+1}) of the sensitivity step as the next
  // step's Newton Jacobians (halves Jacobian evaluations), and additionally the LU of W_s when h
  // is kept (a step-size hysteresis keeps h whenever the proposed factor is in [1, 1.2]).
  enum class JacobianReuse { None, Jacobians, JacobiansAndLu };
  JacobianReuse sensitivityJacobianReuse = JacobianReuse::None;

  // Without sensitivities: the Newton matrix kept across steps, as CVODES keeps its own. J and
  // J_J (the costly pair: J_J = ∂(J·f)/∂x) are re-evaluated only every jacobianReuseSteps
  // accepted steps, after a Newton failure, or when a kept matrix fails to converge; the LU of
  // W is kept while h stays within luReuseRatio of the h it was built for (W depends on h and
  // h²). A stale W slows Newton down but does not move the converged x_{n+1}; a Newton failure
  // with a kept matrix retries the same h with fresh Jacobians before h is cut. The error
  // estimate ε = W⁻¹D uses the kept W (W ≈ I on non-stiff components, a filter on stiff ones).
  // jacobianReuseSteps = 1: fresh J, J_J and LU on every attempt (the paper's scheme).
  int jacobianReuseSteps = 20;
  double luReuseRatio = 0.3;

  // Testing: > 0 takes steps of exactly this size (the last one shortened to the stop time)
  // without error control, cap or hand-over; a Newton failure is then an IntegrationFailure.
  double fixedStepSize = 0;
};

// What the step observer sees after every accepted odeSD step (diagnostics and tests).
struct OdeSdStepInfo {
  double t = 0;              // start of the step
  double h = 0;              // its size
  double z = 0;              // h‖J‖₁ with J at the predictor
  double error = 0;          // ‖ε‖ (weighted RMS; the states' part only)
  double predictorDistance = 0;  // ‖x_{n+1} − predictor‖ (weighted RMS, the error test's weights)
  int newtonIterations = 0;
  bool firstStep = false;    // estimate from the Taylor-2 comparison (§2.6)
  std::span<const double> xStart, xEnd;
  std::span<const double> errorEstimate;  // ε = W⁻¹D (estimates x(t+h) − x_{n+1})
};

class OdeSdIntegrator final : public Integrator {
 public:
  OdeSdIntegrator();
  ~OdeSdIntegrator() override;
  OdeSdIntegrator(const OdeSdIntegrator&) = delete;
  OdeSdIntegrator& operator=(const OdeSdIntegrator&) = delete;

  // Before initialize(); validated there (InvalidOptions).
  void setOdeSdOptions(const OdeSdOptions& options);
  const OdeSdOptions& odeSdOptions() const;
  // Steps never pass tStop and land exactly on it (CVodeSetStopTime); call after initialize().
  // Without a stop time the last step may pass the last output time (dense output).
  void setStopTime(double tStop);
  // Model evaluations at t ≥ tEnd take t as the double before tEnd: the left limit there of a
  // right-hand side that switches at tEnd (`time < τ`), for a run that stops at the switch
  // (its last step's end would otherwise see the next branch). Not honoured by CVODES's bridges
  // or hand-over.
  void setLeftLimitAt(double tEnd);
  // Called after every accepted odeSD step (not after the hand-over).
  void setStepObserver(std::function<void(const OdeSdStepInfo&)> observer);

  void initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                  const IntegratorOptions& options, double t0, const std::vector<double>& x0,
                  const std::vector<double>& p) override;
  void advanceTo(double tout, std::vector<double>& x, const ProgressMonitor& monitor) override;
  // Staggered direct sensitivities (§3). Call after initialize() and before the first advanceTo.
  void enableSensitivities(const std::vector<int>& paramIndices, const std::vector<double>& s0,
                           bool errorControl) override;
  void sensitivities(std::vector<double>& s) const override;
  // Called after every accepted step (after the step observer), and after a hand-over after
  // every CVODES step; the dense output is that of §2.7 (as for output times).
  void setStepCallback(StepCallback callback) override;
  double currentTime() const override;
  const IntegratorStats& stats() const override;
  Method method() const override { return Method::OdeSd; }

  // True when W is factorised by a sparse LU (KLU or Eigen SparseLU).
  bool usesSparseSolver() const;
  // True once the integration has been handed over to CVODES BDF.
  bool handedOver() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  // A differential-algebraic model (algebraic rules, fast reactions) is integrated by IDAS,
  // to which every call is forwarded; stats().fallbacks says so. Null for ODE models.
  std::unique_ptr<IdasIntegrator> dae_;
};

}  // namespace sensode::integrators
