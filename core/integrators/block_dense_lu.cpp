// SPDX-License-Identifier: MIT
#include "core/integrators/block_dense_lu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include "core/integrators/dense_lu.h"

namespace sensode::integrators::detail {

namespace {

using Index = std::size_t;

Index blockBegin(const BlockTriangularForm& form, int b) {
  return static_cast<Index>(form.blockStart[static_cast<Index>(b)]);
}
Index blockSize(const BlockTriangularForm& form, int b) {
  return static_cast<Index>(form.blockStart[static_cast<Index>(b) + 1]) - blockBegin(form, b);
}

}  // namespace

bool BlockDenseLu::worthwhile(const BlockTriangularForm& form, int n) {
  double blockFlops = 0;
  for (int b = 0; b < form.blocks(); ++b) {
    const auto s = static_cast<double>(blockSize(form, b));
    blockFlops += s * s * s;
  }
  const double whole = static_cast<double>(n) * n * n;
  return blockFlops <= kMaxFlopFraction * whole;
}

void BlockDenseLu::analyze(const symbolic::SparsePattern& pattern, BlockTriangularForm form) {
  n_ = pattern.rows;
  const auto n = static_cast<Index>(n_);
  form_ = std::move(form);
  colPtr_ = pattern.colPtr;
  rowIdx_ = pattern.rowIdx;
  const int blocks = form_.blocks();
  std::vector<Index> position(n), blockOf(n);
  for (Index k = 0; k < n; ++k) position[static_cast<Index>(form_.order[k])] = k;
  factorOffset_.assign(static_cast<Index>(blocks) + 1, 0);
  for (int b = 0; b < blocks; ++b) {
    const Index begin = blockBegin(form_, b), s = blockSize(form_, b);
    std::fill_n(blockOf.begin() + static_cast<std::ptrdiff_t>(begin), s, static_cast<Index>(b));
    factorOffset_[static_cast<Index>(b) + 1] = factorOffset_[static_cast<Index>(b)] + s * s;
  }
  factorsSize_ = factorOffset_.back();
  pivots_.assign(n, 0);
  invDiag_.assign(n, 0.0);
  work_.assign(n, 0.0);
  // Each value's place: inside a block, its position in the block's column-major factors;
  // below the blocks, an entry of its row's sum (rowsStart_ …).
  target_.assign(static_cast<Index>(pattern.nnz()), 0);
  struct Below {
    Index block, row, col, value;
  };
  std::vector<Below> below;
  for (Index j = 0; j < n; ++j) {
    for (auto k = static_cast<Index>(colPtr_[j]); k < static_cast<Index>(colPtr_[j + 1]); ++k) {
      const Index pi = position[static_cast<Index>(rowIdx_[k])], pj = position[j];
      const Index bi = blockOf[pi], bj = blockOf[pj];
      if (bi == bj) {
        const auto b = static_cast<int>(bi);
        const Index begin = blockBegin(form_, b), s = blockSize(form_, b);
        target_[k] = factorOffset_[bi] + (pj - begin) * s + (pi - begin);
      } else {
        below.push_back({bi, pi, pj, k});  // bj < bi
      }
    }
  }
  std::sort(below.begin(), below.end(), [](const Below& a, const Below& b) {
    return std::tie(a.block, a.row, a.col) < std::tie(b.block, b.row, b.col);
  });
  rowsStart_.assign(static_cast<Index>(blocks) + 1, 0);
  couplingRow_.clear();
  entryStart_.clear();
  couplingCol_.clear();
  for (Index e = 0; e < below.size(); ++e) {
    if (e == 0 || below[e].row != below[e - 1].row) {
      ++rowsStart_[below[e].block + 1];
      couplingRow_.push_back(static_cast<int>(below[e].row));
      entryStart_.push_back(static_cast<int>(e));
    }
    couplingCol_.push_back(static_cast<int>(below[e].col));
    target_[below[e].value] = factorsSize_ + e;
  }
  entryStart_.push_back(static_cast<int>(below.size()));
  std::partial_sum(rowsStart_.begin(), rowsStart_.end(), rowsStart_.begin());
  factors_.assign(factorsSize_ + below.size(), 0.0);
}

bool BlockDenseLu::factorize(const double* values, double& normA) {
  std::fill_n(factors_.begin(), factorsSize_, 0.0);
  normA = 0;
  for (Index j = 0; j < static_cast<Index>(n_); ++j) {
    double column = 0;
    for (auto k = static_cast<Index>(colPtr_[j]); k < static_cast<Index>(colPtr_[j + 1]); ++k) {
      column += std::abs(values[k]);
      factors_[target_[k]] = values[k];
    }
    // A NaN or ±∞ among the values makes its column's sum so (the kernel wants finite).
    if (!(column <= std::numeric_limits<double>::max())) return false;
    normA = std::max(normA, column);
  }
  double largestPivot = 0;
  for (int b = 0; b < form_.blocks(); ++b) {
    const Index begin = blockBegin(form_, b), s = blockSize(form_, b);
    double* a = factors_.data() + factorOffset_[static_cast<Index>(b)];
    if (s == 1) {
      if (!(a[0] != 0)) return false;
      pivots_[begin] = 0;
      invDiag_[begin] = 1.0 / a[0];
    } else if (!denseLuFactor(a, static_cast<int>(s), pivots_.data() + begin,
                              invDiag_.data() + begin)) {
      return false;
    }
    for (Index k = 0; k < s; ++k) largestPivot = std::max(largestPivot, std::abs(a[k * s + k]));
  }
  // The whole matrix's test: a pivot at most ε times the largest of all blocks' is singular.
  const double smallest = std::numeric_limits<double>::epsilon() * largestPivot;
  for (int b = 0; b < form_.blocks(); ++b) {
    const Index s = blockSize(form_, b);
    const double* a = factors_.data() + factorOffset_[static_cast<Index>(b)];
    for (Index k = 0; k < s; ++k)
      if (!(std::abs(a[k * s + k]) > smallest)) return false;
  }
  return true;
}

void BlockDenseLu::solve(double* x) {
  const auto n = static_cast<Index>(n_);
  double* w = work_.data();
  const double* below = coupling();
  for (Index k = 0; k < n; ++k) w[k] = x[form_.order[k]];
  for (int b = 0; b < form_.blocks(); ++b) {
    const auto ub = static_cast<Index>(b);
    for (auto q = static_cast<Index>(rowsStart_[ub]); q < static_cast<Index>(rowsStart_[ub + 1]);
         ++q) {
      double sum = 0;
      for (int e = entryStart_[q]; e < entryStart_[q + 1]; ++e)
        sum += below[e] * w[couplingCol_[static_cast<Index>(e)]];
      w[couplingRow_[q]] -= sum;
    }
    const Index begin = blockBegin(form_, b), s = blockSize(form_, b);
    if (s == 1) {
      w[begin] *= invDiag_[begin];
    } else {
      denseLuSolve(factors_.data() + factorOffset_[ub], static_cast<int>(s),
                   pivots_.data() + begin, invDiag_.data() + begin, w + begin);
    }
  }
  for (Index k = 0; k < n; ++k) x[form_.order[k]] = w[k];
}

void BlockDenseLu::solve(double* b, int nrhs) {
  const auto n = static_cast<Index>(n_), width = static_cast<Index>(nrhs);
  work_.resize(std::max(n * width, n));
  double* t = work_.data();  // B's rows in the block order
  const double* below = coupling();
  for (Index j = 0; j < width; ++j)
    for (Index k = 0; k < n; ++k) t[k * width + j] = b[j * n + static_cast<Index>(form_.order[k])];
  for (int blk = 0; blk < form_.blocks(); ++blk) {
    const auto ub = static_cast<Index>(blk);
    for (auto q = static_cast<Index>(rowsStart_[ub]); q < static_cast<Index>(rowsStart_[ub + 1]);
         ++q) {
      double* row = t + static_cast<Index>(couplingRow_[q]) * width;
      for (int e = entryStart_[q]; e < entryStart_[q + 1]; ++e) {
        const double c = below[e];
        const double* from = t + static_cast<Index>(couplingCol_[static_cast<Index>(e)]) * width;
        for (Index j = 0; j < width; ++j) row[j] -= c * from[j];
      }
    }
    const Index begin = blockBegin(form_, blk), s = blockSize(form_, blk);
    denseLuSolveRows(factors_.data() + factorOffset_[ub], static_cast<int>(s),
                     pivots_.data() + begin, invDiag_.data() + begin, t + begin * width, nrhs);
  }
  for (Index j = 0; j < width; ++j)
    for (Index k = 0; k < n; ++k) b[j * n + static_cast<Index>(form_.order[k])] = t[k * width + j];
}

void BlockDenseLu::reserveRightHandSides(int nrhs) {
  work_.reserve(static_cast<Index>(n_) * static_cast<Index>(std::max(nrhs, 1)));
}

double BlockDenseLu::pivotSpread() const {
  double largestPivot = 0, largestInversePivot = 0;
  for (int b = 0; b < form_.blocks(); ++b) {
    const Index begin = blockBegin(form_, b), s = blockSize(form_, b);
    const double* a = factors_.data() + factorOffset_[static_cast<Index>(b)];
    for (Index k = 0; k < s; ++k) {
      largestPivot = std::max(largestPivot, std::abs(a[k * s + k]));
      largestInversePivot = std::max(largestInversePivot, std::abs(invDiag_[begin + k]));
    }
  }
  return largestPivot * largestInversePivot;
}

}  // namespace sensode::integrators::detail
