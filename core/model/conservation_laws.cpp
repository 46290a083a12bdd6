// SPDX-License-Identifier: MIT
// Conservation laws: Γ in RREF with Γ·N = 0 (NUMERICS.md §8.2).
//
// Exact path:
//   1. Every entry of N becomes a fraction with a small denominator that reproduces the double
//      exactly; each reaction column is scaled by the lcm of its denominators. Scaling a column of
//      N does not change the left null space, so the problem becomes an integer one, N'.
//   2. The null space of N'ᵀ (reactions × species) is computed modulo the prime p = 2⁶¹ − 1 by
//      sparse Gaussian elimination with Markowitz pivoting and a dense finish (any pivot order
//      gives the same null space, so it is chosen for sparsity alone). Working mod p instead of
//      over ℚ keeps every number one machine word: fraction-free elimination of a few thousand
//      species grows the integers to hundreds of digits once the active submatrix fills in.
//   3. That basis is brought to RREF mod p with the columns in abundance order; the RREF of a
//      subspace is unique, so this is what fixes the dependent species.
//   4. Every entry is recovered as a fraction a/b (|a|, b < 2³⁰) by rational reconstruction and the
//      result is checked exactly over the integers, Γ·N' = 0. The check certifies the answer (see
//      certifiedLaws), so neither an unlucky prime nor an entry too large to reconstruct can
//      produce a wrong Γ; they only make us go numeric.
// Numeric paths, both verified by ‖Γ·N‖ ≤ 1e-10·‖|Γ|·|N|‖ (else sensode::Error):
//   - rational N whose RREF entries are too large to reconstruct: the mod-p RREF still gives the
//     dependent species and the zero pattern, so Γ follows from one sparse LU solve;
//   - irrational-looking entries (or anything above failed): SVD of Nᵀ and a numeric RREF in the
//     same column order.

#include "core/model/conservation_laws.h"

#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "core/common/cancellation.h"
#include "core/common/errors.h"
#include "core/model/exact_arithmetic.h"

namespace sensode::model {
namespace {

using namespace exact;  // fractions, arithmetic mod p, reconstruction (exact_arithmetic.h)

// ---------------------------------------------------------------------------------------------
// Gaussian elimination mod p of a sparse m × n matrix.

struct Entry {
  int col;
  std::uint64_t val;
};
using SparseRow = std::vector<Entry>;  // sorted by col, no zeros

// The echelon structure the null space and the column basis are read from. Pivot k eliminated
// column pivotCols[k]; pivotRows[k] is its row scaled so that the pivot is 1, with the pivot entry
// dropped and entries only in columns pivoted after step k or never pivoted (free).
struct Elimination {
  std::vector<int> pivotCols;
  std::vector<SparseRow> pivotRows;
  std::vector<char> isPivot;  // per column
};

// splitmix64: deterministic random multipliers for row compression (see denseCore).
class Random {
 public:
  std::uint64_t nextMod() {
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const std::uint64_t v = z >> 3;  // < 2⁶¹
    return v >= kPrime ? v - kPrime : v;
  }

 private:
  std::uint64_t state_ = 0x5e50de5e50de5e50ULL;
};

// Right-looking sparse elimination with Markowitz pivoting: the sparsest column, and in it the
// shortest row (fill ≤ (count − 1)(length − 1)); rows of length one (fill-free) first. Random
// stoichiometries fill in towards the end, leaving a small dense core. When continuing sparsely
// would cost more than dense elimination of that core, the core is finished densely.
class Eliminator {
 public:
  Eliminator(std::vector<SparseRow> rows, int n)
      : rows_(std::move(rows)),
        n_(n),
        m_(static_cast<int>(rows_.size())),
        colCount_(n, 0),
        colRows_(n),
        rowActive_(m_, 1),
        stamp_(m_, -1) {
    result_.isPivot.assign(n, 0);
    for (int r = 0; r < m_; ++r) {
      for (const Entry& e : rows_[r]) {
        ++colCount_[e.col];
        colRows_[e.col].push_back(r);
      }
      if (rows_[r].empty()) rowActive_[r] = 0;
      if (rows_[r].size() == 1) singletonRows_.push_back(r);
    }
    for (int c = 0; c < n_; ++c)
      if (colCount_[c] > 0) columnQueue_.emplace(colCount_[c], c), ++activeColumns_;
  }

  Elimination run() {
    for (int step = 0;; ++step) {
      if (step % 64 == 0) throwIfCancelled();  // a few thousand species take seconds
      int pivotRow = -1, pivotCol = -1;
      if (!choosePivot(pivotRow, pivotCol)) break;
      const auto fillBound =
          static_cast<double>(colCount_[pivotCol]) * static_cast<double>(rows_[pivotRow].size());
      const auto coreColumns = static_cast<double>(activeColumns_);
      // Sparse steps from here on cost at least fillBound each (merges with bookkeeping, some 10
      // dense operations per entry); the dense core costs about C³/3 for C columns.
      if (coreColumns >= 32 &&
          10.0 * fillBound * coreColumns > coreColumns * coreColumns * coreColumns / 3) {
        denseCore();
        break;
      }
      pivot(pivotRow, pivotCol, step);
    }
    return std::move(result_);
  }

 private:
  std::uint64_t valueIn(int r, int c) const {
    const SparseRow& row = rows_[r];
    auto it = std::lower_bound(row.begin(), row.end(), c,
                               [](const Entry& e, int col) { return e.col < col; });
    return it != row.end() && it->col == c ? it->val : 0;
  }

  void decrementCount(int c) {
    if (--colCount_[c] > 0)
      columnQueue_.emplace(colCount_[c], c);
    else
      --activeColumns_;
  }

  bool choosePivot(int& pivotRow, int& pivotCol) {
    while (!singletonRows_.empty()) {
      const int r = singletonRows_.back();
      singletonRows_.pop_back();
      if (rowActive_[r] && rows_[r].size() == 1) {
        pivotRow = r;
        pivotCol = rows_[r][0].col;
        return true;
      }
    }
    while (!columnQueue_.empty()) {
      const auto [count, c] = columnQueue_.top();
      columnQueue_.pop();
      // Lazily invalidated: an entry is current when it still matches the column's count.
      if (result_.isPivot[c] || count != colCount_[c] || count == 0) continue;
      std::size_t bestLength = SIZE_MAX;
      for (int r : colRows_[c]) {
        if (!rowActive_[r]) continue;
        const std::size_t length = rows_[r].size();
        if (length < bestLength && valueIn(r, c) != 0) bestLength = length, pivotRow = r;
      }
      if (pivotRow >= 0) {
        pivotCol = c;
        columnQueue_.emplace(count, c);  // still current if we switch to the dense core
        return true;
      }
    }
    return false;
  }

  void pivot(int pivotRow, int pivotCol, int step) {
    // Normalize the pivot row and retire it.
    SparseRow& prow = rows_[pivotRow];
    const std::uint64_t inverse = invMod(valueIn(pivotRow, pivotCol));
    SparseRow normalized;
    normalized.reserve(prow.size() - 1);
    for (const Entry& e : prow) {
      if (e.col == pivotCol) continue;
      normalized.push_back({e.col, mulMod(e.val, inverse)});
      decrementCount(e.col);
    }
    rowActive_[pivotRow] = 0;
    result_.isPivot[pivotCol] = 1;
    SparseRow().swap(prow);

    // Eliminate the pivot column from every other active row: row −= a·normalized.
    for (int r : colRows_[pivotCol]) {
      if (!rowActive_[r] || stamp_[r] == step) continue;
      stamp_[r] = step;
      const std::uint64_t a = valueIn(r, pivotCol);
      if (a != 0) subtractPivotRow(r, pivotCol, negMod(a), normalized);
    }
    colCount_[pivotCol] = 0;
    --activeColumns_;
    std::vector<int>().swap(colRows_[pivotCol]);
    result_.pivotCols.push_back(pivotCol);
    result_.pivotRows.push_back(std::move(normalized));
  }

  void subtractPivotRow(int r, int pivotCol, std::uint64_t factor, const SparseRow& normalized) {
    SparseRow& row = rows_[r];
    merged_.clear();
    merged_.reserve(row.size() + normalized.size());
    auto it = row.begin();
    auto jt = normalized.begin();
    while (it != row.end() || jt != normalized.end()) {
      if (jt == normalized.end() || (it != row.end() && it->col < jt->col)) {
        if (it->col != pivotCol) merged_.push_back(*it);
        ++it;
      } else if (it == row.end() || jt->col < it->col) {  // fill-in
        merged_.push_back({jt->col, mulMod(factor, jt->val)});
        if (++colCount_[jt->col] == 1) ++activeColumns_;
        colRows_[jt->col].push_back(r);
        columnQueue_.emplace(colCount_[jt->col], jt->col);
        ++jt;
      } else {
        const std::uint64_t v = addMod(it->val, mulMod(factor, jt->val));
        if (v != 0)
          merged_.push_back({it->col, v});
        else
          decrementCount(it->col);  // cancellation
        ++it, ++jt;
      }
    }
    row.swap(merged_);
    if (row.empty()) rowActive_[r] = 0;
    if (row.size() == 1) singletonRows_.push_back(r);
  }

  // Finishes the active submatrix (R rows × C columns) densely: rows are taken shortest first and
  // reduced against the dense echelon rows found so far, until the rank reaches C. When the core is
  // rank deficient every row must be looked at; then the rows left after the first C + 16 are
  // replaced by (C − rank + 8) random combinations of them. Over a 61-bit field such combinations
  // keep the rank with probability 1 − O(C/p); a loss would surface as an extra null vector that
  // fails the exact verification, never as a wrong answer.
  void denseCore() {
    std::vector<int> columns, localOf(n_, -1);
    for (int c = 0; c < n_; ++c)
      if (!result_.isPivot[c] && colCount_[c] > 0) {
        localOf[c] = static_cast<int>(columns.size());
        columns.push_back(c);
      }
    const int width = static_cast<int>(columns.size());
    std::vector<int> coreRows;
    for (int r = 0; r < m_; ++r)
      if (rowActive_[r] && !rows_[r].empty()) coreRows.push_back(r);
    std::stable_sort(coreRows.begin(), coreRows.end(),
                     [&](int a, int b) { return rows_[a].size() < rows_[b].size(); });

    std::vector<std::vector<std::uint64_t>> echelon;
    std::vector<int> echelonPivot;  // local column of each echelon row's leading entry
    std::vector<std::uint64_t> dense(width);
    // Reduces `dense` against the echelon and keeps what is left as a new echelon row.
    auto absorb = [&]() {
      for (std::size_t j = 0; j < echelon.size(); ++j) {
        const int pc = echelonPivot[j];
        const std::uint64_t f = dense[pc];
        if (f == 0) continue;
        const std::uint64_t factor = negMod(f);
        const std::vector<std::uint64_t>& e = echelon[j];
        for (int c = pc; c < width; ++c)
          if (e[c] != 0) dense[c] = addMod(dense[c], mulMod(factor, e[c]));
      }
      int lead = 0;
      while (lead < width && dense[lead] == 0) ++lead;
      if (lead == width) return;
      const std::uint64_t inverse = invMod(dense[lead]);
      for (int c = lead; c < width; ++c) dense[c] = mulMod(dense[c], inverse);
      echelon.push_back(dense);
      echelonPivot.push_back(lead);
    };

    const std::size_t direct = std::min(coreRows.size(), static_cast<std::size_t>(width) + 16);
    for (std::size_t k = 0; k < direct && static_cast<int>(echelon.size()) < width; ++k) {
      std::fill(dense.begin(), dense.end(), 0);
      for (const Entry& e : rows_[coreRows[k]]) dense[localOf[e.col]] = e.val;
      absorb();
    }
    if (static_cast<int>(echelon.size()) < width && coreRows.size() > direct) {
      const int combinations = width - static_cast<int>(echelon.size()) + 8;
      std::vector<std::vector<std::uint64_t>> compressed(combinations,
                                                         std::vector<std::uint64_t>(width, 0));
      Random random;
      for (std::size_t k = direct; k < coreRows.size(); ++k)
        for (std::vector<std::uint64_t>& target : compressed) {
          const std::uint64_t s = random.nextMod();
          for (const Entry& e : rows_[coreRows[k]]) {
            std::uint64_t& slot = target[localOf[e.col]];
            slot = addMod(slot, mulMod(s, e.val));
          }
        }
      for (std::vector<std::uint64_t>& row : compressed) {
        if (static_cast<int>(echelon.size()) == width) break;
        dense.swap(row);
        absorb();
      }
    }

    // Echelon row j has zeros at the pivots of rows before it, so the order of `echelon` is a valid
    // continuation of the pivot sequence.
    for (std::size_t j = 0; j < echelon.size(); ++j) {
      SparseRow row;
      for (int c = echelonPivot[j] + 1; c < width; ++c)
        if (echelon[j][c] != 0) row.push_back({columns[c], echelon[j][c]});
      result_.pivotCols.push_back(columns[echelonPivot[j]]);
      result_.pivotRows.push_back(std::move(row));
      result_.isPivot[columns[echelonPivot[j]]] = 1;
    }
  }

  std::vector<SparseRow> rows_;
  int n_, m_;
  std::vector<int> colCount_;
  std::vector<std::vector<int>> colRows_;  // rows that contain (or once contained) the column
  std::vector<char> rowActive_;
  std::vector<int> stamp_;  // last step a row was updated in, to skip duplicates in colRows_
  using Candidate = std::pair<int, int>;  // (count, column)
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> columnQueue_;
  std::vector<int> singletonRows_;
  int activeColumns_ = 0;  // not pivoted, in at least one active row
  SparseRow merged_;
  Elimination result_;
};

// Null-space basis: one row per free column f, with 1 at f and 0 at the other free columns (the
// classical basis read off an echelon form), as sparse rows over the n columns. All vectors are
// back-substituted at once: y_c for a pivot column c is −Σ U_cj·y_j over the later columns j, each
// y_j a sparse vector indexed by basis vector.
std::vector<SparseRow> nullSpaceBasis(const Elimination& elimination, int n) {
  std::vector<int> basisIndex(n, -1);
  int d = 0;
  for (int c = 0; c < n; ++c)
    if (!elimination.isPivot[c]) basisIndex[c] = d++;
  std::vector<SparseRow> y(n);  // Entry::col is the basis index here
  for (int c = 0; c < n; ++c)
    if (basisIndex[c] >= 0) y[c].push_back({basisIndex[c], 1});
  std::vector<std::uint64_t> accumulator(d, 0);
  std::vector<char> seen(d, 0);
  std::vector<int> touched;
  for (std::size_t k = elimination.pivotCols.size(); k-- > 0;) {
    touched.clear();
    for (const Entry& u : elimination.pivotRows[k])
      for (const Entry& v : y[u.col]) {
        if (!seen[v.col]) seen[v.col] = 1, touched.push_back(v.col);
        accumulator[v.col] = subMod(accumulator[v.col], mulMod(u.val, v.val));
      }
    std::sort(touched.begin(), touched.end());
    SparseRow& out = y[elimination.pivotCols[k]];
    for (int b : touched) {
      if (accumulator[b] != 0) out.push_back({b, accumulator[b]});
      accumulator[b] = 0;
      seen[b] = 0;
    }
  }
  std::vector<SparseRow> basis(d);
  for (int c = 0; c < n; ++c)
    for (const Entry& v : y[c]) basis[v.col].push_back({c, v.val});
  return basis;
}

// ---------------------------------------------------------------------------------------------
// RREF mod p of independent sparse rows whose columns are already in elimination order.

// Subtracts from `row` the multiples of echelon rows that clear every position led by one of them
// (leaderOf[pos] ≥ 0). Positions are visited in increasing order through a heap, which is
// consistent because an echelon row has entries only right of its leading position, so a visited
// position never changes again. `dense` and `queued` are zero on entry and on exit.
void reduceAgainst(SparseRow& row, const std::vector<SparseRow>& echelon,
                   const std::vector<int>& leaderOf, std::vector<std::uint64_t>& dense,
                   std::vector<char>& queued) {
  std::priority_queue<int, std::vector<int>, std::greater<>> positions;
  for (const Entry& e : row) {
    dense[e.col] = e.val;
    queued[e.col] = 1;
    positions.push(e.col);
  }
  row.clear();
  while (!positions.empty()) {
    const int pos = positions.top();
    positions.pop();
    const std::uint64_t value = std::exchange(dense[pos], 0);
    queued[pos] = 0;
    if (value == 0) continue;
    const int leader = leaderOf[pos];
    if (leader < 0) {
      row.push_back({pos, value});
      continue;
    }
    const std::uint64_t factor = negMod(value);
    for (const Entry& e : echelon[leader]) {
      if (e.col == pos) continue;
      dense[e.col] = addMod(dense[e.col], mulMod(factor, e.val));
      if (!queued[e.col]) queued[e.col] = 1, positions.push(e.col);
    }
  }
}

// Rows sorted by leading position, each led by a 1 with zeros at the other rows' leads.
std::vector<SparseRow> sparseRref(std::vector<SparseRow> rows, int n) {
  std::vector<std::uint64_t> dense(n, 0);
  std::vector<char> queued(n, 0);
  std::vector<int> leaderOf(n, -1);
  std::vector<SparseRow> echelon;
  // Forward: each row reduced against the rows before it and normalized at its leading entry.
  for (SparseRow& row : rows) {
    reduceAgainst(row, echelon, leaderOf, dense, queued);
    if (row.empty()) continue;  // dependent; cannot happen for a basis
    const std::uint64_t inverse = invMod(row.front().val);
    for (Entry& e : row) e.val = mulMod(e.val, inverse);
    leaderOf[row.front().col] = static_cast<int>(echelon.size());
    echelon.push_back(std::move(row));
  }
  // Backward: by decreasing leading position, each row cleared at the leads of the rows right of
  // it, which are final by then.
  std::vector<int> byLead(echelon.size());
  std::iota(byLead.begin(), byLead.end(), 0);
  std::sort(byLead.begin(), byLead.end(),
            [&](int a, int b) { return echelon[a].front().col > echelon[b].front().col; });
  std::vector<int> finalLeaderOf(n, -1);
  for (int index : byLead) {
    SparseRow& row = echelon[index];
    const Entry lead = row.front();
    row.erase(row.begin());
    reduceAgainst(row, echelon, finalLeaderOf, dense, queued);
    row.insert(row.begin(), lead);
    finalLeaderOf[lead.col] = index;
  }
  std::vector<SparseRow> result;
  result.reserve(echelon.size());
  for (auto it = byLead.rbegin(); it != byLead.rend(); ++it)
    result.push_back(std::move(echelon[*it]));
  return result;
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by both paths.

// Column order for elimination: descending abundance, ties (and NaNs) in the original order.
std::vector<int> eliminationOrder(int n, const std::vector<double>& abundance) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (!abundance.empty()) {
    auto key = [&](int i) { return std::isnan(abundance[i]) ? -HUGE_VAL : abundance[i]; };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
  }
  return order;
}

void fillIndependent(ConservationLaws& laws) {
  const int n = static_cast<int>(laws.gamma.cols());
  std::vector<char> isDependent(n, 0);
  for (int c : laws.dependent) isDependent[c] = 1;
  laws.independent.clear();
  for (int c = 0; c < n; ++c)
    if (!isDependent[c]) laws.independent.push_back(c);
}

// ---------------------------------------------------------------------------------------------
// Exact path.

// N' = N with each reaction column scaled by the lcm of its denominators, stored sparse per
// reaction (the rows of N'ᵀ) and per species.
struct IntegerStoichiometry {
  std::vector<std::vector<std::pair<int, std::int64_t>>> byReaction;  // (species, value)
  std::vector<std::vector<std::pair<int, std::int64_t>>> bySpecies;   // (reaction, value)
};

// Nothing when some entry is not a fraction with a small denominator (the numeric path's case).
std::optional<IntegerStoichiometry> integerStoichiometry(const Eigen::MatrixXd& N) {
  const int n = static_cast<int>(N.rows());
  const int m = static_cast<int>(N.cols());
  IntegerStoichiometry result;
  result.byReaction.resize(m);
  result.bySpecies.resize(n);
  std::vector<std::pair<int, Fraction>> column;
  for (int j = 0; j < m; ++j) {
    column.clear();
    std::int64_t lcm = 1;
    for (int i = 0; i < n; ++i) {
      const double v = N(i, j);
      if (v == 0.0) continue;
      const auto f = toFraction(v);
      if (!f) return std::nullopt;
      const auto next = checkedLcm(lcm, f->den);
      if (!next) return std::nullopt;
      lcm = *next;
      column.emplace_back(i, *f);
    }
    for (const auto& [species, f] : column) {
      std::int64_t scaled = 0;
      if (__builtin_mul_overflow(f.num, lcm / f.den, &scaled) || scaled >= kMaxInputMagnitude ||
          scaled <= -kMaxInputMagnitude)
        return std::nullopt;
      result.byReaction[j].emplace_back(species, scaled);
      result.bySpecies[species].emplace_back(j, scaled);
    }
  }
  return result;
}

// RREF of a basis of the left null space mod p. Columns are elimination positions (position k is
// species order[k]), so each row's leading entry is its dependent species.
std::vector<SparseRow> modularRref(const IntegerStoichiometry& system,
                                   const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  std::vector<int> positionOf(n);
  for (int k = 0; k < n; ++k) positionOf[order[k]] = k;
  std::vector<SparseRow> rows(system.byReaction.size());
  for (std::size_t j = 0; j < rows.size(); ++j) {
    for (const auto& [species, value] : system.byReaction[j])
      rows[j].push_back({positionOf[species], toMod(value)});
    std::sort(rows[j].begin(), rows[j].end(),
              [](const Entry& a, const Entry& b) { return a.col < b.col; });
  }
  // Any pivot order gives the same null space; only the RREF fixes the column order.
  return sparseRref(nullSpaceBasis(Eliminator(std::move(rows), n).run(), n), n);
}

// Rational reconstruction of every entry and the exact check Γ·N' = 0 over the integers. Nothing
// when an entry has no small fraction or the check fails.
std::optional<ConservationLaws> certifiedLaws(const IntegerStoichiometry& system,
                                              const std::vector<SparseRow>& rref,
                                              const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  const int count = static_cast<int>(rref.size());
  ConservationLaws laws;
  laws.exact = true;
  laws.gamma = Eigen::MatrixXd::Zero(count, n);
  laws.dependent.resize(count);
  std::vector<Int128> product(system.byReaction.size(), 0);
  std::vector<int> touched;
  std::vector<Fraction> fractions;
  for (int r = 0; r < count; ++r) {
    const SparseRow& row = rref[r];
    fractions.clear();
    std::int64_t lcm = 1;
    for (const Entry& e : row) {
      const auto f = reconstruct(e.val);
      if (!f) return std::nullopt;
      const auto next = checkedLcm(lcm, f->den);
      if (!next) return std::nullopt;
      lcm = *next;
      fractions.push_back(*f);
    }
    // This row scaled to integers (num · lcm/den) times N', accumulated per reaction.
    touched.clear();
    bool overflow = false;
    for (std::size_t k = 0; k < row.size() && !overflow; ++k) {
      const int species = order[row[k].col];
      laws.gamma(r, species) =
          static_cast<double>(fractions[k].num) / static_cast<double>(fractions[k].den);
      const Int128 g = static_cast<Int128>(fractions[k].num) * (lcm / fractions[k].den);
      for (const auto& [reaction, value] : system.bySpecies[species]) {
        Int128 term = 0;
        Int128& slot = product[reaction];
        if (__builtin_mul_overflow(g, static_cast<Int128>(value), &term) ||
            __builtin_add_overflow(slot, term, &slot))
          overflow = true;
        touched.push_back(reaction);
      }
    }
    bool zero = !overflow;
    for (int reaction : touched) {
      if (product[reaction] != 0) zero = false;
      product[reaction] = 0;
    }
    if (!zero) return std::nullopt;
    laws.dependent[r] = order[row.front().col];
  }
  // Certification: every row lies in the rational left null space (just checked) and the rows are
  // independent (RREF), so count ≤ its dimension. Conversely rank mod p ≤ rank over ℚ, so the mod-p
  // null space, whose dimension is count, is at least as large. Hence Γ is a basis, and being in
  // RREF for this column order it is *the* RREF.
  fillIndependent(laws);
  return laws;
}

// ‖Γ·N‖_max ≤ 1e-10 · ‖|Γ|·|N|‖_max: the residual against what rounding alone can produce. Returns
// an error message, empty when the check passes.
std::string numericResidualError(const ConservationLaws& laws, const Eigen::MatrixXd& N) {
  if (laws.gamma.rows() == 0 || N.cols() == 0) return {};
  const Eigen::SparseMatrix<double> sparseN = N.sparseView();  // stoichiometries are sparse
  const double residual = (laws.gamma * sparseN).cwiseAbs().maxCoeff();
  const double scale = (laws.gamma.cwiseAbs() * sparseN.cwiseAbs()).maxCoeff();
  if (residual <= 1e-10 * scale) return {};
  char buffer[160];
  std::snprintf(buffer, sizeof buffer,
                "conservation laws: verification failed, max |Γ·N| = %.3g exceeds 1e-10 × %.3g",
                residual, scale);
  return buffer;
}

// For rational N whose RREF entries are too large to reconstruct (random networks with fewer
// reactions than species produce ratios of large minors): the mod-p RREF still tells, with
// probability 1 − O(n/p), which species are dependent (D) and which entries are zero, so Γ follows
// from one sparse solve instead of an SVD. With I the independent species and R a set of reactions
// whose columns form a basis of the column space of N[I, :], N[I, R] is square and non-singular
// (rows I span the row space of N), and Γ = [I_D | X] with X·N[I, R] = −N[D, R]. Nothing when any
// step or the numeric verification fails.
std::optional<ConservationLaws> pivotGuidedLaws(const Eigen::MatrixXd& N,
                                                const IntegerStoichiometry& system,
                                                const std::vector<SparseRow>& rref,
                                                const std::vector<int>& order) {
  const int n = static_cast<int>(N.rows());
  const int m = static_cast<int>(N.cols());
  const int count = static_cast<int>(rref.size());
  ConservationLaws laws;
  laws.exact = false;
  for (const SparseRow& row : rref) laws.dependent.push_back(order[row.front().col]);
  laws.gamma = Eigen::MatrixXd::Zero(count, n);
  fillIndependent(laws);
  const std::vector<int>& independent = laws.independent;
  const int rank = static_cast<int>(independent.size());
  if (rank == 0) {
    for (int r = 0; r < count; ++r) laws.gamma(r, laws.dependent[r]) = 1.0;
    return numericResidualError(laws, N).empty() ? std::optional(laws) : std::nullopt;
  }

  std::vector<int> indexInI(n, -1);
  for (int k = 0; k < rank; ++k) indexInI[independent[k]] = k;
  std::vector<SparseRow> speciesRows(rank);
  for (int k = 0; k < rank; ++k)
    for (const auto& [reaction, value] : system.bySpecies[independent[k]])
      speciesRows[k].push_back({reaction, toMod(value)});
  const std::vector<int> basisReactions = Eliminator(std::move(speciesRows), m).run().pivotCols;
  if (static_cast<int>(basisReactions.size()) != rank) return std::nullopt;

  // N[I, R]ᵀ · Xᵀ = −N[D, R]ᵀ.
  std::vector<Eigen::Triplet<double>> triplets;
  Eigen::MatrixXd rhs = Eigen::MatrixXd::Zero(rank, count);
  std::vector<int> lawOf(n, -1);
  for (int r = 0; r < count; ++r) lawOf[laws.dependent[r]] = r;
  for (int k = 0; k < rank; ++k)
    for (const auto& [species, value] : system.byReaction[basisReactions[k]]) {
      const double v = N(species, basisReactions[k]);
      if (indexInI[species] >= 0)
        triplets.emplace_back(k, indexInI[species], v);
      else
        rhs(k, lawOf[species]) = -v;
    }
  Eigen::SparseMatrix<double> matrix(rank, rank);
  matrix.setFromTriplets(triplets.begin(), triplets.end());
  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu;
  lu.compute(matrix);
  if (lu.info() != Eigen::Success) return std::nullopt;
  const Eigen::MatrixXd xT = lu.solve(rhs);
  if (lu.info() != Eigen::Success || !xT.allFinite()) return std::nullopt;

  // Entries that are zero mod p are zero (a nonzero rational vanishes mod p only if p divides its
  // numerator); keeping them exactly zero keeps Γ in RREF instead of RREF plus round-off.
  for (int r = 0; r < count; ++r)
    for (const Entry& e : rref[r]) {
      const int species = order[e.col];
      laws.gamma(r, species) = indexInI[species] >= 0 ? xT(indexInI[species], r) : 1.0;
    }
  if (!numericResidualError(laws, N).empty()) return std::nullopt;
  return laws;
}

// ---------------------------------------------------------------------------------------------
// Numeric path.

ConservationLaws numericLaws(const Eigen::MatrixXd& N, const std::vector<int>& order) {
  const Eigen::Index n = N.rows();
  const Eigen::Index m = N.cols();
  Eigen::MatrixXd basis;  // rows span the left null space
  if (m == 0 || N.cwiseAbs().maxCoeff() == 0.0) {
    basis = Eigen::MatrixXd::Identity(n, n);
  } else {
    const Eigen::MatrixXd A = N.transpose();
    Eigen::BDCSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeFullV);
    const Eigen::VectorXd& sigma = svd.singularValues();
    const double tolerance =
        static_cast<double>(std::max(n, m)) * std::numeric_limits<double>::epsilon() * sigma(0);
    Eigen::Index rank = 0;
    while (rank < sigma.size() && sigma(rank) > tolerance) ++rank;
    basis = svd.matrixV().rightCols(n - rank).transpose();
  }

  // RREF with partial pivoting among the remaining rows, columns in elimination order. The basis
  // rows are orthonormal, so a column whose best remaining entry is below 1e-9 is (to working
  // accuracy) a combination of the pivot columns before it.
  const Eigen::Index count = basis.rows();
  Eigen::MatrixXd g = basis;
  std::vector<int> pivots;
  Eigen::Index nextRow = 0;
  for (int c : order) {
    if (nextRow == count) break;
    Eigen::Index best = nextRow;
    for (Eigen::Index r = nextRow; r < count; ++r)
      if (std::fabs(g(r, c)) > std::fabs(g(best, c))) best = r;
    if (std::fabs(g(best, c)) <= 1e-9) continue;
    g.row(nextRow).swap(g.row(best));
    g.row(nextRow) /= g(nextRow, c);
    for (Eigen::Index r = 0; r < count; ++r)
      if (r != nextRow && g(r, c) != 0.0) g.row(r) -= g(r, c) * g.row(nextRow);
    g.col(c).setZero();
    g(nextRow, c) = 1.0;
    pivots.push_back(c);
    ++nextRow;
  }
  if (nextRow != count)
    throw Error("conservation laws: numeric RREF found " + std::to_string(nextRow) +
                " pivots for a null space of dimension " + std::to_string(count));
  // Pivot columns were set to exact identity above; clear round-off elsewhere.
  for (Eigen::Index r = 0; r < count; ++r)
    for (Eigen::Index c = 0; c < n; ++c)
      if (std::fabs(g(r, c)) < 1e-14) g(r, c) = 0.0;

  ConservationLaws laws;
  laws.exact = false;
  laws.gamma = std::move(g);
  laws.dependent = std::move(pivots);
  fillIndependent(laws);
  return laws;
}

// Integer coefficients for describe(): the fraction of each entry, row scaled by the lcm.
std::optional<std::vector<std::int64_t>> integerRow(const Eigen::VectorXd& row) {
  std::vector<Fraction> fractions;
  std::int64_t lcm = 1;
  for (Eigen::Index c = 0; c < row.size(); ++c) {
    const auto f = toFraction(row(c));
    if (!f) return std::nullopt;
    const auto next = checkedLcm(lcm, f->den);
    if (!next) return std::nullopt;
    lcm = *next;
    fractions.push_back(*f);
  }
  std::vector<std::int64_t> result;
  std::int64_t g = 0;
  for (const Fraction& f : fractions) {
    std::int64_t v = 0;
    if (__builtin_mul_overflow(f.num, lcm / f.den, &v)) return std::nullopt;
    result.push_back(v);
    g = std::gcd(g, v);
  }
  if (g > 1)
    for (std::int64_t& v : result) v /= g;
  return result;
}

std::string formatDecimal(double magnitude) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", magnitude);
  return buffer;
}

}  // namespace

ConservationLaws findConservationLaws(const Eigen::MatrixXd& stoichiometry,
                                      const std::vector<double>& abundance) {
  const auto n = static_cast<int>(stoichiometry.rows());
  if (!abundance.empty() && static_cast<int>(abundance.size()) != n)
    throw Error("conservation laws: abundance has " + std::to_string(abundance.size()) +
                " entries for " + std::to_string(n) + " species");
  if (!stoichiometry.allFinite())
    throw Error("conservation laws: the stoichiometry matrix has a non-finite entry");
  const std::vector<int> order = eliminationOrder(n, abundance);
  if (const auto system = integerStoichiometry(stoichiometry)) {
    const std::vector<SparseRow> rref = modularRref(*system, order);
    if (auto laws = certifiedLaws(*system, rref, order)) return std::move(*laws);
    if (auto laws = pivotGuidedLaws(stoichiometry, *system, rref, order)) return std::move(*laws);
  }
  ConservationLaws laws = numericLaws(stoichiometry, order);
  if (const std::string error = numericResidualError(laws, stoichiometry); !error.empty())
    throw Error(error);
  return laws;
}

std::vector<std::string> ConservationLaws::describe(const std::vector<std::string>& ids) const {
  std::vector<std::string> result;
  const int n = static_cast<int>(gamma.cols());
  for (int r = 0; r < count(); ++r) {
    const Eigen::VectorXd row = gamma.row(r).transpose();
    // Integer coefficients when the row is rational (always after the exact path), else the
    // RREF values themselves.
    const auto integers = integerRow(row);
    // Dependent species first (its coefficient is positive), then the rest in species order.
    const int lead = r < static_cast<int>(dependent.size()) ? dependent[r] : -1;
    std::vector<int> columns;
    if (lead >= 0) columns.push_back(lead);
    for (int c = 0; c < n; ++c)
      if (c != lead) columns.push_back(c);
    std::string text;
    for (int c : columns) {
      const double value = integers ? static_cast<double>((*integers)[c]) : row(c);
      if (value == 0.0) continue;
      text += text.empty() ? (value < 0 ? "-" : "") : (value < 0 ? " - " : " + ");
      const double magnitude = std::fabs(value);
      if (magnitude != 1.0)
        text += (integers ? std::to_string(std::llabs((*integers)[c])) : formatDecimal(magnitude)) +
                " ";
      text += c < static_cast<int>(ids.size()) ? ids[c] : "x" + std::to_string(c);
    }
    result.push_back(text.empty() ? "0" : text);
  }
  return result;
}

Eigen::VectorXd ConservationLaws::totals(const Eigen::VectorXd& x) const { return gamma * x; }

Eigen::VectorXd ConservationLaws::reduce(const Eigen::VectorXd& x) const {
  Eigen::VectorXd reduced(static_cast<Eigen::Index>(independent.size()));
  for (std::size_t k = 0; k < independent.size(); ++k)
    reduced(static_cast<Eigen::Index>(k)) = x(independent[k]);
  return reduced;
}

Eigen::VectorXd ConservationLaws::expand(const Eigen::VectorXd& xIndependent,
                                         const Eigen::VectorXd& totals) const {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(gamma.cols());
  for (std::size_t k = 0; k < independent.size(); ++k)
    x(independent[k]) = xIndependent(static_cast<Eigen::Index>(k));
  // Γ_D = I, so with x_D = 0 the product is Γ_I·x_I.
  const Eigen::VectorXd gammaIxI = gamma * x;
  for (std::size_t r = 0; r < dependent.size(); ++r)
    x(dependent[r]) = totals(static_cast<Eigen::Index>(r)) - gammaIxI(static_cast<Eigen::Index>(r));
  return x;
}

}  // namespace sensode::model
