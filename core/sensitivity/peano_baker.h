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
// n²·ns products, per exponential step one expm of order min(2n, n + ns).
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

  // Message naming field, value and constraint, or nullopt when valid.
  std::optional<std::string> validate() const;
  bool operator==(const PeanoBakerOptions&) const = default;
};

struct PeanoBakerStats {
  long intervals = 0;          // grid intervals propagated
  long exponentialSteps = 0;   // intervals done with the exponential formula
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

  // Starts at (t0, x0) with S0 (column-major nx × ns).
  void start(double t0, const std::vector<double>& x0, const std::vector<double>& s0);
  // Propagates S over the grid interval [t, t1] (t1 ≥ t); states inside (t, t1] come from
  // `states`, in increasing time, ending with x(t1).
  void advance(double t1, const StateSource& states);

  double time() const { return t_; }
  const std::vector<double>& state() const { return x_; }
  // S at time(), column-major nx × ns.
  void sensitivities(std::vector<double>& s) const;
  const PeanoBakerStats& stats() const { return stats_; }

 private:
  // A = J(t, x), B = ∂f/∂p(t, x) for the selected parameters, dense.
  void evaluate(double t, const std::vector<double>& x, Eigen::MatrixXd& a, Eigen::MatrixXd& b);
  void ensureLeft();
  void exponential(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double dt);
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

  // Scratch.
  std::vector<double> jValues_, fpValues_;
  Eigen::MatrixXd aRight_, bRight_, aMid_, bMid_, aSub_, bSub_, sumA_, i2_, phi_, rhs_;
  std::vector<std::vector<double>> subStates_;
  std::vector<double> xMid_, xRight_;
  ExponentialWorkspace expWork_;
};

}  // namespace sensode::sensitivity
