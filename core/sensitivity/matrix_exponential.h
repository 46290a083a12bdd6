// SPDX-License-Identifier: MIT
// The matrix exponential and the exponential formula for linear sensitivity equations
// Ṡ = A S + B with constant A (n × n) and B (n × ns) over one interval (NUMERICS.md §7.3):
//
//     S(t + Δt) = e^{ΔtA} S(t) + Φ₁ B,     Φ₁ = ∫₀^Δt e^{As} ds.
//
// The paper's printed form e^{ΔtA}(S + (I − e^{−ΔtA}) A⁻¹ B) overflows for stable stiff A
// (e^{−ΔtA}) and needs A⁻¹, which does not exist with conservation laws; the stable form reads
// E = e^{ΔtA} and Φ₁B off one exponential of an augmented matrix and never inverts A:
//
//     expm(Δt [[A, I], [0, 0]]) = [[E, Φ₁], [0, I]],   S ← E S + Φ₁ B   (any ns)
//
// The exponential is scaling and squaring with the Padé approximant of degree 3, 5, 7, 9 or 13
// chosen by the 1-norm (Higham, SIAM J. Matrix Anal. Appl. 26:1179, 2005; the algorithm and
// thresholds of Eigen's MatrixFunctions module), evaluated on the block structure instead of the
// 2n × 2n matrix: with M = [[X, hI], [0, 0]] (X = ΔtA, h = Δt), M^k = [[X^k, hX^{k−1}], [0, 0]],
// so the Padé numerator and denominator V(M) ± U(M) with U(X) = X·U'(X) have top-right blocks
// h(V'(X) ± U'(X)) and bottom-right blocks b₀I, and
//     r(M) = (V − U)⁻¹(V + U) = [[(V − U)⁻¹(V + U), 2h(V − U)⁻¹U'], [0, I]];
// a squaring is [[E, F], [0, I]]² = [[E², EF + F], [0, I]]. Same result as Eigen's exp() of the
// augmented matrix (same degree, same scaling: ‖M‖₁ = max(‖X‖₁, h)), for n×n products only: ~1/5
// of the cost. Measured on NUMERICS.md §7.5's random linear n = 10 system (one step over [0, T]):
// relative error of S(T) 1e-15 (T = 1), 9e-15 (T = 10), 4e-13 (T = 1000); singular
// A = [[−k, k], [k, −k]]: 6e-13 at Δt·k = 3e4; Δt‖A‖ = 1e9 (Linear2, Δt = 1e6): 3e-8
// (overscaling, as with Eigen's exp()).
#pragma once

#include <Eigen/Dense>

namespace sensode::sensitivity {

// e^M for a square matrix M (Eigen's exp(); used by tests as the unstructured reference).
Eigen::MatrixXd expm(const Eigen::MatrixXd& m);

// Scratch space for the functions below (reused between calls to avoid allocations).
struct ExponentialWorkspace {
  Eigen::MatrixXd x, x2, x4, x6, x8, uPrime, u, v, tmp, product;
  Eigen::MatrixXd e, phi;  // exponentialStep's E and Φ₁
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
};

// E = e^{ΔtA} and Φ₁ = ∫₀^Δt e^{As} ds (both n × n) by the structured scaling and squaring above.
// Any A (singular, stiff); Δt ≥ 0.
void integratedExponential(const Eigen::MatrixXd& a, double dt, Eigen::MatrixXd& e,
                           Eigen::MatrixXd& phi, ExponentialWorkspace& work);

// S ← e^{ΔtA} S + Φ₁ B (the exact solution of Ṡ = A S + B over Δt for constant A, B). S is
// n × ns.
void exponentialStep(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double dt,
                     Eigen::MatrixXd& s, ExponentialWorkspace& work);

}  // namespace sensode::sensitivity
