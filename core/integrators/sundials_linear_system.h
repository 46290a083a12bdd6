// SPDX-License-Identifier: MIT
// The Newton matrix CVODES and IDAS factorise, from the compiled model's exact sparse Jacobian:
// dense LU for at most IntegratorOptions::kDenseLimit states, KLU otherwise (or as the options
// force). For KLU the matrix's pattern is the model's pattern plus the diagonal, so the solver's
// M = I − γJ (CVODES) or c_j·D − J (IDAS) never has to grow the matrix and KLU's symbolic
// factorisation stays valid.
//
// Internal to core/integrators (it includes the SUNDIALS headers).
#pragma once

#include <vector>

#include "core/integrators/integrator.h"
#include "core/integrators/sundials_handles.h"
#include "core/symbolic/sparsity.h"

namespace sensode::integrators::sundials {

// True when the options and the state count ask for the sparse (KLU) solver.
bool usesSparseSolver(const IntegratorOptions& options, int nx);

// The model's Jacobian pattern with every diagonal entry added, in CSC order.
struct MergedPattern {
  std::vector<sunindextype> colPtr, rowIdx;
  std::vector<sunindextype> target;    // model entry k → its position in the merged pattern
  std::vector<sunindextype> diagonal;  // position of each diagonal entry

  void build(const symbolic::SparsePattern& jacobian, int nx);
  sunindextype nnz() const { return static_cast<sunindextype>(rowIdx.size()); }
};

// The matrix and linear solver for `nx` states: SUNSparseMatrix (CSC, pattern.nnz() entries)
// with SUNLinSol_KLU when `sparse`, else SUNDenseMatrix with SUNLinSol_Dense. `y` is a template
// vector of length nx.
void createLinearSystem(bool sparse, int nx, const MergedPattern& pattern, N_Vector y,
                        SUNContext ctx, MatrixPtr& A, LinearSolverPtr& ls);

// Writes sign·J into M, with J's values in the model's CSC order (`jacobian` pattern): into the
// merged pattern when `sparse` (pattern and zeros written too: SUNDIALS zeroes the whole matrix,
// index arrays included, before every Jacobian call), else column-major dense.
void scatterJacobian(SUNMatrix M, bool sparse, const MergedPattern& pattern,
                     const symbolic::SparsePattern& jacobian, const std::vector<double>& values,
                     double sign);

// Adds c·d_i to each diagonal entry of M as scatterJacobian wrote it (IDAS: c_j·D).
void addScaledDiagonal(SUNMatrix M, bool sparse, const MergedPattern& pattern, double c,
                       const std::vector<double>& d);

}  // namespace sensode::integrators::sundials
