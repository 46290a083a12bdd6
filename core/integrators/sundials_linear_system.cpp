// SPDX-License-Identifier: MIT
#include "core/integrators/sundials_linear_system.h"

#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <algorithm>

namespace sensode::integrators::sundials {

bool usesSparseSolver(const IntegratorOptions& options, int nx) {
  return options.linearSolver == LinearSolverKind::Sparse ||
         (options.linearSolver == LinearSolverKind::Auto && nx > IntegratorOptions::kDenseLimit);
}

void MergedPattern::build(const symbolic::SparsePattern& jp, int nx) {
  colPtr.assign(static_cast<std::size_t>(nx) + 1, 0);
  rowIdx.clear();
  diagonal.assign(static_cast<std::size_t>(nx), 0);
  target.assign(static_cast<std::size_t>(jp.nnz()), 0);
  for (int j = 0; j < nx; ++j) {
    bool diagonalDone = false;
    const auto jj = static_cast<std::size_t>(j);
    for (int k = jp.colPtr[jj]; k < jp.colPtr[jj + 1]; ++k) {
      const int i = jp.rowIdx[static_cast<std::size_t>(k)];
      if (!diagonalDone && i > j) {  // no diagonal entry in the model: insert it before row i
        diagonal[jj] = static_cast<sunindextype>(rowIdx.size());
        rowIdx.push_back(j);
        diagonalDone = true;
      }
      if (i == j) {
        diagonal[jj] = static_cast<sunindextype>(rowIdx.size());
        diagonalDone = true;
      }
      target[static_cast<std::size_t>(k)] = static_cast<sunindextype>(rowIdx.size());
      rowIdx.push_back(i);
    }
    if (!diagonalDone) {
      diagonal[jj] = static_cast<sunindextype>(rowIdx.size());
      rowIdx.push_back(j);
    }
    colPtr[jj + 1] = static_cast<sunindextype>(rowIdx.size());
  }
}

void createLinearSystem(bool sparse, int nx, const MergedPattern& pattern, N_Vector y,
                        SUNContext ctx, MatrixPtr& A, LinearSolverPtr& ls) {
  const auto n = static_cast<sunindextype>(nx);
  if (sparse) {
    A.reset(checkCreated(SUNSparseMatrix(n, n, pattern.nnz(), CSC_MAT, ctx), "SUNSparseMatrix"));
    ls.reset(checkCreated(SUNLinSol_KLU(y, A.get(), ctx), "SUNLinSol_KLU"));
  } else {
    A.reset(checkCreated(SUNDenseMatrix(n, n, ctx), "SUNDenseMatrix"));
    ls.reset(checkCreated(SUNLinSol_Dense(y, A.get(), ctx), "SUNLinSol_Dense"));
  }
}

void scatterJacobian(SUNMatrix M, bool sparse, const MergedPattern& pattern,
                     const symbolic::SparsePattern& jp, const std::vector<double>& values,
                     double sign) {
  if (sparse) {
    if (SUNSparseMatrix_NNZ(M) < pattern.nnz()) SUNSparseMatrix_Reallocate(M, pattern.nnz());
    std::copy(pattern.colPtr.begin(), pattern.colPtr.end(), SUNSparseMatrix_IndexPointers(M));
    std::copy(pattern.rowIdx.begin(), pattern.rowIdx.end(), SUNSparseMatrix_IndexValues(M));
    double* data = SUNSparseMatrix_Data(M);
    std::fill(data, data + pattern.rowIdx.size(), 0.0);
    for (std::size_t k = 0; k < values.size(); ++k) data[pattern.target[k]] = sign * values[k];
    return;
  }
  const auto n = static_cast<std::size_t>(SUNDenseMatrix_Columns(M));
  double* data = SUNDenseMatrix_Data(M);  // column-major, leading dimension n
  std::fill(data, data + n * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    for (int k = jp.colPtr[j]; k < jp.colPtr[j + 1]; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      data[j * n + static_cast<std::size_t>(jp.rowIdx[kk])] = sign * values[kk];
    }
  }
}

void addScaledDiagonal(SUNMatrix M, bool sparse, const MergedPattern& pattern, double c,
                       const std::vector<double>& d) {
  if (sparse) {
    double* data = SUNSparseMatrix_Data(M);
    for (std::size_t i = 0; i < d.size(); ++i) data[pattern.diagonal[i]] += c * d[i];
    return;
  }
  const std::size_t n = d.size();
  double* data = SUNDenseMatrix_Data(M);
  for (std::size_t i = 0; i < n; ++i) data[i * n + i] += c * d[i];
}

}  // namespace sensode::integrators::sundials
