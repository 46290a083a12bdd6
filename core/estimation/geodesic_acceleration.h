// SPDX-License-Identifier: MIT
// Geodesic acceleration of the Levenberg–Marquardt step (internal to core/estimation; used by
// least_squares.cpp). Transtrum & Sethna 2012, "Improvements to the Levenberg–Marquardt
// algorithm for nonlinear least-squares minimization" (arXiv:1201.5885), as GSL implements it
// (gsl_multifit_nlinear_trs_lmaccel):
//   velocity     v = −(J_FᵀJ_F + λD_F)⁻¹ g_F, here the clamped LM step s = P(x + v) − x;
//   r_vv ≈ (2/h)((r(x + h s) − r(x))/h − J s), h = 0.1: the residuals' second directional
//       derivative along s, from one evaluation of the residuals without their Jacobian;
//   acceleration a = −(J_FᵀJ_F + λD_F)⁻¹ J_Fᵀ r_vv (the same factorisation);
//   step x + s + ½a, clamped to the box like the velocity;
//   used only when 2|a|_D/|s|_D ≤ α = 0.75 (|u|_D² = Σ D_i u_i²); otherwise the trial point is
//       the velocity alone (a plain LM step). The acceptance ratio compares the actual decrease
//       with the one the linear model predicts for the velocity (GSL: Moré's eq. 4.4 on v).
// Not the paper's rule for a too-curved step, which rejects it (λ rises): on ODE residuals
// r(x + h s) carries the integration error (~rtol), which in r_vv is amplified by 2/h² and is not
// proportional to s, so as λ rises and s shrinks the ratio grows, every step is rejected, and
// λ runs to its limit. Measured on Crauste_CellSystems2017 before LM held bound parameters
// (docs/benchmarks/estimation.md, sixth run): the polish's LM from the best start "stalled" after 2 iterations, and the best of
// 20 starts was 190.9735 against 190.9674 with the rule here (190.9691 without acceleration).
// x + h s lies in the box (x and x + s do). When s = 0 or r(x + h s) cannot be evaluated, the
// velocity is used unaccelerated.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Dense>

#include "core/estimation/local_optimizers.h"

namespace sensode::estimation::detail {

constexpr double kAccelerationStep = 0.1;   // h
constexpr double kAccelerationRatio = 0.75; // α

struct Acceleration {
  long accelerated = 0;  // steps tried with acceleration
  long tooCurved = 0;    // 2|a|/|s| > α: the velocity alone
  long skipped = 0;      // r(x + h s) not evaluable: the velocity alone
  long evaluations = 0;  // residual evaluations without the Jacobian
  double lastRatio = 0;  // 2|a|_D/|s|_D of the last step tried
  std::string summary() const;
};

// Replaces `trial` (= x + s on entry) by the accelerated point and returns true, or leaves it
// and returns false (too curved, s = 0, or r(x + h s) not evaluable). `free` lists the columns of J in Jf; d is the damping scale of
// the free parameters. Throws Cancelled.
bool accelerate(ResidualFunction& f, const Eigen::VectorXd& x, const Eigen::VectorXd& s,
                const ResidualFunction::Values& here, const Eigen::MatrixXd& J,
                const Eigen::MatrixXd& Jf, const Eigen::LDLT<Eigen::MatrixXd>& factor,
                const Eigen::VectorXd& d, const std::vector<int>& free,
                const std::vector<double>& lo, const std::vector<double>& hi,
                Eigen::VectorXd& trial, Acceleration& counts);

}  // namespace sensode::estimation::detail
