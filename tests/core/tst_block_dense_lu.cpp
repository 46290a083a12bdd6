// SPDX-License-Identifier: MIT
// The block triangular form (Tarjan's strongly connected components) and the dense LU of its
// diagonal blocks that SparseLu's dense backend uses on reducible matrices: the blocks are the
// graph's components in an order where each depends only on those before it; solves with one
// and many right-hand sides match the matrix to rounding (backward error against the whole
// dense matrix); singular, nearly singular and non-finite matrices are refused as the whole
// matrix's dense LU refuses them.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "core/integrators/block_dense_lu.h"
#include "core/integrators/block_triangular.h"
#include "core/integrators/sparse_lu.h"
#include "support/backward_error.h"

namespace {

using sensode::integrators::detail::BlockDenseLu;
using sensode::integrators::detail::BlockTriangularForm;
using sensode::integrators::detail::blockTriangularForm;
using sensode::integrators::detail::SparseLu;
using sensode::symbolic::SparsePattern;
using sensode::test::backwardError;

// A dense column-major matrix's nonzero pattern (CSC) and its values in that order.
struct Sparse {
  SparsePattern pattern;
  std::vector<double> values;
};
Sparse fromDense(const std::vector<double>& a, int n) {
  Sparse s;
  s.pattern.rows = s.pattern.cols = n;
  s.pattern.colPtr.push_back(0);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      const double v = a[static_cast<std::size_t>(j * n + i)];
      if (v != 0 || i == j) {
        s.pattern.rowIdx.push_back(i);
        s.values.push_back(v);
      }
    }
    s.pattern.colPtr.push_back(static_cast<int>(s.pattern.rowIdx.size()));
  }
  return s;
}

// A random reducible n × n matrix: diagonal blocks of the given sizes (dense, random, not
// dominant: the pivoting matters), entries below them with probability `fill`, then rows and
// columns shuffled by one permutation, so that the blocks are hidden.
std::vector<double> reducibleMatrix(int size, const std::vector<int>& sizes, double fill,
                                    std::mt19937& rng) {
  const auto n = static_cast<std::size_t>(size);
  std::uniform_real_distribution<double> u(-1, 1), coin(0, 1);
  std::vector<std::size_t> blockOf;
  for (std::size_t b = 0; b < sizes.size(); ++b) blockOf.insert(blockOf.end(), sizes[b], b);
  std::vector<double> ordered(n * n, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i)
      if (blockOf[i] == blockOf[j] || (blockOf[i] > blockOf[j] && coin(rng) < fill))
        ordered[j * n + i] = u(rng) + (i == j ? 0.5 : 0.0);
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<double> a(n * n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) a[perm[j] * n + perm[i]] = ordered[j * n + i];
  return a;
}

// Whether `form` is a block triangular form of `p` whose blocks are its strongly connected
// components: every entry lies in or below its row's block, and two states share a block
// exactly when each reaches the other (so no block could be split or merged).
bool isComponentForm(const SparsePattern& p, const BlockTriangularForm& form) {
  const auto n = static_cast<std::size_t>(p.rows);
  std::vector<int> sorted = form.order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < n; ++k)
    if (sorted[k] != static_cast<int>(k)) return false;  // a permutation
  std::vector<std::size_t> blockOfState(n);
  for (int b = 0; b < form.blocks(); ++b)
    for (int k = form.blockStart[static_cast<std::size_t>(b)];
         k < form.blockStart[static_cast<std::size_t>(b) + 1]; ++k)
      blockOfState[static_cast<std::size_t>(form.order[static_cast<std::size_t>(k)])] =
          static_cast<std::size_t>(b);
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (std::size_t j = 0; j < n; ++j)
    for (auto k = static_cast<std::size_t>(p.colPtr[j]);
         k < static_cast<std::size_t>(p.colPtr[j + 1]); ++k) {
      const auto i = static_cast<std::size_t>(p.rowIdx[k]);
      if (blockOfState[j] > blockOfState[i]) return false;  // above the blocks
      reach[j][i] = 1;                                        // x_j enters equation i
    }
  for (std::size_t k = 0; k < n; ++k) reach[k][k] = 1;
  for (std::size_t m = 0; m < n; ++m)  // transitive closure (Warshall)
    for (std::size_t i = 0; i < n; ++i)
      if (reach[i][m])
        for (std::size_t j = 0; j < n; ++j)
          if (reach[m][j]) reach[i][j] = 1;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if ((blockOfState[a] == blockOfState[b]) != (reach[a][b] && reach[b][a])) return false;
  return true;
}

}  // namespace

class TestBlockDenseLu : public QObject {
  Q_OBJECT

 private slots:
  // A chain S0 → S1 → {S2 ⇄ S3} → S4 and S5 on its own: five blocks, {0}, {1}, {2, 3}, {4}
  // and {5}, each after the blocks it takes values from.
  void componentsOfAReactionChain() {
    const int n = 6;
    std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
    const auto at = [&](int i, int j) -> double& { return a[static_cast<std::size_t>(j * n + i)]; };
    for (int i = 0; i < n; ++i) at(i, i) = 1;
    at(1, 0) = 1;  // S0 enters S1's equation
    at(2, 1) = 1;
    at(3, 2) = 1;
    at(2, 3) = 1;
    at(4, 3) = 1;
    const Sparse s = fromDense(a, n);
    const BlockTriangularForm form = blockTriangularForm(s.pattern);
    QCOMPARE(form.blocks(), 5);
    QVERIFY(isComponentForm(s.pattern, form));
    const auto positionOf = [&](int state) {
      return std::find(form.order.begin(), form.order.end(), state) - form.order.begin();
    };
    QVERIFY(positionOf(0) < positionOf(1));
    QVERIFY(positionOf(1) < positionOf(2));
    QVERIFY(positionOf(3) < positionOf(4));
    // Worthwhile: 1 + 1 + 8 + 1 + 1 of 216 flops.
    QVERIFY(BlockDenseLu::worthwhile(form, n));
  }

  void componentsOfRandomPatterns() {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 40; ++trial) {
      const int n = 5 + trial;
      std::vector<int> sizes;
      for (int left = n; left > 0;) {
        const int s = std::min(left, 1 + static_cast<int>(rng() % 7));
        sizes.push_back(s);
        left -= s;
      }
      const Sparse s = fromDense(reducibleMatrix(n, sizes, 0.2, rng), n);
      const BlockTriangularForm form = blockTriangularForm(s.pattern);
      QVERIFY2(isComponentForm(s.pattern, form), qPrintable(QString("n = %1").arg(n)));
      QVERIFY(form.blocks() >= static_cast<int>(sizes.size()) / 2);
    }
  }

  // One and many right-hand sides on reducible matrices whose blocks need pivoting, directly
  // and through SparseLu (which uses the blocks beyond 16 states where they save a quarter of
  // the flops), against the whole matrix.
  void solvesMatchTheWholeMatrix_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<QVector<int>>("sizes");
    QTest::newRow("Alkan-like 30 + 6 singletons") << 36 << QVector<int>{1, 1, 1, 30, 1, 1, 1};
    QTest::newRow("many small blocks") << 40 << QVector<int>{3, 5, 1, 7, 2, 6, 4, 1, 1, 5, 5};
    QTest::newRow("two halves") << 24 << QVector<int>{12, 12};
    QTest::newRow("all singletons") << 20 << QVector<int>(20, 1);
  }
  void solvesMatchTheWholeMatrix() {
    QFETCH(int, n);
    QFETCH(QVector<int>, sizes);
    std::mt19937 rng(static_cast<unsigned>(n));
    const std::vector<int> blockSizes(sizes.begin(), sizes.end());
    const std::vector<double> a = reducibleMatrix(n, blockSizes, 0.3, rng);
    const Sparse s = fromDense(a, n);
    const BlockTriangularForm form = blockTriangularForm(s.pattern);
    QCOMPARE(form.blocks(), static_cast<int>(blockSizes.size()));
    QVERIFY(BlockDenseLu::worthwhile(form, n));
    std::uniform_real_distribution<double> u(-1, 1);
    for (const int nrhs : {1, 3, 2 * n + 1}) {
      std::vector<double> b(static_cast<std::size_t>(n * nrhs));
      for (double& v : b) v = u(rng);
      BlockDenseLu blocks;
      blocks.analyze(s.pattern, form);
      double normA = 0;
      QVERIFY(blocks.factorize(s.values.data(), normA));
      std::vector<double> x = b;
      if (nrhs == 1) {
        blocks.solve(x.data());
      } else {
        blocks.solve(x.data(), nrhs);
      }
      const double direct = backwardError(a, x, b, n, nrhs);
      QVERIFY2(direct < 1e-14,
               qPrintable(QString("blocks, %1 right-hand sides: %2").arg(nrhs).arg(direct)));
      SparseLu lu;
      lu.analyze(s.pattern, SparseLu::Backend::Dense);
      std::copy(s.values.begin(), s.values.end(), lu.values());
      QVERIFY(lu.factorize());
      for (int repeat = 0; repeat < 2; ++repeat) {  // the second with A⁻¹ where it pays
        std::vector<double> y = b;
        lu.solve(y.data(), nrhs);
        const double viaSparseLu = backwardError(a, y, b, n, nrhs);
        QVERIFY2(viaSparseLu < 1e-13, qPrintable(QString("SparseLu, %1 right-hand sides: %2")
                                                     .arg(nrhs)
                                                     .arg(viaSparseLu)));
      }
    }
  }

  void singularAndNonFiniteMatricesAreRefused() {
    std::mt19937 rng(5);
    const int n = 36;
    const auto un = static_cast<std::size_t>(n);
    const std::vector<double> a = reducibleMatrix(n, {1, 1, 1, 30, 1, 1, 1}, 0.3, rng);
    const Sparse s = fromDense(a, n);
    const BlockTriangularForm form = blockTriangularForm(s.pattern);
    QCOMPARE(form.blockStart[1], 1);  // a block of one first
    BlockDenseLu blocks;
    blocks.analyze(s.pattern, form);
    double normA = 0;
    QVERIFY(blocks.factorize(s.values.data(), normA));
    // The index in s.values of entry (i, j), or none.
    const auto entry = [&](std::size_t i, std::size_t j) -> std::optional<std::size_t> {
      for (auto k = static_cast<std::size_t>(s.pattern.colPtr[j]);
           k < static_cast<std::size_t>(s.pattern.colPtr[j + 1]); ++k)
        if (static_cast<std::size_t>(s.pattern.rowIdx[k]) == i) return k;
      return std::nullopt;
    };
    // The first block's only value: zero, ε-small against the other pivots, not finite.
    const auto single = static_cast<std::size_t>(form.order[0]);
    for (const double bad : {0.0, 1e-300, std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity()}) {
      Sparse broken = s;
      broken.values[*entry(single, single)] = bad;
      QVERIFY2(!blocks.factorize(broken.values.data(), normA), qPrintable(QString::number(bad)));
      SparseLu lu;
      lu.analyze(broken.pattern, SparseLu::Backend::Dense);
      std::copy(broken.values.begin(), broken.values.end(), lu.values());
      QVERIFY(!lu.factorize());
    }
    // Two equal columns in the block of 30.
    const auto p = static_cast<std::size_t>(form.order[5]);
    const auto q = static_cast<std::size_t>(form.order[6]);
    std::vector<double> twin = a;
    std::copy_n(a.begin() + static_cast<std::ptrdiff_t>(p * un), un,
                twin.begin() + static_cast<std::ptrdiff_t>(q * un));
    const Sparse t = fromDense(twin, n);
    BlockDenseLu twinBlocks;
    twinBlocks.analyze(t.pattern, blockTriangularForm(t.pattern));
    QVERIFY(!twinBlocks.factorize(t.values.data(), normA));
    // A NaN below the blocks, which no block's factorisation reads: refused all the same.
    std::optional<std::size_t> below;
    for (std::size_t i = 0; i < un && !below; ++i)
      if (static_cast<int>(i) != form.order[0]) below = entry(i, single);
    QVERIFY(below.has_value());
    Sparse nan = s;
    nan.values[*below] = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(!blocks.factorize(nan.values.data(), normA));
    QVERIFY(blocks.factorize(s.values.data(), normA));  // and good values again
  }
};

QTEST_GUILESS_MAIN(TestBlockDenseLu)
#include "tst_block_dense_lu.moc"
