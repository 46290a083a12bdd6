// SPDX-License-Identifier: MIT
// odeSD's linear solvers for the Newton matrix W: dense LU, KLU and Eigen SparseLU give the same
// answers, also for patterns without a full diagonal and for large systems (split out of
// tst_odesd_integrator.cpp).
#include "support/odesd_fixtures.h"

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
