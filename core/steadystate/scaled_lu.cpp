// SPDX-License-Identifier: MIT
#include "core/steadystate/scaled_lu.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sensode::steadystate {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Condition below which J_r is treated as singular (LU pivots that small carry no digits).
constexpr double kSingularCondition = 1e14;

}  // namespace

bool factorize(SparseLu& lu, const Eigen::SparseMatrix<double>& a) {
  if (a.rows() == 0) return true;
  for (Eigen::Index k = 0; k < a.nonZeros(); ++k)
    if (!std::isfinite(a.valuePtr()[k])) return false;
  lu.analyzePattern(a);
  lu.factorize(a);
  return lu.info() == Eigen::Success;
}

double conditionEstimate1(const Eigen::SparseMatrix<double>& a) {
  const Eigen::Index n = a.rows();
  if (n == 0) return 1.0;
  SparseLu lu;
  if (!factorize(lu, a)) return kInf;
  double normA = 0;
  for (Eigen::Index c = 0; c < a.outerSize(); ++c) {
    double s = 0;
    for (Eigen::SparseMatrix<double>::InnerIterator it(a, c); it; ++it) s += std::abs(it.value());
    normA = std::max(normA, s);
  }
  // Hager (1984) / Higham (1988): maximise ‖A⁻¹x‖₁ over the unit 1-ball.
  Eigen::VectorXd x = Eigen::VectorXd::Constant(n, 1.0 / static_cast<double>(n));
  double est = 0;
  Eigen::Index lastJ = -1;
  for (int iter = 0; iter < 5; ++iter) {
    const Eigen::VectorXd y = lu.solve(x);
    if (!y.allFinite()) return kInf;
    est = y.lpNorm<1>();
    Eigen::VectorXd xi(n);
    for (Eigen::Index i = 0; i < n; ++i) xi(i) = y(i) >= 0 ? 1.0 : -1.0;
    const Eigen::VectorXd z = lu.transpose().solve(xi);
    Eigen::Index j = 0;
    const double zmax = z.cwiseAbs().maxCoeff(&j);
    if (iter > 0 && (zmax <= z.dot(x) || j == lastJ)) break;
    x.setZero();
    x(j) = 1.0;
    lastJ = j;
  }
  return normA * est;
}

ScaledLu::ScaledLu(const Eigen::SparseMatrix<double>& j, const Eigen::VectorXd* columnScale) {
  const Eigen::Index n = j.rows();
  r_ = Eigen::VectorXd::Ones(n);
  c_ = Eigen::VectorXd::Ones(n);
  if (n == 0) {
    ok_ = true;
    condition_ = 1;
    return;
  }
  const auto pow2 = [](double m) {  // 2^−e with m = f·2^e, 0.5 ≤ f < 1: m·pow2 in [0.5, 1)
    if (!(m > 0) || !std::isfinite(m)) return 1.0;
    int e = 0;
    std::frexp(m, &e);
    return std::ldexp(1.0, -e);
  };
  if (columnScale)
    for (Eigen::Index k = 0; k < n; ++k) c_(k) = 1 / pow2((*columnScale)(k));
  Eigen::SparseMatrix<double> a = j * c_.asDiagonal();
  Eigen::VectorXd rowMax = Eigen::VectorXd::Zero(n);
  for (Eigen::Index k = 0; k < a.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(a, k); it; ++it)
      rowMax(it.row()) = std::max(rowMax(it.row()), std::abs(it.value()));
  for (Eigen::Index i = 0; i < n; ++i) r_(i) = pow2(rowMax(i));
  a = r_.asDiagonal() * a;
  condition_ = conditionEstimate1(a);
  ok_ = condition_ < kSingularCondition && factorize(lu_, a);
}

Eigen::MatrixXd ScaledLu::solve(const Eigen::MatrixXd& b) const {
  if (r_.size() == 0) return b;
  // J = D_r⁻¹ A D_c⁻¹, so J⁻¹b = D_c A⁻¹ D_r b.
  const Eigen::MatrixXd y = lu_.solve(Eigen::MatrixXd(r_.asDiagonal() * b));
  return c_.asDiagonal() * y;
}

Eigen::MatrixXd ScaledLu::solveTransposed(const Eigen::MatrixXd& b) const {
  if (r_.size() == 0) return b;
  // J⁻ᵀb = D_r A⁻ᵀ D_c b.
  const Eigen::MatrixXd y = lu_.transpose().solve(Eigen::MatrixXd(c_.asDiagonal() * b));
  return r_.asDiagonal() * y;
}

}  // namespace sensode::steadystate
