// SPDX-License-Identifier: MIT
// odeSD's cheaper stiff steps (issue 13): the x-only predictor of degree stiffPredictorDegree
// (exact on polynomials of that degree at unequal steps), the dense output's W-filtered test of
// the Hermite value (denseTolerance) and the looser Newton tolerance. Each must leave the answer
// where the former scheme (quadratic predictor, raw-residual test only, κ_N = 0.1) put it, with
// no more LUs and about as many f evaluations or fewer, on the NUMERICS.md §11 catalogue models.
#include <QtTest/QtTest>

#include <cmath>
#include <vector>

#include "support/odesd_fixtures.h"

namespace {

OdeSdOptions formerScheme() {
  OdeSdOptions sd;
  sd.stiffPredictorDegree = 2;
  sd.denseTolerance = 0;  // the filtered test then accepts only exact Hermite values
  sd.newtonTolerance = 0.1;
  return sd;
}

std::vector<double> outputTimes(double T, int count) {
  std::vector<double> times;
  for (int i = 1; i <= count; ++i) times.push_back(T * i / count);
  return times;
}

// max over outputs and states of |a − b| / (|b| + floor), floor = 1e-6 · max |b| per state.
double maxDifference(const std::vector<std::vector<double>>& a,
                     const std::vector<std::vector<double>>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < b[0].size(); ++i) {
    double scale = 0;
    for (const auto& row : b) scale = std::max(scale, std::abs(row[i]));
    for (std::size_t k = 0; k < b.size(); ++k) {
      worst = std::max(worst, std::abs(a[k][i] - b[k][i]) / (std::abs(b[k][i]) + 1e-6 * scale));
    }
  }
  return worst;
}

}  // namespace

class TestOdeSdPredictor : public QObject {
  Q_OBJECT

 private slots:
  void extrapolationIsExactOnPolynomials() {
    const double past[4] = {0.2, 0.1, 0.25, 0.15};  // h_{n−1}, h_{n−2}, …
    const double h = 0.3;
    double w[5];
    integrators::odesd::extrapolationWeights(h, past, 2, w);
    const auto q = integrators::odesd::quadraticPredictor(h, past[0], past[1]);
    SENSODE_EXPECT_CLOSE(w[0], q.x, 1e-14, 1e-14, "degree 2 = quadraticPredictor", 0);
    SENSODE_EXPECT_CLOSE(w[1], q.xm1, 1e-14, 1e-14, "degree 2 = quadraticPredictor", 1);
    SENSODE_EXPECT_CLOSE(w[2], q.xm2, 1e-14, 1e-14, "degree 2 = quadraticPredictor", 2);
    auto poly = [](double t, int deg) {  // 1 + 2t − 3t² + 0.5t³ − 4t⁴, cut at deg
      const double c[5] = {1, 2, -3, 0.5, -4};
      double v = 0;
      for (int k = deg; k >= 0; --k) v = v * t + c[k];
      return v;
    };
    for (int deg = 1; deg <= 4; ++deg) {
      integrators::odesd::extrapolationWeights(h, past, deg, w);
      double tau = 0, v = 0;
      for (int j = 0; j <= deg; ++j) {
        v += w[j] * poly(tau, deg);
        if (j < deg) tau -= past[j];
      }
      SENSODE_EXPECT_CLOSE(v, poly(h, deg), 1e-12, 1e-12, "extrapolation of degree", deg);
    }
  }

  void invalidOptions() {
    const auto model = decayModel();
    std::vector<double> x{2.0};
    for (int deg : {1, 5}) {
      OdeSdOptions sd;
      sd.stiffPredictorDegree = deg;
      OdeSdIntegrator integrator;
      integrator.setOdeSdOptions(sd);
      QVERIFY_THROWS_EXCEPTION(InvalidOptions,
                               integrator.initialize(model, IntegratorOptions{}, 0.0, x, {0.7}));
    }
    OdeSdOptions sd;
    sd.denseTolerance = -1;
    OdeSdIntegrator integrator;
    integrator.setOdeSdOptions(sd);
    QVERIFY_THROWS_EXCEPTION(InvalidOptions,
                             integrator.initialize(model, IntegratorOptions{}, 0.0, x, {0.7}));
  }

  // Stiff catalogue models with many output times (dense sub-steps) at rtol 1e-6: the default
  // scheme against the former one and against a tight run of the former one.
  void matchesFormerScheme_data() {
    QTest::addColumn<int>("problem");
    QTest::newRow("Michaelis-Menten") << 0;
    QTest::newRow("Robertson") << 1;
    QTest::newRow("repressilator") << 2;
    QTest::newRow("Linear2") << 3;
  }

  void matchesFormerScheme() {
    QFETCH(int, problem);
    const Reference ref = catalogue()[static_cast<std::size_t>(problem)];
    const std::vector<double> times = outputTimes(ref.T, 100);
    const Run now = runOdeSd(ref.make(), tolerances(1e-6), times);
    const Run before = runOdeSd(ref.make(), tolerances(1e-6), times, formerScheme());
    const Run tight = runOdeSd(ref.make(), tolerances(1e-10, 1e-16), times, formerScheme());
    const double errNow = maxDifference(now.x, tight.x);
    const double errBefore = maxDifference(before.x, tight.x);
    qInfo("%s: error %.3g (former %.3g); Newton %ld (%ld), f %ld (%ld), LU %ld (%ld), steps %ld "
          "(%ld)",
          ref.name, errNow, errBefore, now.stats.newtonIterations, before.stats.newtonIterations,
          now.stats.rhsEvals, before.stats.rhsEvals, now.stats.luFactorizations,
          before.stats.luFactorizations, now.stats.steps, before.stats.steps);
    // Within a factor 3 of the former error or below the tolerance itself.
    QVERIFY2(errNow <= std::max(3 * errBefore, 1e-6), qPrintable(QString::number(errNow)));
    // Cheaper or about as cheap: with 100 output points over 60–80 steps the dense sub-steps
    // dominate Michaelis-Menten and Robertson, where f evaluations rose 1–4 % (Newton 601 → 610,
    // 752 → 787) while LUs fell; the repressilator and Linear2 save 5–45 %.
    QVERIFY(now.stats.rhsEvals <= before.stats.rhsEvals * 1.1);
    QVERIFY(now.stats.luFactorizations <= before.stats.luFactorizations);
  }
};

QTEST_GUILESS_MAIN(TestOdeSdPredictor)
#include "tst_odesd_predictor.moc"
