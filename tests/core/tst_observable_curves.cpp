// SPDX-License-Identifier: MIT
// petab::observableCurves (the fit chart's simulated curves) on a problem with two scale
// parameters for one observable (tests/data/petab/two_gels: x = x0·e^{−k·t} read as
// scale_gel1·x and scale_gel2·x): one curve per group, each against the closed form on the
// whole fine grid, passing through the objective's own simulated values at the measurement times.
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>

#include "core/petab/objective.h"
#include "core/petab/observable_curves.h"
#include "core/petab/petab_problem.h"
#include "support/numeric_compare.h"

using namespace sensode::petab;

namespace {

const std::filesystem::path kTwoGels = SENSODE_TEST_DATA_DIR "/petab/two_gels/two_gels.yaml";
constexpr double kX0 = 2, kK = 0.3;

}  // namespace

class TestObservableCurves : public QObject {
  Q_OBJECT

 private slots:
  void oneCurvePerScaleParameterOnTheClosedForm() {
    const Problem p = loadProblem(kTwoGels);
    ObjectiveOptions o;
    o.integrator.rtol = 1e-10;
    o.integrator.atol = 1e-12;
    const std::vector<double> nominal = nominalScaledParameters(p);
    const std::vector<ObservableCurve> curves = observableCurves(p, nominal, o, 201);
    QCOMPARE(curves.size(), std::size_t(2));
    QCOMPARE(curves[0].observableParameters, std::string("scale_gel1"));
    QCOMPARE(curves[1].observableParameters, std::string("scale_gel2"));
    const double scales[] = {1, 3};
    for (std::size_t g = 0; g < 2; ++g) {
      const ObservableCurve& c = curves[g];
      QCOMPARE(c.simulationCondition, p.findCondition("c0"));
      QCOMPARE(c.preequilibrationCondition, -1);
      // 201 grid times over [0, 10]; the measurement times 0, 1, 2, 4, 6, 8, 10 are grid times.
      QCOMPARE(c.times.size(), std::size_t(201));
      QCOMPARE(c.values.size(), c.times.size());
      QCOMPARE(c.times.front(), 0.0);
      QCOMPARE(c.times.back(), 10.0);
      QVERIFY(std::is_sorted(c.times.begin(), c.times.end()));
      for (std::size_t n = 0; n < c.times.size(); ++n) {
        const double exact = scales[g] * kX0 * std::exp(-kK * c.times[n]);
        SENSODE_EXPECT_CLOSE(c.values[n], exact, 1e-10, 1e-8, "curve", long(n));
      }
    }
    // The objective's simulated values at the measurement rows lie on their group's curve.
    const ObjectiveResult r = evaluateObjective(p, nominal, GradientMethod::None, o);
    for (std::size_t i = 0; i < p.measurements.size(); ++i) {
      const Measurement& m = p.measurements[i];
      const ObservableCurve& c = curves[observableParametersText(m) == "scale_gel1" ? 0 : 1];
      const auto at = std::find(c.times.begin(), c.times.end(), m.time);
      QVERIFY(at != c.times.end());
      SENSODE_EXPECT_CLOSE(c.values[std::size_t(at - c.times.begin())], r.simulated[i], 1e-10, 1e-8,
                           "on curve", long(i));
    }
  }

  // Off-grid measurement times join the grid; a parameter vector reaches the curves.
  void measurementTimesJoinTheGrid() {
    const Problem p = loadProblem(kTwoGels);
    std::vector<double> q = nominalScaledParameters(p);
    q[0] = std::log10(0.6);  // k on its log10 scale
    const auto curves = observableCurves(p, q, {}, 4);  // grid 0, 10/3, 20/3, 10
    QCOMPARE(curves.size(), std::size_t(2));
    // Union of {0, 3.33, 6.67, 10} and the measurement times {0, 1, 2, 4, 6, 8, 10}.
    QCOMPARE(curves[0].times.size(), std::size_t(9));
    for (std::size_t n = 0; n < curves[1].times.size(); ++n)
      SENSODE_EXPECT_CLOSE(curves[1].values[n], 3 * kX0 * std::exp(-0.6 * curves[1].times[n]), 1e-6,
                           1e-5, "k = 0.6", long(n));
  }
};

QTEST_MAIN(TestObservableCurves)
#include "tst_observable_curves.moc"
