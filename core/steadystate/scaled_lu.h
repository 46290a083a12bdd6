// SPDX-License-Identifier: MIT
// Linear solves with J_r for the steady-state solver and the PEtab equilibration's adjoint: a
// 1-norm condition estimate and an LU in the states' units whose "singular" verdict is taken on
// the scaled matrix (steady_state_solver.h says where J_r comes from).
#pragma once

#include <Eigen/Sparse>
#include <Eigen/SparseLU>

namespace sensode::steadystate {

using SparseLu = Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>>;

// Analyses and factorizes `a`; false for a non-finite entry or a failed LU (an empty matrix is
// factorized).
bool factorize(SparseLu& lu, const Eigen::SparseMatrix<double>& a);

// 1-norm condition estimate of a sparse matrix (Hager/Higham with LU solves); inf when singular.
double conditionEstimate1(const Eigen::SparseMatrix<double>& a);

// Solves with J_r in the states' units: A = D_r·J·D_c with D_c the states' magnitudes
// (columnScale: max(|x_i|, atol) from the solver; none: 1) and D_r making every row of A of
// max-abs 1 (powers of 2, so the scaling is exact). Rate constants that span many decades
// (Brannmark at its bounds: eigenvalues of J_r from −1e-6 to −1e8) put the unscaled condition
// estimate above 1e14 where the scaled one is ~1e5 and the solve keeps its digits; "singular" is
// decided on the scaled estimate. The columns are not equilibrated by their entries: a state
// whose every rate derivative is ~0 (an enzyme decayed to 1e-87) would look regular.
class ScaledLu {
 public:
  explicit ScaledLu(const Eigen::SparseMatrix<double>& j,
                    const Eigen::VectorXd* columnScale = nullptr);
  // Factorized and the scaled condition estimate below 1e14.
  bool ok() const { return ok_; }
  double condition() const { return condition_; }  // 1-norm estimate of cond(A)
  Eigen::MatrixXd solve(const Eigen::MatrixXd& b) const;            // J⁻¹b
  Eigen::MatrixXd solveTransposed(const Eigen::MatrixXd& b) const;  // J⁻ᵀb

 private:
  Eigen::VectorXd r_, c_;
  mutable SparseLu lu_;  // transpose() is not const
  bool ok_ = false;
  double condition_ = 0;
};

}  // namespace sensode::steadystate
