// SPDX-License-Identifier: MIT
#include "core/integrators/block_dense_lu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
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

std::shared_ptr<const BlockDenseLu::Structure> BlockDenseLu::analyzeStructure(
    const symbolic::SparsePattern& pattern, BlockTriangularForm form) {
  auto structure = std::make_shared<Structure>();
  Structure& st = *structure;
  st.n = pattern.rows;
  const auto n = static_cast<Index>(st.n);
  st.form = std::move(form);
  st.colPtr = pattern.colPtr;
  st.rowIdx = pattern.rowIdx;
  const int blocks = st.form.blocks();
  std::vector<Index> position(n), blockOf(n);
  for (Index k = 0; k < n; ++k) position[static_cast<Index>(st.form.order[k])] = k;
  st.factorOffset.assign(static_cast<Index>(blocks) + 1, 0);
  for (int b = 0; b < blocks; ++b) {
    const Index begin = blockBegin(st.form, b), s = blockSize(st.form, b);
    std::fill_n(blockOf.begin() + static_cast<std::ptrdiff_t>(begin), s, static_cast<Index>(b));
    st.factorOffset[static_cast<Index>(b) + 1] = st.factorOffset[static_cast<Index>(b)] + s * s;
  }
  st.factorsSize = st.factorOffset.back();
  // Each value's place: inside a block, its position in the block's column-major factors;
  // below the blocks, an entry of its row's sum (rowsStart …).
  st.target.assign(static_cast<Index>(pattern.nnz()), 0);
  struct Below {
    Index block, row, col, value;
  };
  std::vector<Below> below;
  for (Index j = 0; j < n; ++j) {
    for (auto k = static_cast<Index>(st.colPtr[j]); k < static_cast<Index>(st.colPtr[j + 1]); ++k) {
      const Index pi = position[static_cast<Index>(st.rowIdx[k])], pj = position[j];
      const Index bi = blockOf[pi], bj = blockOf[pj];
      if (bi == bj) {
        const auto b = static_cast<int>(bi);
        const Index begin = blockBegin(st.form, b), s = blockSize(st.form, b);
        st.target[k] = st.factorOffset[bi] + (pj - begin) * s + (pi - begin);
      } else {
        below.push_back({bi, pi, pj, k});  // bj < bi
      }
    }
  }
  std::sort(below.begin(), below.end(), [](const Below& a, const Below& b) {
    return std::tie(a.block, a.row, a.col) < std::tie(b.block, b.row, b.col);
  });
  st.rowsStart.assign(static_cast<Index>(blocks) + 1, 0);
  st.couplingRow.clear();
  st.entryStart.clear();
  st.couplingCol.clear();
  for (Index e = 0; e < below.size(); ++e) {
    if (e == 0 || below[e].row != below[e - 1].row) {
      ++st.rowsStart[below[e].block + 1];
      st.couplingRow.push_back(static_cast<int>(below[e].row));
      st.entryStart.push_back(static_cast<int>(e));
    }
    st.couplingCol.push_back(static_cast<int>(below[e].col));
    st.target[below[e].value] = st.factorsSize + e;
  }
  st.entryStart.push_back(static_cast<int>(below.size()));
  std::partial_sum(st.rowsStart.begin(), st.rowsStart.end(), st.rowsStart.begin());
  st.couplings = below.size();
  return structure;
}

void BlockDenseLu::analyze(const symbolic::SparsePattern& pattern, BlockTriangularForm form) {
  use(analyzeStructure(pattern, std::move(form)));
}

void BlockDenseLu::use(std::shared_ptr<const Structure> structure) {
  structure_ = std::move(structure);
  const Structure& st = *structure_;
  const auto n = static_cast<Index>(st.n);
  factors_.assign(st.factorsSize + st.couplings, 0.0);
  pivots_.assign(n, 0);
  invDiag_.assign(n, 0.0);
  work_.assign(n, 0.0);
}

std::shared_ptr<const BlockDenseLu::Structure> BlockDenseLu::structureFor(
    const symbolic::SparsePattern& pattern) {
  static std::mutex mutex;
  static std::vector<std::pair<symbolic::SparsePattern, std::shared_ptr<const Structure>>> known;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [p, structure] : known)
      if (p == pattern) return structure;
  }
  BlockTriangularForm form = blockTriangularForm(pattern);
  std::shared_ptr<const Structure> structure;
  if (worthwhile(form, pattern.rows)) structure = analyzeStructure(pattern, std::move(form));
  const std::lock_guard<std::mutex> lock(mutex);
  if (known.size() >= 64) known.erase(known.begin());  // a bound for long-lived GUIs
  known.emplace_back(pattern, structure);
  return structure;
}

bool BlockDenseLu::factorize(const double* values, double& normA) {
  const Structure& st = *structure_;
  std::fill_n(factors_.begin(), st.factorsSize, 0.0);
  normA = 0;
  for (Index j = 0; j < static_cast<Index>(st.n); ++j) {
    double column = 0;
    for (auto k = static_cast<Index>(st.colPtr[j]); k < static_cast<Index>(st.colPtr[j + 1]); ++k) {
      column += std::abs(values[k]);
      factors_[st.target[k]] = values[k];
    }
    // A NaN or ±∞ among the values makes its column's sum so (the kernel wants finite).
    if (!(column <= std::numeric_limits<double>::max())) return false;
    normA = std::max(normA, column);
  }
  double largestPivot = 0;
  for (int b = 0; b < st.form.blocks(); ++b) {
    const Index begin = blockBegin(st.form, b), s = blockSize(st.form, b);
    double* a = factors_.data() + st.factorOffset[static_cast<Index>(b)];
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
  for (int b = 0; b < st.form.blocks(); ++b) {
    const Index s = blockSize(st.form, b);
    const double* a = factors_.data() + st.factorOffset[static_cast<Index>(b)];
    for (Index k = 0; k < s; ++k)
      if (!(std::abs(a[k * s + k]) > smallest)) return false;
  }
  return true;
}

void BlockDenseLu::solve(double* x) {
  const Structure& st = *structure_;
  const auto n = static_cast<Index>(st.n);
  double* w = work_.data();
  const double* below = coupling();
  for (Index k = 0; k < n; ++k) w[k] = x[st.form.order[k]];
  for (int b = 0; b < st.form.blocks(); ++b) {
    const auto ub = static_cast<Index>(b);
    const auto first = static_cast<Index>(st.rowsStart[ub]);
    const auto end = static_cast<Index>(st.rowsStart[ub + 1]);
    for (Index q = first; q < end; ++q) {
      double sum = 0;
      for (int e = st.entryStart[q]; e < st.entryStart[q + 1]; ++e)
        sum += below[e] * w[st.couplingCol[static_cast<Index>(e)]];
      w[st.couplingRow[q]] -= sum;
    }
    const Index begin = blockBegin(st.form, b), s = blockSize(st.form, b);
    if (s == 1) {
      w[begin] *= invDiag_[begin];
    } else {
      denseLuSolve(factors_.data() + st.factorOffset[ub], static_cast<int>(s),
                   pivots_.data() + begin, invDiag_.data() + begin, w + begin);
    }
  }
  for (Index k = 0; k < n; ++k) x[st.form.order[k]] = w[k];
}

void BlockDenseLu::solve(double* b, int nrhs) {
  const Structure& st = *structure_;
  const auto n = static_cast<Index>(st.n), width = static_cast<Index>(nrhs);
  work_.resize(std::max(n * width, n));
  double* t = work_.data();  // B's rows in the block order
  const std::vector<int>& order = st.form.order;
  const double* below = coupling();
  for (Index j = 0; j < width; ++j)
    for (Index k = 0; k < n; ++k) t[k * width + j] = b[j * n + static_cast<Index>(order[k])];
  for (int blk = 0; blk < st.form.blocks(); ++blk) {
    const auto ub = static_cast<Index>(blk);
    const auto first = static_cast<Index>(st.rowsStart[ub]);
    const auto end = static_cast<Index>(st.rowsStart[ub + 1]);
    for (Index q = first; q < end; ++q) {
      double* row = t + static_cast<Index>(st.couplingRow[q]) * width;
      for (int e = st.entryStart[q]; e < st.entryStart[q + 1]; ++e) {
        const double c = below[e];
        const double* from = t + static_cast<Index>(st.couplingCol[static_cast<Index>(e)]) * width;
        for (Index j = 0; j < width; ++j) row[j] -= c * from[j];
      }
    }
    const Index begin = blockBegin(st.form, blk), s = blockSize(st.form, blk);
    denseLuSolveRows(factors_.data() + st.factorOffset[ub], static_cast<int>(s),
                     pivots_.data() + begin, invDiag_.data() + begin, t + begin * width, nrhs);
  }
  for (Index j = 0; j < width; ++j)
    for (Index k = 0; k < n; ++k) b[j * n + static_cast<Index>(order[k])] = t[k * width + j];
}

void BlockDenseLu::reserveRightHandSides(int nrhs) {
  const Structure& st = *structure_;
  work_.reserve(static_cast<Index>(st.n) * static_cast<Index>(std::max(nrhs, 1)));
}

double BlockDenseLu::pivotSpread() const {
  const Structure& st = *structure_;
  double largestPivot = 0, largestInversePivot = 0;
  for (int b = 0; b < st.form.blocks(); ++b) {
    const Index begin = blockBegin(st.form, b), s = blockSize(st.form, b);
    const double* a = factors_.data() + st.factorOffset[static_cast<Index>(b)];
    for (Index k = 0; k < s; ++k) {
      largestPivot = std::max(largestPivot, std::abs(a[k * s + k]));
      largestInversePivot = std::max(largestInversePivot, std::abs(invDiag_[begin + k]));
    }
  }
  return largestPivot * largestInversePivot;
}

}  // namespace sensode::integrators::detail
