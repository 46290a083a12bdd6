// SPDX-License-Identifier: MIT
// Compressed-sparse-column pattern of a derivative matrix (the layout CVODES/KLU and Eigen's
// SparseMatrix use). Values of a matrix with this pattern are stored in the same order.
#pragma once

#include <vector>

namespace sensode::symbolic {

struct SparsePattern {
  int rows = 0, cols = 0;
  std::vector<int> colPtr;  // size cols + 1
  std::vector<int> rowIdx;  // size nnz, sorted within each column
  int nnz() const { return static_cast<int>(rowIdx.size()); }
  bool operator==(const SparsePattern&) const = default;
};

}  // namespace sensode::symbolic
