// SPDX-License-Identifier: MIT
// odeSD's linear solvers for the Newton matrix W: dense LU, KLU and Eigen SparseLU give the same
// answers, also for patterns without a full diagonal and for large systems (split out of
// tst_odesd_integrator.cpp).
#include <random>

#include "core/integrators/sparse_lu.h"
#include "support/backward_error.h"
#include "support/odesd_fixtures.h"

namespace {

using sensode::integrators::detail::SparseLu;
using sensode::test::backwardError;

// A dense n × n matrix (column-major) as SparseLu's full pattern.
void loadDense(SparseLu& lu, const std::vector<double>& a, int n) {
  sensode::symbolic::SparsePattern full;
  full.rows = full.cols = n;
  for (int j = 0; j <= n; ++j) full.colPtr.push_back(j * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) full.rowIdx.push_back(i);
  lu.analyze(full, SparseLu::Backend::Dense);
  std::copy(a.begin(), a.end(), lu.values());
  QVERIFY(lu.factorize());
}

}  // namespace

class TestOdeSdLinearSolvers : public QObject {
  Q_OBJECT

 private slots:
  // ---- linear solvers ----

  void denseKluAndEigenSparseAgree() {
    for (auto make : {&robertsonModel, &michaelisMentenModel, &repressilatorModel}) {
      const auto model = make();
      const std::vector<double> times{0.1, 1, 10, 40};
      const Run dense = runOdeSd(model, tolerances(1e-8, 1e-12, LinearSolverKind::Dense), times);
      const Run klu = runOdeSd(model, tolerances(1e-8, 1e-12, LinearSolverKind::Sparse), times);
      OdeSdOptions eigen;
      eigen.sparseBackend = OdeSdOptions::SparseBackend::EigenSparseLu;
      const Run slu = runOdeSd(model, tolerances(1e-8, 1e-12, LinearSolverKind::Sparse), times, eigen);
      // Runs that differ only in rounding may end Newton at different iterates: each within
      // κ_N·(rtol|x| + atol) per step, so the comparison's absolute floor is the runs' atol
      // (with κ_N = 0.33 Robertson's y2 ≈ 5.8e-8 differed by 2e-14 between KLU and dense).
      for (std::size_t i = 0; i < times.size(); ++i) {
        for (std::size_t j = 0; j < dense.x[i].size(); ++j) {
          SENSODE_EXPECT_CLOSE(klu.x[i][j], dense.x[i][j], 1e-12, 1e-7, "KLU vs dense",
                               static_cast<long>(i * 10 + j));
          SENSODE_EXPECT_CLOSE(slu.x[i][j], dense.x[i][j], 1e-12, 1e-7, "SparseLU vs dense",
                               static_cast<long>(i * 10 + j));
        }
      }
      QVERIFY(std::abs(klu.stats.steps - dense.stats.steps) <= dense.stats.steps / 10);
      QVERIFY(std::abs(slu.stats.steps - dense.stats.steps) <= dense.stats.steps / 10);
    }
  }

  // Dense LU with at least 2n right-hand sides multiplies by A⁻¹ (SparseLu::solve) when κ₁(A) ≤
  // kInverseConditionLimit: the same solutions as one column at a time. Above the limit it
  // must substitute: with B = A·X for X of order 1, A⁻¹·B has a backward error near κ·ε (1e-8
  // and more here), substitution one near ε. Two ill-conditioned matrices: one with a tiny
  // pivot (two nearly equal rows, κ ≈ 1e10), which the pivot ratio rejects before A⁻¹ is
  // formed (a shortcut: the κ₁ test would too), and one with unit pivots (upper bidiagonal,
  // superdiagonal −100 in its first six columns: κ ≈ 1e12), which only the κ₁ test rejects
  // (without it: 3.5e-8).
  // Sizes: up to 16 rows the product by A⁻¹ runs one kernel per row count (each is checked),
  // above 16 rows Eigen's product on run-time sizes.
  void manyRightHandSidesWithAndWithoutTheInverse_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("nrhs");
    QTest::newRow("6 x 13") << 6 << 13;  // nrhs ≥ 2n: the inverse pays from the first solve
    QTest::newRow("16 x 150") << 16 << 150;
    QTest::newRow("20 x 45") << 20 << 45;
    for (int n = 3; n < 16; ++n) {
      if (n != 6) QTest::addRow("%d x %d", n, 2 * n + 3) << n << 2 * n + 3;
    }
  }
  void manyRightHandSidesWithAndWithoutTheInverse() {
    QFETCH(int, n);
    QFETCH(int, nrhs);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> wellConditioned(static_cast<std::size_t>(n * n));
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        wellConditioned[static_cast<std::size_t>(j * n + i)] = u(rng) + (i == j ? 4.0 : 0.0);
    std::vector<double> tinyPivot = wellConditioned;
    for (int j = 0; j < n; ++j)
      tinyPivot[static_cast<std::size_t>(j * n + 1)] =
          tinyPivot[static_cast<std::size_t>(j * n)] * (1 + (j == 2 ? 1e-10 : 0.0));
    std::vector<double> unitPivots(static_cast<std::size_t>(n * n), 0.0);
    for (int j = 0; j < n; ++j) {
      unitPivots[static_cast<std::size_t>(j * n + j)] = 1;
      if (j > 0 && j < 6) unitPivots[static_cast<std::size_t>(j * n + j - 1)] = -100;
    }
    std::vector<double> x(static_cast<std::size_t>(n * nrhs));
    for (double& v : x) v = u(rng);
    for (const auto* a : {&wellConditioned, &tinyPivot, &unitPivots}) {
      std::vector<double> b(x.size(), 0.0);
      for (int c = 0; c < nrhs; ++c)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            b[static_cast<std::size_t>(c * n + i)] +=
                (*a)[static_cast<std::size_t>(j * n + i)] * x[static_cast<std::size_t>(c * n + j)];
      SparseLu lu;
      loadDense(lu, *a, n);
      std::vector<double> many = b;
      lu.solve(many.data(), nrhs);
      std::vector<double> oneByOne = b;
      for (int c = 0; c < nrhs; ++c) lu.solve(oneByOne.data() + c * n, 1);
      const double manyError = backwardError(*a, many, b, n, nrhs);
      QVERIFY2(manyError < 1e-14, qPrintable(QString::number(manyError)));
      QVERIFY(backwardError(*a, oneByOne, b, n, nrhs) < 1e-14);
      if (a == &wellConditioned) {
        for (std::size_t k = 0; k < many.size(); ++k)
          SENSODE_EXPECT_CLOSE(many[k], oneByOne[k], 1e-14, 1e-12, "A⁻¹B vs substitution",
                               static_cast<long>(k));
      }
    }
  }

  // KLU refactorises unscaled in the pivot order its first (row-scaled) factorisation chose
  // (SparseLu::factorize): after a refactorisation the solves must not apply that first
  // factorisation's scale factors. Rows scaled by 1e-6 … 1e6, three sets of values on one
  // pattern (the first factorised, the others refactorised): each solve's backward error near ε
  // and the solution the dense LU's.
  void kluRefactorisationsOfBadlyScaledRows() {
    constexpr int n = 30;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    sensode::symbolic::SparsePattern pattern;  // diagonal and two off-diagonals a column
    pattern.rows = pattern.cols = n;
    pattern.colPtr.push_back(0);
    for (int j = 0; j < n; ++j) {
      std::vector<int> rows{j, (j + 3) % n, (j + 11) % n};
      std::sort(rows.begin(), rows.end());
      pattern.rowIdx.insert(pattern.rowIdx.end(), rows.begin(), rows.end());
      pattern.colPtr.push_back(static_cast<int>(pattern.rowIdx.size()));
    }
    SparseLu klu;
    klu.analyze(pattern, SparseLu::Backend::Klu);
    for (int set = 0; set < 3; ++set) {
      std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);  // column-major, dense copy
      for (int j = 0; j < n; ++j)
        for (int k = pattern.colPtr[static_cast<std::size_t>(j)];
             k < pattern.colPtr[static_cast<std::size_t>(j) + 1]; ++k) {
          const int i = pattern.rowIdx[static_cast<std::size_t>(k)];
          const double scale = std::pow(10.0, (i % 13) - 6);
          const double v = scale * ((i == j ? 4.0 : 0.0) + u(rng));
          a[static_cast<std::size_t>(j * n + i)] = v;
          klu.values()[k] = v;
        }
      QVERIFY(klu.factorize());
      std::vector<double> b(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i)
        b[static_cast<std::size_t>(i)] = std::pow(10.0, (i % 13) - 6) * u(rng);
      std::vector<double> x = b;
      klu.solve(x.data());
      const double error = backwardError(a, x, b, n, 1);
      QVERIFY2(error < 1e-14, qPrintable(QString("set %1: backward error %2").arg(set).arg(error)));
      SparseLu dense;
      loadDense(dense, a, n);
      std::vector<double> y = b;
      dense.solve(y.data());
      for (int i = 0; i < n; ++i)
        SENSODE_EXPECT_CLOSE(x[static_cast<std::size_t>(i)], y[static_cast<std::size_t>(i)], 0,
                             1e-10, "KLU vs dense", set * 100 + i);
    }
    QCOMPARE(klu.fullFactorizations(), 1L);
    QCOMPARE(klu.refactorizations(), 2L);
  }

  // The dense kernels (dense_lu.h: blocks of four columns, a tail of 1–3) against the backward
  // error partial pivoting guarantees in practice, on random matrices that need row
  // interchanges, for sizes on both sides of every block boundary; also on sparse ones (a
  // tenth of the entries and the diagonal), where the kernel skips the columns whose rows of U
  // in a panel are zero. Then what must fail does: a singular matrix (two equal columns), a NaN
  // and an infinity among the values.
  void denseKernelsOfEverySizeAndTheirFailures() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1), coin(0, 1);
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 33, 36, 64, 101}) {
      std::vector<double> a(static_cast<std::size_t>(n * n)), b(static_cast<std::size_t>(n));
      for (double& v : a) v = u(rng);
      for (double& v : b) v = u(rng);
      std::vector<double> sparse(a.size(), 0.0);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          if (i == j || coin(rng) < 0.1)
            sparse[static_cast<std::size_t>(j * n + i)] = a[static_cast<std::size_t>(j * n + i)];
      for (const auto* m : {&a, &sparse}) {
        SparseLu lu;
        loadDense(lu, *m, n);
        std::vector<double> x = b;
        lu.solve(x.data());
        const double error = backwardError(*m, x, b, n, 1);
        QVERIFY2(error < 1e-14, qPrintable(QString("n = %1%2: backward error %3")
                                               .arg(n)
                                               .arg(m == &sparse ? " (sparse)" : "")
                                               .arg(error)));
      }
      if (n < 2) continue;
      std::vector<double> singular = a;
      std::copy_n(a.begin(), n, singular.begin() + n);  // column 1 = column 0
      SparseLu s;
      loadDense(s, a, n);
      std::copy(singular.begin(), singular.end(), s.values());
      QVERIFY2(!s.factorize(), qPrintable(QString("n = %1: singular accepted").arg(n)));
      for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity()}) {
        std::vector<double> c = a;
        c[static_cast<std::size_t>(n * n - 1)] = bad;  // the last column, below every pivot
        std::copy(c.begin(), c.end(), s.values());
        QVERIFY2(!s.factorize(), qPrintable(QString("n = %1: %2 accepted").arg(n).arg(bad)));
      }
    }
  }

  // Auto's choice between dense and KLU beyond 16 states (SparseLu::denseIsFaster): a banded
  // pattern stays sparse, a pattern whose LU fills in goes dense, as does one of full diagonal
  // blocks (against the blocks' flops, not the whole matrix's), and no pattern beyond
  // kDenseLimitStates does.
  void denseChosenWhereKluWouldSaveLittle() {
    const auto pattern = [](int n, auto inPattern) {
      sensode::symbolic::SparsePattern p;
      p.rows = p.cols = n;
      p.colPtr.push_back(0);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i)
          if (i == j || inPattern(i, j)) p.rowIdx.push_back(i);
        p.colPtr.push_back(static_cast<int>(p.rowIdx.size()));
      }
      return p;
    };
    const auto band = [](int i, int j) { return std::abs(i - j) <= 2; };
    QVERIFY(!SparseLu::denseIsFaster(pattern(40, band)));
    // An arrow pattern ordered badly: KLU's ordering finds the fill-free order.
    QVERIFY(!SparseLu::denseIsFaster(pattern(60, [](int i, int j) { return i == 0 || j == 0; })));
    // Random 35 % of 36 × 36, as Alkan's Newton matrix: its LU fills in.
    std::mt19937 rng(3);
    std::vector<char> on(36 * 36);
    for (char& c : on) c = std::uniform_real_distribution<double>(0, 1)(rng) < 0.35;
    const auto random = [&](int i, int j) { return on[static_cast<std::size_t>(i * 36 + j)] != 0; };
    QVERIFY(SparseLu::denseIsFaster(pattern(36, random)));
    // Four full 10 × 10 diagonal blocks, coupled below: KLU's flops are about the blocks' own,
    // far below the whole matrix's 2n³/3, but the dense backend factorises the blocks alone
    // (BlockDenseLu), so there is nothing for KLU to save.
    const auto blocks = [](int i, int j) { return i / 10 == j / 10 || (i / 10 > j / 10 && i % 7 == j % 5); };
    QVERIFY(SparseLu::denseIsFaster(pattern(40, blocks)));
    const auto all = [](int, int) { return true; };
    QVERIFY(SparseLu::denseIsFaster(pattern(SparseLu::kDenseLimitStates, all)));
    QVERIFY(!SparseLu::denseIsFaster(pattern(SparseLu::kDenseLimitStates + 1, all)));
  }

  void sparseWithoutDiagonalAndLargeSystems() {
    // Integration chain x0' = 0, x_i' = x_{i-1}: x_i(t) = t^i / i!. 24 states (Auto picks the
    // sparse LU), no diagonal in J, an empty column.
    constexpr int n = 24;
    SystemBuilder b;
    std::vector<Expr> xs;
    for (int i = 0; i < n; ++i) xs.push_back(b.state("x" + std::to_string(i), i == 0 ? 1.0 : 0.0));
    for (int i = 1; i < n; ++i) b.rhs(xs[static_cast<std::size_t>(i)], xs[static_cast<std::size_t>(i) - 1]);
    const auto model = b.compile();
    OdeSdIntegrator integrator;
    std::vector<double> x(n, 0.0);
    x[0] = 1;
    integrator.initialize(model, tolerances(1e-10, 1e-14), 0.0, x, {});
    QVERIFY(integrator.usesSparseSolver());
    integrator.advanceTo(2.0, x, {});
    double term = 1;  // 2^i / i!
    for (int i = 0; i < n; ++i) {
      if (i > 0) term *= 2.0 / i;
      SENSODE_EXPECT_CLOSE(x[static_cast<std::size_t>(i)], term, 1e-12, 1e-7, "x_i", i);
    }
    OdeSdIntegrator small;
    std::vector<double> y{2.0};
    small.initialize(decayModel(), tolerances(1e-8), 0.0, y, {0.7});
    QVERIFY(!small.usesSparseSolver());
    small.advanceTo(3.0, y, {});
    SENSODE_EXPECT_CLOSE(y[0], 2 * std::exp(-2.1), 0, 1e-6, "decay", 0);
  }
};

QTEST_GUILESS_MAIN(TestOdeSdLinearSolvers)
#include "tst_odesd_linear_solvers.moc"
