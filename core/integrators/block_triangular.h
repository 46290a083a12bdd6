// SPDX-License-Identifier: MIT
// The block triangular form of a square sparse pattern with a zero-free diagonal: a symmetric
// permutation P A Pᵀ that is block lower triangular, its diagonal blocks the strongly connected
// components of A's graph (Tarjan). A system in this form is solved one diagonal block after
// another, each taking the values of the blocks before it; only the diagonal blocks are
// factorised. KLU does the same (its BTF step); SparseLu's dense backend uses it where the
// blocks save enough arithmetic (a species that nothing downstream feeds back on is a block of
// its own: Alkan's 36-state Newton matrix is one block of 30 and six of one).
#pragma once

#include <vector>

#include "core/symbolic/sparsity.h"

namespace sensode::integrators::detail {

struct BlockTriangularForm {
  // order[k] is the row and column of A at position k of P A Pᵀ.
  std::vector<int> order;
  // The first position of each diagonal block, then n. Entry (i, j) of A lies in or below the
  // block of i's position: position(j)'s block ≤ position(i)'s block.
  std::vector<int> blockStart;
  int blocks() const { return static_cast<int>(blockStart.size()) - 1; }
};

// Within a block the rows keep their order in A.
BlockTriangularForm blockTriangularForm(const symbolic::SparsePattern& pattern);

}  // namespace sensode::integrators::detail
