// SPDX-License-Identifier: MIT
// The Peano–Baker series (PBSR) and exponential-formula (Exp) propagators on their own terms:
// exact exponential steps for constant Jacobians, the structured exponential against the
// augmented expm, the refinement rule, reuse, shifted exponentials and the merged grid
// (NUMERICS.md §7). Fixtures: tests/support/sensitivity_fixtures.h.

#include "support/sensitivity_fixtures.h"

class TestSensitivityPropagators : public QObject {
  Q_OBJECT

 private slots:
  void exponentialStepIsExactForConstantJacobians() {
    // Random linear n = 10: one step over [0, 10] is exact (both augmented forms).
    const RandomLinear d = randomLinearData(10);
    const Eigen::MatrixXd b = (2 * d.p).asDiagonal();
    sensitivity::ExponentialWorkspace work;
    Eigen::MatrixXd s = Eigen::MatrixXd::Zero(10, 10);
    sensitivity::exponentialStep(d.a, b, 10.0, s, work);  // ns = n: the (2n)² form
    const Eigen::MatrixXd exact = randomLinearExactS(d, 10.0);
    // measured 8.7e-15
    SENSODE_EXPECT_CLOSE((s - exact).norm() / exact.norm(), 0, 1e-12, 0, "2n form", 0);
    Eigen::MatrixXd s3 = Eigen::MatrixXd::Zero(10, 3);
    sensitivity::exponentialStep(d.a, b.leftCols(3), 10.0, s3, work);  // ns < n: (n + ns)²
    SENSODE_EXPECT_CLOSE((s3 - exact.leftCols(3)).norm() / exact.leftCols(3).norm(), 0, 1e-12, 0,
                         "n+ns form", 0);
    // The §11 reference values.
    SENSODE_EXPECT_CLOSE(s(0, 0), 7.1588294936, 0, 1e-10, "S[0,0]", 0);
    SENSODE_EXPECT_CLOSE(s(0, 1), 1.1223868435e-2, 0, 1e-9, "S[0,1]", 0);
    SENSODE_EXPECT_CLOSE(s(0, 2), -1.8950361595, 0, 1e-10, "S[0,2]", 0);
    SENSODE_EXPECT_CLOSE(s(9, 9), 5.2350295626, 0, 1e-10, "S[9,9]", 0);
    SENSODE_EXPECT_CLOSE(s.norm(), 16.419367586, 0, 1e-10, "|S|_F", 0);

    // Singular A (conservation law): A = [[−k, k], [k, −k]], B = I; Φ₁ exact by eigenvectors.
    const double k = 3, dt = 1e4;
    Eigen::MatrixXd a(2, 2);
    a << -k, k, k, -k;
    Eigen::MatrixXd s2 = Eigen::MatrixXd::Zero(2, 2);
    sensitivity::exponentialStep(a, Eigen::MatrixXd::Identity(2, 2), dt, s2, work);
    const double phi0 = dt, phi1 = std::expm1(-2 * k * dt) / (-2 * k);
    Eigen::MatrixXd phi(2, 2);
    phi << (phi0 + phi1) / 2, (phi0 - phi1) / 2, (phi0 - phi1) / 2, (phi0 + phi1) / 2;
    // measured 5.7e-13
    SENSODE_EXPECT_CLOSE((s2 - phi).norm() / phi.norm(), 0, 1e-11, 0, "singular A", 0);

    // Stiff: Linear2's A over Δt = 1000 (‖ΔtA‖ = 1e6): the printed formula's e^{−ΔtA} would
    // overflow; the augmented form stays accurate (measured 2.9e-11).
    Eigen::MatrixXd stiff(2, 2);
    stiff << -1000, 1, 0, -1;
    Eigen::MatrixXd s4 = Eigen::MatrixXd::Zero(2, 2);
    sensitivity::exponentialStep(stiff, Eigen::MatrixXd::Identity(2, 2), 1000.0, s4, work);
    const double p11 = std::expm1(-1000.0 * 1000) / -1000, p22 = std::expm1(-1000.0) / -1;
    Eigen::MatrixXd px(2, 2);
    px << p11, (p11 - p22) / (-1000 + 1), 0, p22;
    SENSODE_EXPECT_CLOSE((s4 - px).norm() / px.norm(), 0, 1e-9, 0, "stiff A", 0);
  }

  void structuredExponentialMatchesTheAugmentedExpm() {
    // integratedExponential against Eigen's exp() of the 2n × 2n augmented matrix over norms that
    // select every Padé degree (3, 5, 7, 9, 13 with 0 … 25 squarings), including a singular A.
    // Both are the same algorithm; they differ by rounding that the squarings amplify, ~1e-16
    // per unit of ‖ΔtA‖₁ on the non-normal singular variant (measured against a long-double
    // exp(): Eigen 2.2e-12 / structured 1.3e-11 at ‖ΔtA‖₁ = 3e2, 8.9e-8 / 1.2e-7 at 3e7); the
    // tolerance is 1e-13·max(1, ‖ΔtA‖₁) (worst measured ratio to it: 0.4).
    const RandomLinear d = randomLinearData(10);
    sensitivity::ExponentialWorkspace work;
    Eigen::MatrixXd e, phi;
    long checked = 0;
    for (const double dt : {1e-4, 5e-3, 2e-2, 5e-2, 0.1, 1.0, 10.0, 1e3, 1e6}) {
      for (int variant = 0; variant < 2; ++variant) {
        Eigen::MatrixXd a = d.a;
        if (variant == 1) a.row(0) = -a.bottomRows(9).colwise().sum();  // columns sum to 0
        Eigen::MatrixXd m = Eigen::MatrixXd::Zero(20, 20);
        m.topLeftCorner(10, 10) = dt * a;
        m.topRightCorner(10, 10) = dt * Eigen::MatrixXd::Identity(10, 10);
        const Eigen::MatrixXd full = sensitivity::expm(m);
        sensitivity::integratedExponential(a, dt, e, phi, work);
        const double tol = 1e-13 * std::max(1.0, dt * a.cwiseAbs().colwise().sum().maxCoeff());
        const Eigen::MatrixXd fullE = full.topLeftCorner(10, 10);
        const Eigen::MatrixXd fullPhi = full.topRightCorner(10, 10);
        // E underflows to 0 for the stable A at Δt = 1e6: compare absolutely there.
        SENSODE_EXPECT_CLOSE((e - fullE).norm() / std::max(fullE.norm(), 1.0), 0, tol, 0,
                             "E vs exp()", checked);
        SENSODE_EXPECT_CLOSE((phi - fullPhi).norm() / fullPhi.norm(), 0, tol, 0, "Phi1 vs exp()",
                             checked);
        ++checked;
      }
    }
    QCOMPARE(checked, 18L);
  }

  void pbsrWithoutTheSwitchIsSetByTheRefinementRule() {
    // NUMERICS.md §7.5: PBSR refining always (switch removed) has ~5e-6 final error set by the
    // n_int rule (Δt_sub·‖A‖₁ ≈ 0.1), independent of the base grid. Measured here (CVODES grid,
    // rtol 1e-8): 5.5e-6 final, 2.4e-5 worst over the outputs.
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    const SensitivityResult r =
        run(randomLinearModel(d), SensitivityMethod::Pbsr, times, 1e-8, 1e-12,
            [](SensitivityProblem&, SensitivityOptions& o) {
              o.peanoBaker.constantTolerance = 0;
              o.peanoBaker.maxSubintervals = 1'000'000;
            });
    REQUIRE_SUCCESS(r);
    const double final =
        columnRelativeError(stateS(r, times.size() - 1), randomLinearExactS(d, 10.0));
    qInfo("PBSR without switch: final %.2e, %ld sub-intervals", final,
          r.stats.peanoBaker.subintervals);
    QVERIFY(r.stats.peanoBaker.exponentialSteps == 0);
    QVERIFY(r.stats.peanoBaker.subintervals > 2000);  // ≈ 10·T·‖A‖₁ = 2967 (+ rounding up)
    SENSODE_EXPECT_CLOSE(final, 0, 2e-5, 0, "final error", 0);
    QVERIFY2(final > 1e-7, "PBS should not be exact here");
  }

  // ---- Exp's cost cuts: exponential reuse and the merged grid (peano_baker.h) ----

  void exponentialReuseIsBitIdentical() {
    // Random linear n = 10 (constant A, B): E, Φ₁ depend on A and Δt only, so reusing them when
    // both repeat changes no bit of S. Merged (default): one step per output interval, all of
    // length 1 → one exponential computed for the 10 steps; unmerged: one step per CVODES step,
    // reused wherever CVODES kept its step size (measured: 74 computed for 325 steps).
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    for (const double merge : {1e-4, 0.0}) {
      auto withReuse = [merge](bool reuse) {
        return [merge, reuse](SensitivityProblem&, SensitivityOptions& o) {
          o.peanoBaker.mergeTolerance = merge;
          o.peanoBaker.reuseExponential = reuse;
          o.peanoBaker.shiftExponential = false;  // not bit-identical by design
        };
      };
      const SensitivityResult on =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12, withReuse(true));
      const SensitivityResult off =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12, withReuse(false));
      REQUIRE_SUCCESS(on);
      REQUIRE_SUCCESS(off);
      const auto& a = on.stats.peanoBaker;
      const auto& b = off.stats.peanoBaker;
      qInfo("merge %g: %ld intervals, %ld exponential steps, %ld computed with reuse, %ld without",
            merge, a.intervals, a.exponentialSteps, a.expmEvaluations, b.expmEvaluations);
      QVERIFY(on.stateSensitivities == off.stateSensitivities);  // bitwise
      QVERIFY(on.values == off.values);
      QCOMPARE(a.exponentialSteps, b.exponentialSteps);
      QCOMPARE(b.expmEvaluations, b.exponentialSteps);
      QVERIFY(a.expmEvaluations < a.exponentialSteps);
      if (merge > 0) {
        QCOMPARE(a.exponentialSteps, 10L);
        QCOMPARE(a.expmEvaluations, 1L);
      }
    }
  }

  void shiftedExponentialsStayExact_data() {
    QTest::addColumn<double>("stiffness");
    QTest::newRow("Δt‖A‖₁ ≈ 150") << 1.0;
    // ‖A‖₁ ≈ 1.2e4: a backward shift (e^{δA}, δ < 0) would overflow on the stiff modes.
    QTest::newRow("stiff, Δt‖A‖₁ ≈ 6e4") << 400.0;
  }

  void shiftedExponentialsStayExact() {
    // Constant A, merged steps between output times 0, 5.05, 10.15, 15.3, 20.3, … (lengths 5 +
    // 0.05·(k mod 4); squarings needed): where the length grows, E, Φ₁ are shifted from the
    // previous length (e^{δA} and two products) instead of recomputed; where it shrinks
    // (k mod 4 = 0) they are computed afresh, never shifted backwards. S stays exact (measured
    // 5.5e-14 shifted, 3.5e-14 recomputed on the non-stiff row).
    QFETCH(double, stiffness);
    RandomLinear d = randomLinearData(10);
    d.a *= stiffness;
    std::vector<double> times = {0.0};
    for (int k = 1; k <= 10; ++k) times.push_back(times.back() + 5.0 + 0.05 * (k % 4));
    double errors[2] = {0, 0};
    sensitivity::PeanoBakerStats stats[2];
    for (int shifted = 0; shifted < 2; ++shifted) {
      const SensitivityResult r =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12,
              [shifted](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.shiftExponential = shifted != 0;
              });
      REQUIRE_SUCCESS(r);
      for (std::size_t it = 1; it < times.size(); ++it) {
        keepWorst(errors[shifted],
                  columnRelativeError(stateS(r, it), randomLinearExactS(d, times[it])));
      }
      stats[shifted] = r.stats.peanoBaker;
    }
    qInfo("recomputed: %ld computed, error %.2e; shifted: %ld computed, %ld shifted, error %.2e",
          stats[0].expmEvaluations, errors[0], stats[1].expmEvaluations, stats[1].expmShifted,
          errors[1]);
    QCOMPARE(stats[0].exponentialSteps, 10L);
    QCOMPARE(stats[0].expmShifted, 0L);
    QCOMPARE(stats[1].expmEvaluations, 3L);  // the first length and the two shrinking ones
    QCOMPARE(stats[1].expmEvaluations + stats[1].expmShifted, stats[0].expmEvaluations);
    SENSODE_EXPECT_CLOSE(errors[1], 0, 1e-12, 0, "shifted", 0);
    SENSODE_EXPECT_CLOSE(errors[0], 0, 1e-12, 0, "recomputed", 0);
  }

  void mergedGridIsExactForConstantJacobians() {
    // NUMERICS.md §7.5: the exponential formula is exact for constant A, B at any step length, so
    // merging every interval between two output times keeps S exact (measured 1.5e-14 merged,
    // 1.0e-14 unmerged) with one exponential step per output interval instead of one per CVODES
    // step (10 instead of 325).
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    double errors[2] = {0, 0};
    long steps[2] = {0, 0};
    for (int merged = 0; merged < 2; ++merged) {
      const SensitivityResult r =
          run(randomLinearModel(d), SensitivityMethod::Exp, times, 1e-8, 1e-12,
              [merged](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.mergeTolerance = merged ? 1e-4 : 0.0;
              });
      REQUIRE_SUCCESS(r);
      for (std::size_t it = 1; it < times.size(); ++it) {
        keepWorst(errors[merged],
                  columnRelativeError(stateS(r, it), randomLinearExactS(d, times[it])));
      }
      steps[merged] = r.stats.peanoBaker.exponentialSteps;
      if (merged) {
        QCOMPARE(r.stats.peanoBaker.mergedIntervals,
                 r.stats.peanoBaker.intervals - r.stats.peanoBaker.exponentialSteps);
      } else {
        QCOMPARE(steps[0], r.stats.peanoBaker.intervals);
      }
    }
    qInfo("unmerged: %ld steps, error %.2e; merged: %ld steps, error %.2e", steps[0], errors[0],
          steps[1], errors[1]);
    QCOMPARE(steps[1], 10L);
    QVERIFY(steps[0] > 5 * steps[1]);
    SENSODE_EXPECT_CLOSE(errors[1], 0, 1e-12, 0, "merged", 0);
    SENSODE_EXPECT_CLOSE(errors[0], 0, 1e-12, 0, "unmerged", 0);
  }

  void mergedStepUsesItsOwnNorms() {
    // Regression: a merged step begun after a failed merge inherited the failed step's largest
    // ‖B_j‖, a looser bound than peano_baker.h derives. x' = −k x + q y with y fed by the
    // "trajectory" (y' = 0 in the model): A is constant, B = ∂f/∂q = (y, 0) follows y = 1000 on
    // [0, 2), 1 on [2, 3), 1.1 after. [1, 2] joins [0, 1] (B unchanged); [2, 3] cannot join them
    // (spread 999). [3, 4] has spread 0.1 against the new step's first B: ½h²‖A‖₁·0.1 = 0.2 >
    // 1e-4·(‖S(2)‖₁ + h·1.1) = 0.087 with its own norms (‖S(2)‖₁ = 1000(1 − e⁻²)), so it must
    // not join; with the inherited 1000 the bound was 1e-4·(865 + 2000) = 0.29 and it did.
    SystemBuilder b;
    auto& e = b.e();
    const Expr k = b.param("k", 1.0), q = b.param("q", 1.0);
    const Expr x = b.state("x", 0.0), y = b.state("y", 1000.0);
    b.rhs(x, add(e, {e.mul(e.neg(k), x), e.mul(q, y)}));
    b.rhs(y, b.c(0.0));
    const Model model = b.compile();
    QCOMPARE(model->nx(), 2);
    QCOMPARE(model->system().params[1].id, std::string("q"));
    sensitivity::PeanoBakerOptions options;
    options.method = sensitivity::PeanoBakerMethod::Exp;
    options.mergeTolerance = 1e-4;
    sensitivity::PeanoBakerPropagator propagator(model, {1.0, 1.0}, {1}, options);
    const sensitivity::StateSource states = [](double t, std::vector<double>& xs) {
      xs = {0.0, t < 2 ? 1000.0 : t < 3 ? 1.0 : 1.1};
    };
    propagator.start(0, {0.0, 1000.0}, {0.0, 0.0});
    for (const double t1 : {1.0, 2.0, 3.0, 4.0}) propagator.advance(t1, states);
    std::vector<double> s;
    propagator.sensitivities(s);
    QCOMPARE(propagator.stats().mergedIntervals, 1L);
    QCOMPARE(propagator.stats().exponentialSteps, 3L);
    // S_x(4) for this B, exactly: 1000(1 − e⁻²)e⁻² + (1 − e⁻¹)e⁻¹ + 1.1(1 − e⁻¹) to the
    // exponential formula's accuracy (B constant within each step: exact).
    const double exact = 1000 * (1 - std::exp(-2.0)) * std::exp(-2.0) +
                         (1 - std::exp(-1.0)) * std::exp(-1.0) + 1.1 * (1 - std::exp(-1.0));
    SENSODE_EXPECT_CLOSE(s[0], exact, 1e-12, 1e-12, "S_x(4)", 0);
  }

  void mergedGridOnNonlinearModels_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<double>("merge");          // PeanoBakerOptions::mergeTolerance
    QTest::addColumn<double>("tolerance");      // worst column-relative error of S, merged
    QTest::addColumn<double>("growth");         // merged error ≤ growth × unmerged error
    QTest::addColumn<double>("stepFraction");   // exponential steps ≤ this × intervals
    // Exp at rtol 1e-6 (atol 1e-12) against CVODES forward at rtol 1e-10 / atol 1e-14, 21 outputs
    // on [0, 10]; the unmerged run: MM 4.01e-3 in 205 steps, Chua 1.05e-3 in 321. Measured
    // merged (worst error, exponential steps):
    //   default 1e-4: MM 4.01e-3 in 199, Chua 1.05e-3 in 315 (the bound η keeps the error and
    //                 merges little: these Jacobians change on every step)
    //   1e-2:         MM 4.01e-3 in 128, Chua 8.27e-3 in 182 (looser: Chua's error grows 8×)
    QTest::newRow("mm") << QString("mm") << 1e-4 << 5e-3 << 1.01 << 0.98;
    QTest::newRow("chua") << QString("chua") << 1e-4 << 2e-3 << 1.01 << 0.99;
    QTest::newRow("mm 1e-2") << QString("mm") << 1e-2 << 5e-3 << 1.01 << 0.65;
    QTest::newRow("chua 1e-2") << QString("chua") << 1e-2 << 1.2e-2 << 10.0 << 0.6;
  }
  void mergedGridOnNonlinearModels() {
    QFETCH(QString, problem);
    QFETCH(double, merge);
    QFETCH(double, tolerance);
    QFETCH(double, growth);
    QFETCH(double, stepFraction);
    const Model model = problem == "mm" ? michaelisMentenModel() : chuaModel();
    const auto times = linspace(0, 10, 21);
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-14);
    REQUIRE_SUCCESS(ref);
    double errors[2] = {0, 0};
    sensitivity::PeanoBakerStats stats[2];
    for (int merged = 0; merged < 2; ++merged) {
      const SensitivityResult r =
          run(model, SensitivityMethod::Exp, times, 1e-6, 1e-12,
              [merged, merge](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.mergeTolerance = merged ? merge : 0.0;
              });
      REQUIRE_SUCCESS(r);
      for (std::size_t it = 1; it < times.size(); ++it) {
        keepWorst(errors[merged], columnRelativeError(stateS(r, it), stateS(ref, it)));
      }
      stats[merged] = r.stats.peanoBaker;
    }
    qInfo("%s, merge %g: unmerged %.2e in %ld exponential steps, merged %.2e in %ld (%ld "
          "intervals)",
          qPrintable(problem), merge, errors[0], stats[0].exponentialSteps, errors[1],
          stats[1].exponentialSteps, stats[1].intervals);
    QCOMPARE(stats[0].exponentialSteps, stats[0].intervals);
    QCOMPARE(stats[1].intervals, stats[0].intervals);  // same trajectory
    QVERIFY(static_cast<double>(stats[1].exponentialSteps) <=
            stepFraction * static_cast<double>(stats[1].intervals));
    SENSODE_EXPECT_CLOSE(errors[1], 0, tolerance, 0, "merged", 0);
    SENSODE_EXPECT_CLOSE(errors[1], 0, growth * errors[0], 0, "merged vs unmerged", 0);
  }

};

QTEST_GUILESS_MAIN(TestSensitivityPropagators)
#include "tst_sensitivity_propagators.moc"
