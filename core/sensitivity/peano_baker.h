// SPDX-License-Identifier: MIT
// Peano–Baker sensitivity approximations (Eriksson et al., Numer. Math. 2026; NUMERICS.md §7):
// S = ∂x/∂p propagated over a grid t₀ < t₁ < … < t_K of an already computed state trajectory,
// with A = J(x(t)) and B = ∂f/∂p(x(t)) from the compiled model, instead of integrating the
// sensitivity equations Ṡ = A S + B together with the states.
//
// PBSR (Algorithm 2 with the switch 8.1), per grid interval [t_k, t_{k+1}], Δt = t_{k+1} − t_k:
//   n_int = ⌈refinement · Δt · ‖A_k‖₁⌉   (refinement = 10: sub-steps with Δt_sub‖A‖₁ ≈ 0.1)
//   exponential formula when n_int > maxSubintervals, or when the Jacobians are nearly constant:
//     ‖A_{k+1} − A_k‖₁ ≤ tol·max(‖A_k‖₁, tiny) and ‖B_{k+1} − B_k‖₁ ≤ tol·max(‖B_k‖₁, tiny)
//   otherwise PBS (4.6) on n_int equal sub-intervals, each
//     Î₁ = (h/2)(A_a + A_b),  Î₂ = (h²/4) A_b (A_a + A_b),
//     S ← (I + Î₁ + Î₂) (S + (h/2)(B_a + (I − Î₁ + Î₂) B_b))
//   with the states at the sub-grid points from the trajectory's dense output (§7.2: 10× more
//   accurate than the paper's linear interpolation on Chua).
// Exp (Algorithm 3): the exponential formula on every interval.
// The exponential formula is the stable augmented-matrix form of matrix_exponential.h (§7.3),
// with A, B at the interval midpoint x(t_k + Δt/2) (§7.4: the exponential midpoint rule, second
// order; the paper's left-point version is first order: Chua 1.6e-1 vs 5.1e-3) unless
// `midpoint` is off. PBS is O(Δt²) but only stable for Δt·ρ(A) ≤ 2; the n_int rule keeps it far
// inside (pitfall 7).
//
// Dense Eigen matrices: A is n × n, the cost per PBS sub-interval is one n³ product and two
// n²·ns products, per exponential step one structured expm (n × n products) — the dominant cost,
// which two things cut without changing the formula:
// - Reuse: E = e^{ΔtA} and Φ₁ depend on A and Δt only; when both are bitwise identical to the
//   previous exponential step's (constant Jacobian, equal interval), E and Φ₁ are reused — the
//   result is bit-identical to recomputing them. When only Δt differs (shiftExponential), by
//   rounding (equal output intervals such as 0.3 − 0.2 and 0.2 − 0.1), E and Φ₁ are kept as
//   they are (exact to working precision); when Δt is a little longer, they are shifted where
//   that is cheaper than a fresh exponential: e^{ΔtA} = e^{Δt_c A} e^{δA},
//   Φ₁(Δt) = Φ₁(Δt_c) + e^{Δt_c A} Φ₁(δ) (δ = Δt − Δt_c > 0: two products and a cheap e^{δA};
//   never δ < 0, where e^{δA} grows on stiff modes and amplifies rounding).
// - Merging (mergeTolerance > 0): consecutive exponential intervals (Exp's, and PBSR's stiff
//   ones) are folded into one exponential step over [t_a, t_b], H = t_b − t_a, with the
//   step-length-weighted means of their A and B (Ā = Σ Δt_k A_k / H, the composite midpoint rule
//   for ∫A — the first Magnus term — likewise B̄) while a bound on what that changes stays small:
//   to second order the merged step differs from the per-interval steps by
//   ½ Σ_{j<k} Δt_j Δt_k ([A_k, A_j] S + A_k B_j − A_j B_k), which per parameter (column j) is at
//   most ½ H² (2‖A‖ dA ‖S_j‖ + ‖A‖ dB_j + dA ‖B_j‖) with dA, dB_j the spreads of the A_k, B_k
//   about the first interval's (1-norms); merge while that is ≤ mergeTolerance·(‖S_j‖ + H‖B_j‖).
//   Exact for constant A and B (then Ā, B̄ are the samples themselves, so reuse applies). S is
//   brought up to date (the pending step applied) by sensitivities(), i.e. at every output time,
//   and before any PBS interval. Measured (docs/benchmarks/sensitivities.md): at the default
//   1e-4 the benchmark's Exp errors are unchanged; Jacobians that change on every step
//   (Michaelis–Menten, Chua, Bachmann) merge little, constant ones (the linear SBML Test Suite
//   models) merge to one step per output interval.

#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "core/sensitivity/matrix_exponential.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::sensitivity {

enum class PeanoBakerMethod { Pbsr, Exp };

struct PeanoBakerOptions {
  PeanoBakerMethod method = PeanoBakerMethod::Pbsr;
  // n_int = ⌈refinement · Δt · ‖A_k‖₁⌉ sub-intervals for PBS (the paper's 10).
  double refinement = 10;
  // PBSR switches to the exponential formula when n_int exceeds this (the paper's 100).
  int maxSubintervals = 100;
  // PBSR's "Jacobians nearly constant" test: relative change of A and of B (1-norms) across the
  // interval at most this (the paper's 1e-4); 0 turns the test off.
  double constantTolerance = 1e-4;
  // Exponential formula with A, B at the interval midpoint (default) or at its left end (paper).
  bool midpoint = true;
  // Merge consecutive exponential intervals while the bound above, relative to the size of S,
  // is at most this; 0: one exponential step per grid interval (the paper's Exp).
  double mergeTolerance = 1e-4;
  // Reuse E and Φ₁ when A and Δt are bitwise identical to the previous exponential step's.
  bool reuseExponential = true;
  // Shift them to a slightly longer Δt when A is bitwise identical (see above; not
  // bit-identical to computing them afresh).
  bool shiftExponential = true;

  // Message naming field, value and constraint, or nullopt when valid.
  std::optional<std::string> validate() const;
  bool operator==(const PeanoBakerOptions&) const = default;
};

struct PeanoBakerStats {
  long intervals = 0;          // grid intervals propagated
  long exponentialSteps = 0;   // exponential-formula steps (a merged run of intervals is one)
  long expmEvaluations = 0;    // of which E, Φ₁ computed from scratch
  long expmShifted = 0;        // of which shifted from the previous Δt (same A; see above)
  long mergedIntervals = 0;    // intervals folded into an exponential step begun before them
  long refinedIntervals = 0;   // intervals done with PBS on sub-intervals
  long subintervals = 0;       // PBS sub-intervals in total
  long jacobianEvals = 0;      // (J, ∂f/∂p) pair evaluations
  long stateRequests = 0;      // states taken from the trajectory (dense output)
  bool operator==(const PeanoBakerStats&) const = default;
};

// Supplies the state x(t) of the trajectory; called with non-decreasing t.
using StateSource = std::function<void(double t, std::vector<double>& x)>;

class PeanoBakerPropagator {
 public:
  // Sensitivities with respect to the model parameters `paramIndices` (indices into p).
  PeanoBakerPropagator(std::shared_ptr<const symbolic::CompiledModel> model, std::vector<double> p,
                       std::vector<int> paramIndices, const PeanoBakerOptions& options);

  // Starts at (t0, x0) with S0 (column-major nx × ns); the statistics start from zero.
  void start(double t0, const std::vector<double>& x0, const std::vector<double>& s0);
  // Starts again at (t, x) with S, keeping the statistics: after an event, whose jump in x and
  // S is the simulation driver's (core/simulation). Nothing of the previous interval is reused
  // (its Jacobians belong to the state before the jump), except E and Φ₁ when A comes out the
  // same: they depend on A and Δt only.
  void restart(double t, const std::vector<double>& x, const std::vector<double>& s);
  // Propagates S over the grid interval [t, t1] (t1 ≥ t); states inside (t, t1] come from
  // `states`, in increasing time, ending with x(t1).
  void advance(double t1, const StateSource& states);

  double time() const { return t_; }
  const std::vector<double>& state() const { return x_; }
  // S at time(), column-major nx × ns (applies a pending merged exponential step first).
  void sensitivities(std::vector<double>& s);
  const PeanoBakerStats& stats() const { return stats_; }

 private:
  // A = J(t, x), B = ∂f/∂p(t, x) for the selected parameters, dense.
  void evaluate(double t, const std::vector<double>& x, Eigen::MatrixXd& a, Eigen::MatrixXd& b);
  void ensureLeft();
  // One interval [t_, t1] of the exponential formula with (a, b): merged into the pending step
  // when mergeTolerance allows, else applied at once.
  void exponentialInterval(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double t1);
  // Applies the pending merged step, if any: S then refers to t_.
  void flush();
  // One exponential step of length dt from tStart (for messages) with (a, b).
  void exponential(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double tStart, double dt);
  // Throws IntegrationFailure naming the step when S has a non-finite entry.
  void requireFiniteS(double tStart, double tEnd) const;
  void pbs(const Eigen::MatrixXd& aLeft, const Eigen::MatrixXd& bLeft,
           const Eigen::MatrixXd& aRight, const Eigen::MatrixXd& bRight, double h);

  std::shared_ptr<const symbolic::CompiledModel> model_;
  std::vector<double> p_;
  std::vector<int> params_;
  PeanoBakerOptions options_;
  PeanoBakerStats stats_;
  int nx_ = 0, ns_ = 0;

  double t_ = 0;
  std::vector<double> x_;
  Eigen::MatrixXd s_;              // nx × ns
  Eigen::MatrixXd aLeft_, bLeft_;  // A, B at (t_, x_) when leftValid_
  bool leftValid_ = false;

  // The pending merged exponential step [pendingStart_, t_]: S still refers to pendingStart_.
  bool pending_ = false;
  double pendingStart_ = 0;
  Eigen::MatrixXd aFirst_, bFirst_;  // A, B of its first interval
  double spreadA_ = 0, aNormMax_ = 0;  // max ‖A_k − A_first‖₁, max ‖A_k‖₁
  // Per parameter (column): max ‖B_k − B_first‖₁, max ‖B_k‖₁, ‖S(pendingStart_)‖₁.
  Eigen::ArrayXd spreadB_, bNormMax_, sNorm_;
  Eigen::ArrayXd colNorms_, colSpread_;  // scratch
  // Σ Δt_k A_k (B_k) over the intervals whose A_k (B_k) is not bitwise the first's (valid once
  // one was not), and Σ Δt_k over those whose A_k (B_k) is.
  Eigen::MatrixXd aSum_, bSum_;
  double aFirstWeight_ = 0, bFirstWeight_ = 0;
  bool aConstant_ = true, bConstant_ = true;  // every A_k (B_k) bitwise equal to the first

  // E, Φ₁ of the last exponential step (in expWork_.e, expWork_.phi) were computed for these.
  bool cacheValid_ = false;
  double cacheDt_ = 0;
  Eigen::MatrixXd cacheA_;
  Eigen::MatrixXd shiftE_, shiftPhi_;

  // Scratch.
  std::vector<double> jValues_, fpValues_;
  Eigen::MatrixXd aRight_, bRight_, aMid_, bMid_, aSub_, bSub_, sumA_, i2_, phi_, rhs_;
  std::vector<std::vector<double>> subStates_;
  std::vector<double> xMid_, xRight_;
  ExponentialWorkspace expWork_;
};

}  // namespace sensode::sensitivity
