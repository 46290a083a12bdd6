// SPDX-License-Identifier: MIT
// odeSD (NUMERICS.md §2–§5) on ODE systems built by hand: the variable-ratio coefficients, the
// observed order and the error estimator on Chua's circuit with fixed steps, the §11 reference
// table with the §6 step counts, Robertson to 1e11 with the hand-over to CVODES BDF, dense output
// on a stiff problem, cancellation and statistics (staggered direct sensitivities:
// tst_odesd_sensitivities.cpp; linear solvers: tst_odesd_linear_solvers.cpp; failures:
// tst_odesd_failures.cpp).
#include "support/odesd_fixtures.h"

#include <new>

// Counts heap allocations (for the "no allocation per step" check), per thread: the native
// evaluators' background compiler thread allocates freely and must not count against the
// integrator's steps.

namespace {
thread_local long tAllocations = 0;
}
void* operator new(std::size_t size) {
  ++tAllocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (std::stable_sort's buffer): under ASan its own would allocate what the
// free() above then releases, an alloc-dealloc mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  ++tAllocations;
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

class TestOdeSdIntegrator : public QObject {
  Q_OBJECT

 private slots:
  // ---- coefficients (§2.3, §2.4, §2.7) ----

  void g5WeightsAtEqualSteps() {
    const auto g = integrators::odesd::g5Weights(1.0);
    SENSODE_EXPECT_CLOSE(g.f1, 14.0 / 31, 0, 1e-15, "g5 weight of f(t+h)", 0);
    SENSODE_EXPECT_CLOSE(g.a1, -2.0 / 31, 0, 1e-15, "g5 weight of a(t+h)", 0);
    SENSODE_EXPECT_CLOSE(g.f0, 16.0 / 31, 0, 1e-15, "g5 weight of f(t)", 0);
    SENSODE_EXPECT_CLOSE(g.a0, 4.0 / 31, 0, 1e-15, "g5 weight of a(t)", 0);
    SENSODE_EXPECT_CLOSE(g.x, 32.0 / 31, 0, 1e-15, "g5 weight of x(t)", 0);
    SENSODE_EXPECT_CLOSE(g.xm, -1.0 / 31, 0, 1e-15, "g5 weight of x(t-h)", 0);
    const auto d = integrators::odesd::errorWeights(1.0);
    const double expected[] = {1.0 / 31, 0.5 / 31, -1.5 / 31, 17.0 / 12 / 31, 7.0 / 12 / 31};
    const double actual[] = {d.dx, d.f0, d.f1, d.a0, d.a1};
    for (int i = 0; i < 5; ++i) SENSODE_EXPECT_CLOSE(actual[i], expected[i], 0, 1e-14, "D(r=1)", i);
    const auto k = integrators::odesd::hermitePredictor(1.0);
    const double pk[] = {k.xm, k.x, k.fm, k.f, k.am, k.a};
    const double pe[] = {-31, 32, -14, -16, -2, 4};
    for (int i = 0; i < 6; ++i) SENSODE_EXPECT_CLOSE(pk[i], pe[i], 0, 1e-15, "predictor(r=1)", i);
  }

  void errorWeightsAreG5MinusG4() {
    // D = g5 − g4 with g4 = x_n + (h/2)(f_n + f_{n+1}) + (h²/12)(a_n − a_{n+1}), for any r.
    for (double r : {0.2, 0.5, 1.0, 1.7, 3.0, 5.0}) {
      const auto g = integrators::odesd::g5Weights(r);
      const auto d = integrators::odesd::errorWeights(r);
      const long i = static_cast<long>(r * 10);
      SENSODE_EXPECT_CLOSE(d.dx, -g.xm, 1e-15, 1e-13, "dx", i);
      SENSODE_EXPECT_CLOSE(g.x + g.xm, 1.0, 1e-15, 1e-13, "x weights sum", i);
      SENSODE_EXPECT_CLOSE(d.f0, g.f0 - 0.5, 1e-15, 1e-13, "f0", i);
      SENSODE_EXPECT_CLOSE(d.f1, g.f1 - 0.5, 1e-15, 1e-13, "f1", i);
      SENSODE_EXPECT_CLOSE(d.a0, g.a0 - 1.0 / 12, 1e-15, 1e-13, "a0", i);
      SENSODE_EXPECT_CLOSE(d.a1, g.a1 + 1.0 / 12, 1e-15, 1e-13, "a1", i);
      const auto k = integrators::odesd::hermitePredictor(r);
      SENSODE_EXPECT_CLOSE(k.xm + k.x, 1.0, 1e-12, 1e-13, "predictor x weights sum", i);
    }
  }

  void coefficientsAreExactOnPolynomials() {
    // A quintic q(t): the predictor, g5 and the dense output reproduce it exactly; D vanishes
    // on quartics (the rule is exact there) and equals h⁵ q⁽⁵⁾/720 + O(h⁶) on the quintic.
    const double c[] = {0.3, -1.1, 0.7, 0.25, -0.4, 0.15};
    auto q = [&](double t, int deriv) {
      double s = 0;
      for (int k = deriv; k < 6; ++k) {
        double coef = c[k];
        for (int j = 0; j < deriv; ++j) coef *= (k - j);
        s += coef * std::pow(t, k - deriv);
      }
      return s;
    };
    for (double r : {0.5, 1.0, 2.0}) {
      const double hm = 0.4, h = r * hm, t0 = 0.2, tm = t0 - hm, t1 = t0 + h;
      const auto k = integrators::odesd::hermitePredictor(r);
      const double pred = k.xm * q(tm, 0) + k.x * q(t0, 0) + hm * (k.fm * q(tm, 1) + k.f * q(t0, 1)) +
                          hm * hm * (k.am * q(tm, 2) + k.a * q(t0, 2));
      SENSODE_EXPECT_CLOSE(pred, q(t1, 0), 1e-12, 1e-12, "quintic predictor", static_cast<long>(r * 10));
      const auto g = integrators::odesd::g5Weights(r);
      const double g5 = g.xm * q(tm, 0) + g.x * q(t0, 0) + h * (g.f0 * q(t0, 1) + g.f1 * q(t1, 1)) +
                        h * h * (g.a0 * q(t0, 2) + g.a1 * q(t1, 2));
      SENSODE_EXPECT_CLOSE(g5, q(t1, 0), 1e-12, 1e-12, "g5 on a quintic", static_cast<long>(r * 10));
      for (double th : {0.0, 0.25, 0.5, 0.9, 1.0}) {
        const auto dn = integrators::odesd::hermiteDense(th);
        const double v = dn.x0 * q(t0, 0) + dn.x1 * q(t1, 0) + h * (dn.f0 * q(t0, 1) + dn.f1 * q(t1, 1)) +
                         h * h * (dn.a0 * q(t0, 2) + dn.a1 * q(t1, 2));
        SENSODE_EXPECT_CLOSE(v, q(t0 + th * h, 0), 1e-12, 1e-12, "dense output", static_cast<long>(th * 100));
      }
    }
    const auto qc = integrators::odesd::quadraticPredictor(0.3, 0.2, 0.1);
    auto quad = [](double t) { return 1 + 2 * t - 3 * t * t; };
    SENSODE_EXPECT_CLOSE(qc.xm2 * quad(-0.3) + qc.xm1 * quad(-0.2) + qc.x * quad(0), quad(0.3), 1e-14,
                         1e-13, "quadratic predictor", 0);
  }

  // ---- order and error estimate on Chua's circuit (fixed steps) ----

  void observedOrderIsFour() {
    const auto model = chuaModel();
    const Reference chua = catalogue()[4];
    const std::vector<double> x10 = fixedSteps(model, 10, 5120);
    for (std::size_t i = 0; i < 3; ++i) {
      SENSODE_EXPECT_CLOSE(x10[i], chua.x[i], 1e-9, 0, "Chua x(10), 5120 steps vs §11", static_cast<long>(i));
    }
    const double T = 1;
    const std::vector<double> ref = fixedSteps(model, T, 2560);
    std::vector<double> errors;
    for (int N : {20, 40, 80, 160}) {
      const std::vector<double> x = fixedSteps(model, T, N);
      double e = 0;
      for (std::size_t i = 0; i < 3; ++i) keepWorst(e, std::abs(x[i] - ref[i]));
      errors.push_back(e);
    }
    qInfo("Chua fixed-step errors N = 20, 40, 80, 160: %.4g %.4g %.4g %.4g", errors[0], errors[1],
          errors[2], errors[3]);
    for (std::size_t k = 0; k + 1 < errors.size(); ++k) {
      const double order = std::log2(errors[k] / errors[k + 1]);
      qInfo("observed order %zu: %.4f", k, order);
      QVERIFY2(std::abs(order - 4.0) <= 0.1, qPrintable(QString("order %1").arg(order)));
    }
  }

  void errorEstimateMatchesLocalError() {
    // ε = W⁻¹(g5 − g4) estimates x(t+h) − x_{n+1} for the exact solution through x_n.
    const auto model = chuaModel();
    const double T = 10, h = 0.02;
    const std::vector<double> p = model->nominalParameters();
    struct Sample {
      double t;
      std::vector<double> xStart, xEnd, eps;
    };
    std::vector<Sample> samples;
    OdeSdIntegrator integrator;
    integrator.setOdeSdOptions(fixedStepOptions(h));
    long stepNo = 0;
    integrator.setStepObserver([&](const integrators::OdeSdStepInfo& s) {
      if (!s.firstStep && ++stepNo % 25 == 0) {
        samples.push_back({s.t, {s.xStart.begin(), s.xStart.end()}, {s.xEnd.begin(), s.xEnd.end()},
                           {s.errorEstimate.begin(), s.errorEstimate.end()}});
      }
    });
    std::vector<double> x{0, 0, -0.1};
    integrator.initialize(model, fixedStepNewtonTolerances(), 0.0, x, p);
    integrator.setStopTime(T);
    integrator.advanceTo(T, x, {});
    QVERIFY(samples.size() >= 15);
    std::vector<double> ratios;
    for (const Sample& s : samples) {
      // Exact local solution from xStart over h: 64 fixed sub-steps (error ~ 64⁻⁴ of the step's).
      OdeSdIntegrator fine;
      fine.setOdeSdOptions(fixedStepOptions(h / 64));
      std::vector<double> xe = s.xStart;
      fine.initialize(model, fixedStepNewtonTolerances(), s.t, xe, p);
      fine.setStopTime(s.t + h);
      fine.advanceTo(s.t + h, xe, {});
      double num = 0, den = 0;
      for (std::size_t i = 0; i < 3; ++i) {
        const double trueErr = xe[i] - s.xEnd[i];
        num += s.eps[i] * trueErr;
        den += trueErr * trueErr;
      }
      ratios.push_back(num / den);
    }
    std::sort(ratios.begin(), ratios.end());
    const double median = ratios[ratios.size() / 2];
    qInfo("estimator / true local error: median %.4f, min %.4f, max %.4f over %zu steps", median,
          ratios.front(), ratios.back(), ratios.size());
    QVERIFY2(median >= 0.8 && median <= 1.2, qPrintable(QString::number(median)));
  }

  // ---- the §11 reference table and §6 step counts ----

  void referenceTable_data() {
    QTest::addColumn<int>("problem");
    QTest::addColumn<double>("rtol");
    QTest::addColumn<double>("maxError");   // relative, components > 1e-12
    QTest::addColumn<int>("expectedSteps");  // NUMERICS.md §6 (0 = not given)
    QTest::newRow("MM 1e-6") << 0 << 1e-6 << 1e-5 << 62;
    QTest::newRow("MM 1e-8") << 0 << 1e-8 << 1e-7 << 118;
    QTest::newRow("Robertson 1e-6") << 1 << 1e-6 << 1e-5 << 85;
    QTest::newRow("Robertson 1e-8") << 1 << 1e-8 << 1e-7 << 146;
    QTest::newRow("repressilator 1e-6") << 2 << 1e-6 << 1e-4 << 405;
    QTest::newRow("repressilator 1e-8") << 2 << 1e-8 << 1e-6 << 1008;
    QTest::newRow("Linear2 1e-6") << 3 << 1e-6 << 1e-4 << 123;
    QTest::newRow("Linear2 1e-8") << 3 << 1e-8 << 1e-6 << 262;
    // Chua's circuit amplifies local errors over T = 10 (CVODES at the same rtol: 3.8e-4, 1.5e-6).
    QTest::newRow("Chua 1e-6") << 4 << 1e-6 << 2e-3 << 0;
    QTest::newRow("Chua 1e-8") << 4 << 1e-8 << 5e-5 << 0;
  }

  void referenceTable() {
    QFETCH(int, problem);
    QFETCH(double, rtol);
    QFETCH(double, maxError);
    QFETCH(int, expectedSteps);
    const Reference ref = catalogue()[static_cast<std::size_t>(problem)];
    const Run r = runOdeSd(ref.make(), tolerances(rtol), {ref.T});
    const double err = maxRelativeError(r.x[0], ref.x);
    const IntegratorStats& s = r.stats;
    IntegratorStats cs;
    const double cvodesErr =
        maxRelativeError(runCvodes(ref.make(), tolerances(rtol), {ref.T}, &cs)[0], ref.x);
    qInfo("%s rtol %g: err %.3g; %ld steps (§6: %d), %ld ETF, %ld NCF, %ld Newton, %ld f, %ld J, "
          "%ld LU; CVODES err %.3g, %ld steps",
          ref.name, rtol, err, s.steps, expectedSteps, s.errorTestFailures, s.newtonFailures,
          s.newtonIterations, s.rhsEvals, s.jacEvals, s.luFactorizations, cvodesErr, cs.steps);
    QVERIFY2(err <= maxError, qPrintable(QString("error %1 > %2").arg(err).arg(maxError)));
    if (expectedSteps > 0) {
      QVERIFY2(std::abs(s.steps - expectedSteps) <= 0.2 * expectedSteps,
               qPrintable(QString("%1 steps, §6 has %2").arg(s.steps).arg(expectedSteps)));
    }
    QCOMPARE(s.handoverTime, -1.0);
  }

  // ---- stiff tail: cap z and hand over to CVODES BDF (§4.3) ----

  void robertsonLongTailHandsOver_data() {
    QTest::addColumn<double>("rtol");
    QTest::newRow("1e-4") << 1e-4;
    QTest::newRow("1e-6") << 1e-6;
    QTest::newRow("1e-8") << 1e-8;
  }

  void robertsonLongTailHandsOver() {
    QFETCH(double, rtol);
    const auto model = robertsonModel();
    const std::vector<double> ref{2.0833401497e-8, 8.3333607703e-14, 9.9999997917e-1};
    const double atol = 1e-14;
    OdeSdIntegrator integrator;
    std::vector<double> x{1, 0, 0};
    integrator.initialize(model, tolerances(rtol, atol), 0.0, x, model->nominalParameters());
    integrator.advanceTo(1e11, x, {});
    const IntegratorStats s = integrator.stats();
    const CvodesIntegratorRun bdf = cvodesStats(model, tolerances(rtol, atol), 1e11);
    const double err = weightedError(x, ref, rtol, atol);
    qInfo("Robertson T = 1e11 rtol %g: hand-over at t = %.4g after %ld odeSD steps + %ld BDF "
          "steps = %ld; weighted error %.3g (y1 %.10g); CVODES alone: %ld steps, %.3g",
          rtol, s.handoverTime, s.steps - s.handoverSteps, s.handoverSteps, s.steps, err, x[0],
          bdf.steps, weightedError(bdf.x, ref, rtol, atol));
    QVERIFY(integrator.handedOver());
    QVERIFY(s.handoverTime > 0 && s.handoverTime < 1e11);
    QVERIFY(s.handoverSteps > 0 && s.handoverSteps < s.steps);
    // The error at T is CVODES's global error over the tail: started from the exact state at the
    // hand-over time, CVODES itself lands anywhere within ±15 weights of y1 (measured).
    QVERIFY2(err <= 30, qPrintable(QString::number(err)));
    SENSODE_EXPECT_CLOSE(x[2], ref[2], 0, rtol, "y3(1e11)", 2);
    QVERIFY(s.steps < bdf.steps);
    // Later calls delegate to CVODES.
    integrator.advanceTo(2e11, x, {});
    const IntegratorStats s2 = integrator.stats();
    QVERIFY(s2.steps > s.steps);
    QCOMPARE(s2.steps - s2.handoverSteps, s.steps - s.handoverSteps);
    QCOMPARE(s2.handoverTime, s.handoverTime);
  }

  void capWithoutHandover() {
    // handoverAfter = 0: the cap alone keeps z ≤ zMax (and never hands over).
    OdeSdOptions sd;
    sd.handoverAfter = 0;
    sd.zMax = 1e3;
    double zMax = 0;
    OdeSdIntegrator integrator;
    integrator.setOdeSdOptions(sd);
    integrator.setStepObserver([&](const integrators::OdeSdStepInfo& i) { zMax = std::max(zMax, i.z); });
    const auto model = robertsonModel();
    std::vector<double> x{1, 0, 0};
    integrator.initialize(model, tolerances(1e-6), 0.0, x, model->nominalParameters());
    integrator.advanceTo(40, x, {});
    QVERIFY(!integrator.handedOver());
    QVERIFY2(zMax <= 1.5e3, qPrintable(QString::number(zMax)));
    const std::vector<double> ref{7.1582706872e-1, 9.1855347646e-6, 2.8416374575e-1};
    QVERIFY(maxRelativeError(x, ref) < 1e-5);
  }

  // ---- dense output (§2.7) ----

  void denseOutputOnStiffProblem() {
    // Robertson, rtol 1e-6, 400 output times in (0, 40]: interior points must be as accurate as
    // the step points (the quintic Hermite alone is far worse on stiff steps).
    const auto model = robertsonModel();
    const double rtol = 1e-6, atol = 1e-12;
    std::vector<double> times;
    for (int i = 1; i <= 400; ++i) times.push_back(0.1 * i);
    const auto ref = runCvodes(model, tolerances(1e-12, 1e-20), times);
    auto maxWeighted = [&](const std::vector<std::vector<double>>& xs,
                           const std::vector<std::vector<double>>& refs) {
      double e = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        keepWorst(e, weightedError(xs[i], refs[i], rtol, atol));
      }
      return e;
    };
    // Step points of the same run (the observer sees them).
    std::vector<double> stepTimes;
    std::vector<std::vector<double>> stepStates;
    auto observe = [&](const integrators::OdeSdStepInfo& s) {
      stepTimes.push_back(s.t + s.h);
      stepStates.emplace_back(s.xEnd.begin(), s.xEnd.end());
    };
    auto run = [&](const OdeSdOptions& sd, bool record) {
      OdeSdIntegrator integrator;
      integrator.setOdeSdOptions(sd);
      if (record) integrator.setStepObserver(observe);
      std::vector<double> x{1, 0, 0};
      integrator.initialize(model, tolerances(rtol, atol), 0.0, x, model->nominalParameters());
      std::vector<std::vector<double>> out;
      for (double t : times) {
        integrator.advanceTo(t, x, {});
        out.push_back(x);
      }
      return out;
    };
    const auto hybrid = run({}, true);
    OdeSdOptions hermiteOnly;
    hermiteOnly.denseSwitch = std::numeric_limits<double>::infinity();
    const auto hermite = run(hermiteOnly, false);
    // Steps past t = 40 are not in the CVODES reference.
    while (!stepTimes.empty() && stepTimes.back() > 40) {
      stepTimes.pop_back();
      stepStates.pop_back();
    }
    const double eSteps = maxWeighted(stepStates, runCvodes(model, tolerances(1e-12, 1e-20), stepTimes));
    const double eHybrid = maxWeighted(hybrid, ref), eHermite = maxWeighted(hermite, ref);
    qInfo("Robertson rtol 1e-6, max weighted error: step points %.3g, dense output hybrid %.3g, "
          "quintic Hermite only %.3g",
          eSteps, eHybrid, eHermite);
    QVERIFY2(eHybrid <= 2 * eSteps + 1, qPrintable(QString::number(eHybrid)));
    QVERIFY(eHermite > 10 * eHybrid);
  }

  void outputTimesDoNotShortenSteps() {
    // Many output times cost no extra steps (they are interpolated), except the last step.
    const auto model = michaelisMentenModel();
    const Run one = runOdeSd(model, tolerances(1e-6), {10});
    std::vector<double> times;
    for (int i = 1; i <= 1000; ++i) times.push_back(0.01 * i);
    const Run many = runOdeSd(model, tolerances(1e-6), times);
    QCOMPARE(many.stats.steps, one.stats.steps);
    QCOMPARE(many.x.back(), one.x.back());
    // With a stop time the last step lands exactly on it.
    const Run landed = runOdeSd(model, tolerances(1e-6), {10}, {}, 10);
    const std::vector<double> ref{4.1636668606e-2, 1.4136928979e-1, 5.8363331394e-2, 8.0026737881e-1};
    QVERIFY(maxRelativeError(landed.x[0], ref) < 1e-5);
    QVERIFY(std::abs(landed.stats.steps - one.stats.steps) <= 2);
  }

  // ---- cancellation and progress ----

  void cancelFromCallback() {
    CancelToken token;
    ProgressMonitor monitor;
    monitor.token = token;
    long lastSteps = 0;
    monitor.callback = [&](const ProgressInfo& info) {
      lastSteps = info.steps;
      if (info.steps >= 10) token.cancel();
      return Decision::Continue;
    };
    OdeSdIntegrator integrator;
    const auto model = robertsonModel();
    std::vector<double> x{1.0, 0.0, 0.0};
    integrator.initialize(model, tolerances(1e-8), 0.0, x, model->nominalParameters());
    QVERIFY_THROWS_EXCEPTION(Cancelled, integrator.advanceTo(40.0, x, monitor));
    QCOMPARE(lastSteps, 10L);
    QCOMPARE(integrator.stats().steps, 11L);
  }

  void cancelledTimeCourseKeepsPartialRows() {
    tasks::TimeCourseProblem problem;
    problem.model = robertsonModel();
    for (int i = 0; i <= 40; ++i) problem.times.push_back(i == 0 ? 0.0 : std::pow(10.0, -6 + 0.2 * i));
    tasks::TimeCourseOptions options;
    options.method = integrators::Method::OdeSd;
    options.integrator = tolerances(1e-8);
    CancelToken token;
    ProgressMonitor monitor;
    monitor.token = token;
    long stepsAtCancel = -1;
    monitor.callback = [&](const ProgressInfo& info) {
      if (info.steps >= 10 && stepsAtCancel < 0) {
        stepsAtCancel = info.steps;
        token.cancel();
      }
      return Decision::Continue;
    };
    const tasks::TimeCourseResult r = tasks::runTimeCourse(problem, options, monitor);
    QVERIFY(r.termination == tasks::Termination::UserAbort);
    QVERIFY(!r.times.empty());
    QVERIFY(r.times.size() < problem.times.size());
    // The run stops within one step of the request.
    QVERIFY(stepsAtCancel >= 10);
    QVERIFY2(r.stats.steps >= stepsAtCancel && r.stats.steps <= stepsAtCancel + 1,
             qPrintable(QString("%1 steps, cancelled at %2").arg(r.stats.steps).arg(stepsAtCancel)));
  }

  // ---- statistics, factory, task ----

  void statsAreConsistent() {
    // jacobianReuseSteps = 1: fresh J, J_J and LU on every attempt (the paper's scheme); the
    // default keeps the Newton matrix across steps.
    for (int reuse : {1, OdeSdOptions{}.jacobianReuseSteps}) {
      OdeSdOptions sd;
      sd.jacobianReuseSteps = reuse;
      IntegratorStats s =
          runOdeSd(robertsonModel(), tolerances(1e-8), {1, 10, 40}, sd).stats;
      qInfo("Robertson T=40 rtol 1e-8, Jacobians kept for %d steps: %ld steps, %ld f, %ld a, "
            "%ld (J, J_J), %ld LU, %ld Newton, %ld NCF, %ld ETF",
            reuse, s.steps, s.rhsEvals, s.secondDerivativeEvals, s.jacEvals,
            s.luFactorizations, s.newtonIterations, s.newtonFailures, s.errorTestFailures);
      QVERIFY(s.steps > 0);
      QCOMPARE(s.secondDerivativeEvals, s.rhsEvals);  // f and ẍ are evaluated together
      QCOMPARE(s.jacobianOfSecondEvals, s.jacEvals);  // J and J_J likewise
      if (reuse == 1) {
        QVERIFY(s.jacEvals >= s.steps + s.errorTestFailures + s.newtonFailures);  // per attempt
        QVERIFY(s.luFactorizations >= s.jacEvals);
      } else {
        // At least one pair per jacobianReuseSteps steps, and every pair is factorised.
        QVERIFY(s.jacEvals >= 1 && s.jacEvals * reuse >= s.steps);
        QVERIFY(s.jacEvals < s.steps);
        QVERIFY(s.luFactorizations >= s.jacEvals);
      }
      // Per attempt: the Newton iterations' evaluations, plus one at the converged point unless
      // the last iterate is kept with its own (OdeSdOptions::iterateTolerance); off, exactly
      // one per step more.
      QVERIFY(s.rhsEvals >= s.newtonIterations);
      OdeSdOptions noKeep = sd;
      noKeep.iterateTolerance = 0;
      const IntegratorStats k = runOdeSd(robertsonModel(), tolerances(1e-8), {1, 10, 40}, noKeep).stats;
      QVERIFY(k.rhsEvals >= k.newtonIterations + k.steps);
      QVERIFY(s.newtonIterations >= s.steps);
      QCOMPARE(s.handoverSteps, 0L);
      QCOMPARE(s.handoverTime, -1.0);
    }
  }

  void statsAccumulateAndRepeatedTimes() {
    OdeSdIntegrator integrator;
    const auto model = decayModel();
    std::vector<double> x{2.0};
    integrator.initialize(model, tolerances(1e-8), 0.0, x, model->nominalParameters());
    integrator.advanceTo(1.0, x, {});
    const auto first = integrator.stats();
    integrator.advanceTo(5.0, x, {});
    const auto second = integrator.stats();
    QVERIFY(second.steps > first.steps);
    QCOMPARE(integrator.currentTime(), 5.0);
    // Local error control: the global error grows with the number of steps (≈ 25 rtol here).
    SENSODE_EXPECT_CLOSE(x[0], 2 * std::exp(-3.5), 0, 1e-6, "x(5)", 0);
    std::vector<double> again;
    integrator.advanceTo(5.0, again, {});
    QCOMPARE(again, x);
    QCOMPARE(integrator.stats().steps, second.steps);
  }

  void factoryAndTimeCourseTask() {
    auto integrator = integrators::makeIntegrator(integrators::Method::OdeSd);
    QVERIFY(integrator != nullptr);
    QVERIFY(integrator->method() == integrators::Method::OdeSd);
    QVERIFY(dynamic_cast<OdeSdIntegrator*>(integrator.get()) != nullptr);

    tasks::TimeCourseProblem problem;
    problem.model = michaelisMentenModel();
    problem.times = {0, 0, 1, 5, 10};
    tasks::TimeCourseOptions options;
    options.method = integrators::Method::OdeSd;
    options.integrator = tolerances(1e-8);
    const auto r = tasks::runTimeCourse(problem, options);
    QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
    QCOMPARE(r.at(0, 0), 0.1);
    const double ref[] = {4.1636668606e-2, 1.4136928979e-1, 5.8363331394e-2, 8.0026737881e-1};
    for (std::size_t j = 0; j < 4; ++j) {
      SENSODE_EXPECT_CLOSE(r.at(4, j), ref[j], 1e-14, 1e-6, "MM x(10)", static_cast<long>(j));
    }
    QVERIFY(r.stats.steps > 0 && r.stats.secondDerivativeEvals > 0);
  }

  void timeDependentRightHandSide() {
    // x' = cos(t) x, x(0) = 1: x = exp(sin t) (ẍ includes ∂f/∂t).
    SystemBuilder b;
    auto& e = b.e();
    const Expr x = b.state("x", 1.0);
    b.rhs(x, e.mul(e.unary(symbolic::Op::Cos, b.t()), x));
    const Run r = runOdeSd(b.compile(), tolerances(1e-9, 1e-14), {1, 5, 10});
    const double ts[] = {1, 5, 10};
    for (int i = 0; i < 3; ++i) {
      SENSODE_EXPECT_CLOSE(r.x[static_cast<std::size_t>(i)][0], std::exp(std::sin(ts[i])), 0, 2e-8, "exp(sin t)", i);
    }
  }

  void stepsDoNotAllocate_data() {
    QTest::addColumn<int>("solver");  // LinearSolverKind
    QTest::addColumn<bool>("sensitivities");
    QTest::newRow("dense") << static_cast<int>(LinearSolverKind::Dense) << false;
    QTest::newRow("KLU") << static_cast<int>(LinearSolverKind::Sparse) << false;
    QTest::newRow("dense, sensitivities") << static_cast<int>(LinearSolverKind::Dense) << true;
    QTest::newRow("KLU, sensitivities") << static_cast<int>(LinearSolverKind::Sparse) << true;
  }

  void stepsDoNotAllocate() {
    // After initialize() and the first step, steps, Newton iterations, LUs, dense output and the
    // sensitivity solves run on preallocated buffers: no heap allocation at all.
    QFETCH(int, solver);
    QFETCH(bool, sensitivities);
    const auto model = robertsonModel();
    OdeSdIntegrator integrator;
    std::vector<double> x{1, 0, 0};
    integrator.initialize(model, tolerances(1e-8, 1e-12, static_cast<LinearSolverKind>(solver)),
                          0.0, x, model->nominalParameters());
    if (sensitivities) integrator.enableSensitivities({0, 1, 2}, std::vector<double>(9, 0.0), true);
    integrator.advanceTo(1e-3, x, {});
    std::vector<double> S(sensitivities ? 9 : 0);
    const ProgressMonitor monitor;  // (a default monitor allocates its cancel token)
    // Steps through native evaluators where a C compiler is available (their calls must not
    // allocate either); the interpreter otherwise.
    model->waitForNative(120);
    const long before = tAllocations;
    const long stepsBefore = integrator.stats().steps;
    for (int i = 1; i <= 400; ++i) {
      integrator.advanceTo(0.1 * i, x, monitor);  // many outputs: dense output (sub-steps) too
      if (sensitivities) integrator.sensitivities(S);
    }
    const long allocations = tAllocations - before;
    QVERIFY(integrator.stats().steps > stepsBefore + 50);
    QVERIFY(!integrator.handedOver());
    QCOMPARE(allocations, 0L);
  }

};

QTEST_GUILESS_MAIN(TestOdeSdIntegrator)
#include "tst_odesd_integrator.moc"
