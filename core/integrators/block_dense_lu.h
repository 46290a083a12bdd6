// SPDX-License-Identifier: MIT
// Dense LU of a sparse matrix in its block triangular form (block_triangular.h): each diagonal
// block is factorised by the dense kernels (dense_lu.h), and the entries below the blocks are
// kept as they are for the substitutions, which go block by block. SparseLu's dense backend
// uses it where the blocks save at least a quarter of the dense LU's arithmetic
// (worthwhile()): on Alkan's 36-state Newton matrix, one block of 30 and six of one, a dense
// LU of 30 instead of 36 at every step of the discrete adjoint's backward sweep.
//
// The pivoting is partial within each block, as KLU's is. factorize() fails where the dense LU
// of the whole matrix would: a value that is not finite, a zero pivot column, or a pivot at most
// ε times the largest pivot of all the blocks.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/integrators/block_triangular.h"
#include "core/symbolic/sparsity.h"

namespace sensode::integrators::detail {

class BlockDenseLu {
 public:
  // The symbolic analysis of one pattern: its blocks, where each value goes, the entries below
  // the blocks. Immutable, shared by every factorisation of the pattern.
  struct Structure {
    int n = 0;
    BlockTriangularForm form;
    std::vector<std::size_t> factorOffset;  // block b's s × s factors at factors_[factorOffset[b]]
    std::size_t factorsSize = 0;            // Σ s², the blocks' factors
    std::size_t couplings = 0;              // entries below the blocks, after the factors
    // Where factorize() puts each value of the pattern (CSC order) in factors_.
    std::vector<std::size_t> target;
    // The entries below the blocks by row (positions in the block order). Block b's rows with
    // such entries are couplingRow[q] for q in rowsStart[b] … rowsStart[b + 1] − 1; row
    // couplingRow[q] subtracts Σ coupling()[e] · x[couplingCol[e]] over its entries e in
    // entryStart[q] … entryStart[q + 1] − 1: one sum per row, where a subtraction per entry
    // waited on the store of the one before (5 % of Alkan's adjoint run, perf).
    std::vector<int> rowsStart, couplingRow, entryStart, couplingCol;
    std::vector<int> colPtr, rowIdx;  // the pattern's, for ‖A‖₁ and the finiteness test
  };

  // Whether the blocks' dense factorisations take at most kMaxFlopFraction of the whole
  // matrix's (Σ s³ against n³).
  static bool worthwhile(const BlockTriangularForm& form, int n);
  static constexpr double kMaxFlopFraction = 0.75;
  // `pattern`'s structure, or null where its blocks are not worthwhile. Kept per pattern for
  // the process: every simulation asks again (each condition of a PEtab problem, odeSD's two
  // LUs), and Tarjan and the analysis were 2 % of Alkan's 0.7 ms time course (perf).
  static std::shared_ptr<const Structure> structureFor(const symbolic::SparsePattern& pattern);
  // `pattern` in CSC, `form` its block triangular form (no worthwhile() test, no keeping).
  static std::shared_ptr<const Structure> analyzeStructure(const symbolic::SparsePattern& pattern,
                                                           BlockTriangularForm form);

  // Takes a structure and allocates the factors for it.
  void use(std::shared_ptr<const Structure> structure);
  // use(analyzeStructure(pattern, form)).
  void analyze(const symbolic::SparsePattern& pattern, BlockTriangularForm form);
  // Factorises the matrix whose values (the pattern's CSC order) are given; normA receives
  // ‖A‖₁. False when the matrix is singular (as above) or not finite.
  bool factorize(const double* values, double& normA);
  // x = A⁻¹x.
  void solve(double* x);
  // X = A⁻¹B for column-major B (n × nrhs), in place: the substitutions on B's rows, in the
  // blocks' order (denseLuSolveRows on each block).
  void solve(double* b, int nrhs);
  // Allocates what solve(b, nrhs) needs for up to nrhs right-hand sides.
  void reserveRightHandSides(int nrhs);
  // max |u_kk| · max 1 / |u_kk| over all blocks (a lower bound on κ(U)).
  double pivotSpread() const;

 private:
  std::shared_ptr<const Structure> structure_;
  // The blocks' factors, then the values of the entries below the blocks (coupling()).
  std::vector<double> factors_;
  std::vector<int> pivots_;  // each block's own row interchanges (0-based within the block)
  std::vector<double> invDiag_;
  std::vector<double> work_;  // solve(): x in the block order; solve(b, nrhs): B's rows
  const double* coupling() const { return factors_.data() + structure_->factorsSize; }
};

}  // namespace sensode::integrators::detail
