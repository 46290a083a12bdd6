// SPDX-License-Identifier: MIT
// The Parameter sensitivities task's options that change how a method computes S, each against
// the default or an independent method: S outside the error test, CVODES's three correctors and
// the augmented system against CVODES's own sensitivity module, the step callback with dense
// output, the exponential midpoint against the left-point rule, and odeSD as PBSR/Exp's
// trajectory. The methods' accuracy against closed forms and references is tst_sensitivities.
// Tolerances state the measured errors they were set from.

#include "support/sensitivity_fixtures.h"

class TestSensitivityMethodOptions : public QObject {
  Q_OBJECT

 private slots:
  // ---- options that change the method ----

  void errorControlOffStillConverges() {
    // CVODES without S in the error test: fewer steps, S still close (MM, rtol 1e-8). Measured
    // 1.5e-8 with (528 steps), 7.1e-8 without (420 steps).
    const Eigen::MatrixXd ref = michaelisMentenReferenceAt10();
    const SensitivityResult on = run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 10.0},
                                     1e-8, 1e-12);
    const SensitivityResult off =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 10.0}, 1e-8, 1e-12,
            [](SensitivityProblem&, SensitivityOptions& o) { o.errorControl = false; });
    QVERIFY(on.termination == tasks::Termination::Success);
    QVERIFY(off.termination == tasks::Termination::Success);
    const double eOn = columnRelativeError(stateS(on, 1), ref);
    const double eOff = columnRelativeError(stateS(off, 1), ref);
    qInfo("MM cvodes error control on %.2e (%ld steps), off %.2e (%ld steps)", eOn,
          on.stats.integrator.steps, eOff, off.stats.integrator.steps);
    QVERIFY(off.stats.integrator.steps <= on.stats.integrator.steps);
    SENSODE_EXPECT_CLOSE(eOff, 0, 1e-4, 0, "errcon off", 0);
    QVERIFY(on.stats.integrator.sensitivityRhsEvals > 0);
  }

  void cvodesCorrectorsAgree_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("tEnd");
    QTest::addColumn<double>("tolerance");
    // Every parameter, rtol 1e-6, against CVODES (staggered) at rtol 1e-10. Measured worst
    // series errors: Boehm staggered 3.1e-7 (500 steps), simultaneous 6.2e-7 (699 steps),
    // between them 7.0e-7; Fujita 2.4e-7, 2.9e-7 (488 steps each), 5.4e-8. Augmented: the
    // simultaneous numbers exactly (Boehm 6.2e-7 in 699 steps, Fujita 2.9e-7 in 488 steps): the
    // same Newton iteration, error test and norms, on one vector.
    QTest::newRow("Boehm") << QString("Boehm_JProteomeRes2014") << 240.0 << 1e-5;
    QTest::newRow("Fujita") << QString("Fujita_SciSignal2010") << 3600.0 << 1e-5;
  }
  void cvodesCorrectorsAgree() {
    // The correctors solve the same corrector equations differently (one Newton iteration on
    // states and S together vs states first, then S; augmented: the simultaneous iteration on
    // [x; S] as one vector, without the sensitivity module); all must reach the reference.
    QFETCH(QString, name);
    QFETCH(double, tEnd);
    QFETCH(double, tolerance);
    const Model model = sbmlModel(kShared / "petab" / name.toStdString() /
                                  ("model_" + name.toStdString() + ".xml"));
    const auto times = linspace(0, tEnd, 21);
    using integrators::SensitivityCorrector;
    auto with = [](SensitivityCorrector c) {
      return [c](SensitivityProblem&, SensitivityOptions& o) {
        o.integrator.sensitivityCorrector = c;
      };
    };
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16);
    const SensitivityResult stag = run(model, SensitivityMethod::Cvodes, times, 1e-6, 1e-12,
                                       with(SensitivityCorrector::Staggered));
    const SensitivityResult sim = run(model, SensitivityMethod::Cvodes, times, 1e-6, 1e-12,
                                      with(SensitivityCorrector::Simultaneous));
    const SensitivityResult aug = run(model, SensitivityMethod::Cvodes, times, 1e-6, 1e-12,
                                      with(SensitivityCorrector::Augmented));
    REQUIRE_SUCCESS(ref);
    REQUIRE_SUCCESS(stag);
    REQUIRE_SUCCESS(sim);
    REQUIRE_SUCCESS(aug);
    // Augmented: no sensitivity module (one right-hand side for x and S, one error test).
    QCOMPARE(aug.stats.integrator.sensitivityRhsEvals, aug.stats.integrator.rhsEvals);
    QCOMPARE(aug.stats.integrator.sensitivityErrorTestFailures, 0L);
    // The option reaches CVODES: another algorithm, other rounding and step sequence.
    QVERIFY(sim.stateSensitivities != stag.stateSensitivities);
    const SeriesError eStag = seriesError(stag, ref, model), eSim = seriesError(sim, ref, model);
    const SeriesError eBoth = seriesError(sim, stag, model);
    const SeriesError eAug = seriesError(aug, ref, model), eAugStag = seriesError(aug, stag, model);
    const SeriesError eAugSim = seriesError(aug, sim, model);
    qInfo("%s: staggered %.2e (%ld steps), simultaneous %.2e (%ld steps), between %.2e; "
          "augmented %.2e (%ld steps, at %s), vs staggered %.2e, vs simultaneous %.2e",
          qPrintable(name), eStag.error, stag.stats.integrator.steps, eSim.error,
          sim.stats.integrator.steps, eBoth.error, eAug.error, aug.stats.integrator.steps,
          eAug.where.c_str(), eAugStag.error, eAugSim.error);
    SENSODE_EXPECT_CLOSE(eStag.error, 0, tolerance, 0, eStag.where, 0);
    SENSODE_EXPECT_CLOSE(eSim.error, 0, tolerance, 0, eSim.where, 0);
    SENSODE_EXPECT_CLOSE(eBoth.error, 0, 2 * tolerance, 0, eBoth.where, 0);
    SENSODE_EXPECT_CLOSE(eAug.error, 0, tolerance, 0, eAug.where, 0);
    SENSODE_EXPECT_CLOSE(eAugStag.error, 0, 2 * tolerance, 0, eAugStag.where, 0);
    // The augmented mode is CV_SIMULTANEOUS on one vector (same Newton matrix, tolerances and
    // max-over-blocks norm), so it agrees with it to rounding: measured 1.5e-11 (Boehm), 2.6e-14
    // (Fujita); an RMS over the whole vector instead of CVODES's norm gives ~1e-6 here.
    SENSODE_EXPECT_CLOSE(eAugSim.error, 0, 1e-9, 0, eAugSim.where, 0);
  }

  void cvodesAugmentedAgreesWithTheModule_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<double>("tolerance");  // augmented vs module, worst over the outputs
    QTest::addColumn<double>("exactTolerance");  // vs the closed form (0: none)
    // rtol 1e-8 (atol 1e-14 for Linear2 and Robertson, else 1e-12); S at every output time.
    // Measured worst column-relative differences augmented vs staggered module / vs the closed
    // form: Linear2 2.1e-8 / 1.4e-7, MM 3.6e-8, Robertson 2.2e-8, pulse 5.8e-8 / 4.7e-8,
    // A ⇄ B 1.7e-8 / 3.2e-8.
    QTest::newRow("linear2") << QString("linear2") << 1e-5 << 5e-6;
    QTest::newRow("mm") << QString("mm") << 1e-5 << 0.0;
    QTest::newRow("robertson") << QString("robertson") << 1e-5 << 0.0;
    // f jumps at t0 (piecewise input at the single point t = 0): the discontinuity case.
    QTest::newRow("pulse") << QString("pulse") << 1e-5 << 1e-6;
    // S0 ≠ 0 (A0 is the initial amount of A).
    QTest::newRow("conversion") << QString("conversion") << 1e-5 << 1e-6;
  }
  void cvodesAugmentedAgreesWithTheModule() {
    QFETCH(QString, problem);
    QFETCH(double, tolerance);
    QFETCH(double, exactTolerance);
    Model model;
    std::vector<double> times;
    double atol = 1e-12;
    std::function<Eigen::MatrixXd(double)> exact;
    std::vector<std::string> params;  // empty: all
    if (problem == "linear2") {
      model = linear2Model();
      times = linspace(0, 10, 11);
      atol = 1e-14;
      // y1 = e^{−bt}, y0 = (1 − r)e^{−at} + r·e^{−bt} with a = p0, b = p1, r = b/(a − b).
      exact = [](double t) {
        const double a = 1000, b = 1, r = b / (a - b);
        const double ra = -b / ((a - b) * (a - b)), rb = a / ((a - b) * (a - b));
        const double ea = std::exp(-a * t), eb = std::exp(-b * t);
        Eigen::MatrixXd e(2, 2);
        e << -ra * ea - (1 - r) * t * ea + ra * eb, -rb * ea + rb * eb - r * t * eb,  //
            0.0, -t * eb;
        return e;
      };
    } else if (problem == "mm") {
      model = michaelisMentenModel();
      times = linspace(0, 10, 11);
    } else if (problem == "robertson") {
      model = robertsonModel();
      times = {0, 0.4, 4, 40};
      atol = 1e-14;
    } else if (problem == "pulse") {
      model = pulseAtStartModel();
      times = linspace(0, 4, 5);
      params = {"k", "u", "x0"};
      exact = [](double t) {
        Eigen::MatrixXd e(1, 3);
        const double decay = std::exp(-0.5 * t);
        e << -t * 2 * decay, 0.0, decay;
        return e;
      };
    } else {
      model = conversionModel();
      times = linspace(0, 5, 11);
      exact = conversionExactS;
    }
    using integrators::SensitivityCorrector;
    auto with = [&params](SensitivityCorrector c) {
      return [c, &params](SensitivityProblem& p, SensitivityOptions& o) {
        o.integrator.sensitivityCorrector = c;
        if (!params.empty()) p.parameters = params;
      };
    };
    const SensitivityResult mod = run(model, SensitivityMethod::Cvodes, times, 1e-8, atol,
                                      with(SensitivityCorrector::Staggered));
    const SensitivityResult aug = run(model, SensitivityMethod::Cvodes, times, 1e-8, atol,
                                      with(SensitivityCorrector::Augmented));
    REQUIRE_SUCCESS(mod);
    REQUIRE_SUCCESS(aug);
    QCOMPARE(aug.stats.integrator.sensitivityRhsEvals, aug.stats.integrator.rhsEvals);
    QVERIFY(aug.stats.integrator.rhsEvals > 0);
    double worst = 0, worstExact = 0;
    for (std::size_t it = 1; it < times.size(); ++it) {
      const Eigen::MatrixXd a = stateS(aug, it);
      keepWorst(worst, columnRelativeError(a, stateS(mod, it)));
      if (exact) keepWorst(worstExact, columnRelativeError(a, exact(times[it])));
    }
    // S0 is the initial-value sensitivity in both modes (conversion: ∂A(0)/∂A0 = 1).
    const Eigen::MatrixXd s0Aug = stateS(aug, 0), s0Mod = stateS(mod, 0);
    QVERIFY(s0Aug == s0Mod);
    qInfo("%s: augmented vs module %.2e, vs exact %.2e; steps augmented %ld, module %ld",
          qPrintable(problem), worst, worstExact, aug.stats.integrator.steps,
          mod.stats.integrator.steps);
    SENSODE_EXPECT_CLOSE(worst, 0, tolerance, 0, "augmented vs module", 0);
    if (exactTolerance > 0) {
      SENSODE_EXPECT_CLOSE(worstExact, 0, exactTolerance, 0, "augmented vs closed form", 0);
    }
  }

  void stepCallbackTilesTheRunWithDenseOutput_data() {
    QTest::addColumn<integrators::Method>("method");
    QTest::newRow("odesd") << integrators::Method::OdeSd;
    QTest::newRow("cvodes") << integrators::Method::Cvodes;
  }
  void stepCallbackTilesTheRunWithDenseOutput() {
    // The step callback (what PBSR/Exp take their grid and states from) sees every accepted
    // step once, contiguous from t0 to the last step, and its dense output inside a step is
    // what advanceTo() returns for those times: a second run of the same integrator (same
    // first step, so the same steps) advanced to the quarter points of every step must give
    // the same values to rounding. Both are the solution of the pulse model (x = 2e^{−t/2} on
    // (0, T]) to the global error of rtol 1e-8 (measured max relative error: odesd 2.3e-7,
    // cvodes 1.0e-7 over t ≤ 7; vs advanceTo: 0).
    QFETCH(integrators::Method, method);
    const Model model = pulseAtStartModel();
    integrators::IntegratorOptions o;
    o.rtol = 1e-8;
    o.initialStepSize = 1e-3;
    const std::vector<double> p = model->nominalParameters();
    std::vector<double> x0(1);
    model->initialState(0, p.data(), x0.data());
    auto integrator = integrators::makeIntegrator(method);
    integrator->initialize(model, o, 0, x0, p);
    double tLast = 0, worst = 0;
    long steps = 0;
    bool contiguous = true;
    std::vector<std::pair<double, double>> seen;  // (t, dense x(t))
    integrator->setStepCallback(
        [&](double ta, double tb, integrators::StepDenseOutput& dense) {
          contiguous = contiguous && ta == tLast && tb > ta;
          tLast = tb;
          ++steps;
          for (const double th : {0.25, 0.5, 0.75, 1.0}) {
            const double t = ta + th * (tb - ta);
            double x = 0;
            dense.state(t, &x);
            seen.emplace_back(t, x);
            worst = std::max(worst, std::abs(x / (2 * std::exp(-0.5 * t)) - 1));
          }
        });
    std::vector<double> x;
    integrator->advanceTo(3, x, {});
    integrator->advanceTo(7, x, {});
    QVERIFY(contiguous);
    QCOMPARE(steps, integrator->stats().steps);
    QVERIFY(tLast >= 7);

    auto replay = integrators::makeIntegrator(method);
    replay->initialize(model, o, 0, x0, p);
    double worstReplay = 0;
    for (const auto& [t, xt] : seen) {
      if (t > 7) break;  // the replay must not step past its last tout differently
      replay->advanceTo(t, x, {});
      worstReplay = std::max(worstReplay, std::abs(x[0] - xt) / std::abs(xt));
    }
    qInfo("%s: %ld steps, dense output vs closed form %.2e, vs advanceTo %.2e",
          integrators::toString(method), steps, worst, worstReplay);
    SENSODE_EXPECT_CLOSE(worstReplay, 0, 1e-12, 0, "dense vs advanceTo", 0);
    SENSODE_EXPECT_CLOSE(worst, 0, 2e-6, 0, "dense vs closed form", 0);
  }

  void exponentialMidpointBeatsLeftPoint() {
    // NUMERICS.md §7.4: the paper's left-point Exp is first order, the midpoint variant second
    // order (MM: 4.8e-2 vs 5.2e-3 on a rtol 1e-5 BDF grid). Measured here (CVODES grid, rtol
    // 1e-5, atol 1e-6): left point 2.4e-2, midpoint 8.1e-4.
    const Eigen::MatrixXd ref = michaelisMentenReferenceAt10();
    auto errorWith = [&](bool midpoint) {
      const SensitivityResult r =
          run(michaelisMentenModel(), SensitivityMethod::Exp, {0.0, 10.0}, 1e-5, 1e-6,
              [midpoint](SensitivityProblem&, SensitivityOptions& o) {
                o.peanoBaker.midpoint = midpoint;
              });
      return columnRelativeError(stateS(r, 1), ref);
    };
    const double left = errorWith(false), mid = errorWith(true);
    qInfo("MM Exp: left point %.2e, midpoint %.2e", left, mid);
    QVERIFY(mid < left / 5);
    SENSODE_EXPECT_CLOSE(mid, 0, 1e-2, 0, "midpoint Exp", 0);
  }

  void trajectoryFromOdeSd() {
    // PBSR/Exp on odeSD's trajectory (grid and dense output) instead of CVODES's. Measured on
    // MM at rtol 1e-8: Exp 2.5e-3 on odeSD's 124 steps (7.7e-5 on CVODES's 416); PBSR the same
    // (n_int > 100 on every one of these long steps, so it takes the exponential formula).
    const Eigen::MatrixXd ref = michaelisMentenReferenceAt10();
    for (const auto method : {SensitivityMethod::Exp, SensitivityMethod::Pbsr}) {
      const SensitivityResult r =
          run(michaelisMentenModel(), method, {0.0, 10.0}, 1e-8, 1e-12,
              [](SensitivityProblem&, SensitivityOptions& o) {
                o.trajectory = integrators::Method::OdeSd;
              });
      if (r.termination == tasks::Termination::InvalidInput &&
          r.message.find("not available") != std::string::npos)
        QSKIP("odeSD not available");
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      const double err = columnRelativeError(stateS(r, 1), ref);
      qInfo("MM %s on the odeSD trajectory: %.2e (%ld intervals)", tasks::toString(method), err,
            r.stats.peanoBaker.intervals);
      SENSODE_EXPECT_CLOSE(err, 0, 1e-2, 0, tasks::toString(method), 0);
    }
  }
};

QTEST_GUILESS_MAIN(TestSensitivityMethodOptions)
#include "tst_sensitivity_method_options.moc"
