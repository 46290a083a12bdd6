// SPDX-License-Identifier: MIT
// compareSensitivities (the GUI's "Compare methods") on constructed results with known
// discrepancies, and on two real methods against each other; scaledSensitivitiesAt (the heat
// map) against the task's own scaled run of the same model.
#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <memory>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/sensitivity_comparison.h"
#include "support/numeric_compare.h"

using namespace sensode;
using tasks::SensitivityResult;

namespace {

// nt = 2 times, ny = 2 outputs, np = 2 parameters; series (y, p) = values over time.
SensitivityResult grid(std::vector<double> values) {
  SensitivityResult r;
  r.times = {0, 1};
  r.outputIds = {"A", "B"};
  r.parameterIds = {"k1", "k2"};
  r.values = std::move(values);
  return r;
}

// `method` on `file` at the times 0, 1, ..., tEnd (atol 1e-12).
SensitivityResult runOn(const char* file, std::vector<std::string> parameters, int tEnd,
                        tasks::SensitivityMethod method, double rtol, bool scaled) {
  const auto m = model::importSbmlFile(file);
  tasks::SensitivityProblem problem;
  problem.model = std::make_shared<symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
  for (int i = 0; i <= tEnd; ++i) problem.times.push_back(i);
  problem.parameters = std::move(parameters);
  tasks::SensitivityOptions options;
  options.method = method;
  options.integrator.rtol = rtol;
  options.integrator.atol = 1e-12;
  options.scaled = scaled;
  return tasks::runSensitivities(problem, options);
}

SensitivityResult run(tasks::SensitivityMethod method, bool scaled) {
  return runOn(SENSODE_RESOURCES_DIR "/models/repressilator.xml", {"alpha", "beta", "n"}, 20,
               method, 1e-9, scaled);
}

}  // namespace

class TestSensitivityComparison : public QObject {
  Q_OBJECT

 private slots:
  void identicalResultsAgreeExactly() {
    const SensitivityResult r = grid({1, 2, 3, 4, 5, 6, 7, 8});
    const auto d = tasks::compareSensitivities(r, r);
    QCOMPARE(d.maxRelative, 0.0);
    QCOMPARE(d.medianRelative, 0.0);
    QCOMPARE(d.maxOverTime, (std::vector<double>{0, 0}));
  }

  // Entry order: (t0: A-k1, A-k2, B-k1, B-k2), (t1: ...). Reference series maxima over time:
  // A-k1 max(|1|,|5|) = 5, A-k2 6, B-k1 7, B-k2 8. One entry off by 0.5 at t1, B-k2: 0.5/8.
  void knownDiscrepancy() {
    const SensitivityResult ref = grid({1, 2, 3, 4, 5, 6, 7, 8});
    const SensitivityResult a = grid({1, 2, 3, 4, 5, 6, 7, 8.5});
    const auto d = tasks::compareSensitivities(a, ref);
    QCOMPARE(d.maxRelative, 0.5 / 8);
    QCOMPARE(d.medianRelative, 0.0);
    QCOMPARE(d.worstTime, std::size_t(1));
    QCOMPARE(d.worstOutput, std::size_t(1));
    QCOMPARE(d.worstParameter, std::size_t(1));
    QCOMPARE(d.maxOverTime[0], 0.0);
    QCOMPARE(d.maxOverTime[1], 0.5 / 8);
    // Every entry off by 10 %: max = median = 0.1 relative to each series' maximum (here the
    // t1 entries are the maxima, the t0 entries are relatively smaller).
    const SensitivityResult b = grid({1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8});
    const auto e = tasks::compareSensitivities(b, ref);
    SENSODE_EXPECT_CLOSE(e.maxRelative, 0.1, 0, 1e-14, "max", 0);
    // Sorted: t0 entries 0.1·1/5, 0.1·2/6, 0.1·3/7, 0.1·4/8, then four 0.1: median = mean of
    // the 4th and 5th = (0.05 + 0.1)/2.
    SENSODE_EXPECT_CLOSE(e.medianRelative, 0.075, 0, 1e-14, "median", 0);
  }

  // A series identically zero in the reference compares absolutely; NaN counts as infinite.
  void zeroSeriesAndNaN() {
    const SensitivityResult ref = grid({0, 2, 3, 4, 0, 6, 7, 8});
    const auto d = tasks::compareSensitivities(grid({1e-9, 2, 3, 4, -2e-9, 6, 7, 8}), ref);
    QCOMPARE(d.maxRelative, 2e-9);
    const auto n = tasks::compareSensitivities(
        grid({0, 2, 3, std::numeric_limits<double>::quiet_NaN(), 0, 6, 7, 8}), ref);
    QVERIFY(std::isinf(n.maxRelative));
    QCOMPARE(n.worstTime, std::size_t(0));
    QCOMPARE(n.worstParameter, std::size_t(1));
    // NaN in both (an output with no value at t0, issue 30): nothing to compare there; the
    // other entries decide (t1, B-k2 off by 0.5 of 8).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto both = tasks::compareSensitivities(grid({nan, nan, 3, 4, 5, 6, 7, 8.5}),
                                                  grid({nan, nan, 3, 4, 5, 6, 7, 8}));
    QCOMPARE(both.maxRelative, 0.5 / 8);
    QCOMPARE(both.maxOverTime[0], 0.0);
  }

  // The floor: series (A, k2) is exactly 0 in the reference while A responds to k1; the method
  // returns rounding noise there. Response of A: max |p·dy/dp| = |k1|·max(|1|, |5|) = 2·5 = 10;
  // at rtol 1e-9, ρ = 1000·rtol = 1e-6 and the floor of (A, k2) = ρ·10/|k2| = 1e-6·10/4 =
  // 2.5e-6, so noise 1e-12 is 4e-7, not 1e-12/0.
  void noiseAroundAnExactZeroIsNoDisagreement() {
    SensitivityResult ref = grid({1, 0, 3, 4, 5, 0, 7, 8});
    ref.parameterValues = {2, 4};
    SensitivityResult a = grid({1, 1e-12, 3, 4, 5, -1e-12, 7, 8});
    a.parameterValues = ref.parameterValues;
    const auto d = tasks::compareSensitivities(a, ref, 1e-9);
    SENSODE_EXPECT_CLOSE(d.maxRelative, 1e-12 / 2.5e-6, 0, 1e-14, "floored", 0);
    QCOMPARE(d.worstParameter, std::size_t(1));
    QCOMPARE(d.flooredSeries, std::size_t(1));
    QCOMPARE(d.floorTolerance, tasks::kFloorMargin * 1e-9);
    QCOMPARE(d.comparedEntries, std::size_t(8));
    // Without the floor the same noise compares absolutely (the old measure).
    QCOMPARE(tasks::compareSensitivities(a, ref).maxRelative, 1e-12);
    // The floor does not hide a real disagreement: 10 % of a series' own size stays 0.1.
    SensitivityResult b = grid({1, 0, 3, 4, 5, 0, 7, 8.8});
    b.parameterValues = ref.parameterValues;
    SENSODE_EXPECT_CLOSE(tasks::compareSensitivities(b, ref, 1e-9).maxRelative, 0.1, 0, 1e-14, "real", 0);
    // Scaled results: the floor is ρ times the output's largest scaled sensitivity (5 for A).
    ref.scaled = a.scaled = true;
    SENSODE_EXPECT_CLOSE(tasks::compareSensitivities(a, ref, 1e-9).maxRelative, 1e-12 / 5e-6, 0,
                         1e-14, "scaled", 0);
  }

  // Series the reference marks structurally zero are left out, whatever the method returns.
  void structuralZerosAreLeftOut() {
    SensitivityResult ref = grid({1, 0, 3, 4, 5, 0, 7, 8});
    ref.unreached = {0, 1, 0, 0};  // ny × np: (A, k2)
    const auto d = tasks::compareSensitivities(grid({1, 0.5, 3, 4, 5, 0.5, 7, 8}), ref, 1e-9);
    QCOMPARE(d.maxRelative, 0.0);
    QCOMPARE(d.structuralZeros, std::size_t(1));
    QCOMPARE(d.comparedEntries, std::size_t(6));
  }

  // The parameter with the largest |(p/y)·dy/dp| anywhere; y ≤ guard does not count.
  void mostInfluentialParameterByScaledEffect() {
    SensitivityResult r = grid({1, 2, 3, 4, 5, 6, 7, 8});
    r.parameterValues = {1, 1};
    r.outputValues = {1, 1, 1, 1};  // nt × ny
    QCOMPARE(tasks::mostInfluentialParameter(r, 0), std::size_t(1));  // |8| on k2
    r.parameterValues = {10, 1};  // k1: 10·7 = 70
    QCOMPARE(tasks::mostInfluentialParameter(r, 0), std::size_t(0));
    r.outputValues = {1, 1e-20, 1, 1e-20};  // B unresolved: k1 10·5 = 50 vs k2 6
    r.values = {1, 2, 3, 400, 5, 6, 7, 800};
    QCOMPARE(tasks::mostInfluentialParameter(r, 1e-12), std::size_t(0));
  }

  // Huang–Ferrell MAPK (BIOMD0000000009): every concentration's sensitivity to the compartment
  // size (4e-12) is exactly 0 — the size multiplies every rate law and divides it out again —
  // and each method returns noise there, up to |dy/dV| ~ 1e5. Against the series' own size
  // alone, noise compares with noise: d ≈ 1 (measured 1.15 odeSD, 1.0 FD), and absolutely, up to
  // 1e5, where the reference happens to be exactly 0. Against the floor the methods agree
  // (measured 1.5e-3 for both at rtol 1e-6; median ~1e-7).
  void huangFerrellCompartmentIsNoDisagreement() {
    const char* mapk = SENSODE_SHARED_DIR "/biomodels/BIOMD0000000009.xml";
    const std::vector<std::string> parameters{"compartment", "r1a.a1", "r1b.k2"};
    const SensitivityResult ref =
        runOn(mapk, parameters, 100, tasks::SensitivityMethod::Cvodes, 1e-6, false);
    QVERIFY2(ref.termination == tasks::Termination::Success, ref.message.c_str());
    for (auto method : {tasks::SensitivityMethod::OdeSd, tasks::SensitivityMethod::FiniteDifferences}) {
      const SensitivityResult other = runOn(mapk, parameters, 100, method, 1e-6, false);
      QVERIFY2(other.termination == tasks::Termination::Success, other.message.c_str());
      const auto unfloored = tasks::compareSensitivities(other, ref);
      const auto d = tasks::compareSensitivities(other, ref, 1e-6);
      qInfo("%s vs CVODES: max %.3g (without the floor %.3g at %s w.r.t. %s), median %.3g, "
            "%zu series floored", tasks::toString(method), d.maxRelative, unfloored.maxRelative,
            ref.outputIds[unfloored.worstOutput].c_str(),
            ref.parameterIds[unfloored.worstParameter].c_str(), d.medianRelative, d.flooredSeries);
      QCOMPARE(ref.parameterIds[unfloored.worstParameter], std::string("compartment"));
      QVERIFY(unfloored.maxRelative > 0.5);
      QVERIFY(d.maxRelative < 1e-2);
      QVERIFY(d.flooredSeries > 0);
    }
  }

  void mismatchedResultsAreRefused() {
    SensitivityResult other = grid({1, 2, 3, 4, 5, 6, 7, 8});
    other.parameterIds = {"k1", "k3"};
    QVERIFY_THROWS_EXCEPTION(InvalidOptions, tasks::compareSensitivities(other, grid({1, 2, 3, 4, 5, 6, 7, 8})));
    SensitivityResult scaled = grid({1, 2, 3, 4, 5, 6, 7, 8});
    scaled.scaled = true;
    QVERIFY_THROWS_EXCEPTION(InvalidOptions, tasks::compareSensitivities(scaled, grid({1, 2, 3, 4, 5, 6, 7, 8})));
  }

  // Two independent methods at rtol 1e-9 on the repressilator: small but non-zero discrepancy,
  // consistent with their tolerances (odeSD vs CVODES, both with S in the error test).
  void realMethodsAgreeWithinTolerance() {
    const SensitivityResult cv = run(tasks::SensitivityMethod::Cvodes, false);
    const SensitivityResult sd = run(tasks::SensitivityMethod::OdeSd, false);
    QVERIFY2(cv.termination == tasks::Termination::Success, cv.message.c_str());
    QVERIFY2(sd.termination == tasks::Termination::Success, sd.message.c_str());
    const auto d = tasks::compareSensitivities(sd, cv);
    qInfo("odeSD vs CVODES: max %.3g, median %.3g", d.maxRelative, d.medianRelative);
    QVERIFY(d.maxRelative > 0 && d.maxRelative < 1e-5);
    QVERIFY(d.medianRelative <= d.maxRelative);
    QCOMPARE(d.maxOverTime.size(), cv.times.size());
    QCOMPARE(d.maxOverTime[d.worstTime], d.maxRelative);
  }

  // The heat map's scaling from an unscaled run equals the task's scaled run.
  void scaledSnapshotEqualsTheScaledRun() {
    const SensitivityResult plain = run(tasks::SensitivityMethod::Cvodes, false);
    const SensitivityResult scaled = run(tasks::SensitivityMethod::Cvodes, true);
    QCOMPARE(plain.parameterValues.size(), plain.parameterIds.size());
    for (std::size_t it : {std::size_t(5), std::size_t(20)}) {
      const auto a = tasks::scaledSensitivitiesAt(plain, it, 1e-12);
      const auto b = tasks::scaledSensitivitiesAt(scaled, it, 1e-12);
      QCOMPARE(a.size(), plain.outputIds.size() * plain.parameterIds.size());
      for (std::size_t k = 0; k < a.size(); ++k) {
        QCOMPARE(b[k], scaled.values[it * a.size() + k]);
        SENSODE_EXPECT_CLOSE(a[k], b[k], 0, 1e-13, "scaled", k);
      }
    }
    // At t = 0 the mRNAs start at 0: |y| <= guard, no scaled value (NaN).
    const auto t0 = tasks::scaledSensitivitiesAt(plain, 0, 1e-12);
    QVERIFY(std::isnan(t0[0]));
  }
};

QTEST_MAIN(TestSensitivityComparison)
#include "tst_sensitivity_comparison.moc"
