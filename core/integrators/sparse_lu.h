// SPDX-License-Identifier: MIT
// LU factorisation of a square matrix whose sparsity pattern is fixed for the whole integration
// (odeSD's Newton matrix W = I − (h/2)J + (h²/12)J_J on the union pattern of I, J and J_J).
//
// The caller writes the values in the pattern's CSC order into values() and calls factorize();
// the symbolic work happens once in analyze():
//   Dense        LU with partial pivoting on a dense copy (dense_lu.h): tiny systems, and
//                patterns whose sparse LU would not save enough arithmetic (denseIsFaster);
//                beyond 16 states, of the diagonal blocks of the pattern's block triangular
//                form only, where they save a quarter of the arithmetic (block_dense_lu.h)
//   Klu          klu_analyze once; klu_factor (row-scaled, for the pivot choice) the first
//                time, klu_refactor (same pivot order, unscaled) afterwards, with a fresh
//                klu_factor when refactoring fails or the cheap condition estimate
//                min |u_kk| / max |u_kk| (klu_rcond's, on the row-scaled matrix) drops below
//                ε^(2/3) (SUNDIALS' KLU rule)
//   EigenSparse  Eigen SparseLU (COLAMD ordering) with analyzePattern once (for comparison)
//
// factorize() and solve() do not allocate for Dense and Klu (with many right-hand sides: up to
// the number reserveRightHandSides() was given). KLU and Eigen stay out of this header.
#pragma once

#include <memory>

#include "core/symbolic/sparsity.h"

namespace sensode::integrators::detail {

class SparseLu {
 public:
  enum class Backend { Dense, Klu, EigenSparse };

  SparseLu();
  ~SparseLu();
  SparseLu(const SparseLu&) = delete;
  SparseLu& operator=(const SparseLu&) = delete;

  // Allocates everything and does the symbolic analysis. The pattern must be square and
  // contain the diagonal.
  void analyze(const symbolic::SparsePattern& pattern, Backend backend);
  // The matrix values in the CSC order of the pattern (nnz entries), written by the caller.
  double* values();
  // Numeric factorisation of the current values; false when the matrix is (numerically)
  // singular or not finite. Does not modify values().
  bool factorize();
  // Solves A X = B in place; B is column-major n × nrhs. Requires a successful factorize().
  // Dense with many right-hand sides: X = A⁻¹B with A⁻¹ formed once per factorisation, where
  // that pays (nrhs times the multi-column solves per factorisation ≥ 2n) and the 1-norm
  // condition number κ₁(A) = ‖A‖₁‖A⁻¹‖₁ is at most kInverseConditionLimit (the product's
  // relative error, about κ·ε at worst, then stays near 1e-10); otherwise by substitution.
  void solve(double* b, int nrhs = 1);
  static constexpr double kInverseConditionLimit = 1e6;
  // Allocates what solve() needs for up to nrhs right-hand sides (Dense: A⁻¹ and the product's
  // destination), so that solves after it do not allocate.
  void reserveRightHandSides(int nrhs);

  // Whether the dense LU factorises this pattern faster than KLU: up to kDenseLimitStates
  // states, when KLU's factorisation on it takes at least kDenseFlopFraction of the dense
  // backend's flops (denseLuFlops). KLU's flops are its own count for a diagonally dominant
  // matrix on the pattern (its ordering, no pivoting), from one trial factorisation. Measured
  // when the comparison took the blocks' flops instead of the whole matrix's 2n³/3 (session 35,
  // in process, 101 points to t = 100): BIOMD0000000033 (28 states) and BIOMD0000000149 (29)
  // went from KLU to dense blocks, 1.71–1.73 → 1.58 ms and 1.94–1.96 → 1.82–1.91 ms.
  // The answer is kept per pattern for the process.
  static bool denseIsFaster(const symbolic::SparsePattern& pattern);
  static constexpr double kDenseFlopFraction = 0.1;
  static constexpr int kDenseLimitStates = 320;

  Backend backend() const { return backend_; }
  int size() const { return n_; }
  // Full (re-pivoting) numeric factorisations and cheap refactorisations (KLU) so far.
  long fullFactorizations() const { return fullFactorizations_; }
  long refactorizations() const { return refactorizations_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  // denseIsFaster's trial factorisation.
  static bool kluSavesLittle(const symbolic::SparsePattern& pattern);
  // 2s³/3 summed over the diagonal blocks the dense backend factorises (the whole matrix, s = n,
  // where the blocks are not worthwhile: BlockDenseLu::worthwhile).
  static double denseLuFlops(const symbolic::SparsePattern& pattern);
  Backend backend_ = Backend::Dense;
  int n_ = 0;
  long fullFactorizations_ = 0;
  long refactorizations_ = 0;
};

}  // namespace sensode::integrators::detail
