// SPDX-License-Identifier: MIT
// odeSD's step control without libm (core/integrators/step_arithmetic.h): inverseRoot against
// std::pow and nextUp against std::nextafter, over the ranges the step control uses and at the
// edges (subnormals, zero, infinities, NaN).
#include <QtTest/QtTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "core/integrators/step_arithmetic.h"

using sensode::integrators::inverseRoot;
using sensode::integrators::nextUp;

namespace {

// Distance in units in the last place between two positive doubles.
std::int64_t ulps(double a, double b) {
  const std::int64_t d = std::bit_cast<std::int64_t>(a) - std::bit_cast<std::int64_t>(b);
  return d < 0 ? -d : d;
}

}  // namespace

class TestStepArithmetic : public QObject {
  Q_OBJECT
 private slots:
  void inverseRootIsAccurate_data() {
    QTest::addColumn<int>("q");
    for (int q : {1, 2, 3, 4, 5, 6}) QTest::addRow("q=%d", q) << q;
  }

  // Within 2 ulps of x^(−1/q) on log-uniform x in [1e-30, 1e30], at powers of two and at 1. The
  // reference is long double's pow: double's pow(x, −1.0 / q) takes the power of the rounded
  // exponent, −1.0 / 3 = −1/3 + 1.9e-17, which moves x^(−1/3) by 1.3e-15 (6 ulps) at x = 1e30.
  void inverseRootIsAccurate() {
    QFETCH(int, q);
    std::mt19937_64 rng(20261129);
    std::uniform_real_distribution<double> exponent(-30, 30);
    std::int64_t worst = 0;
    double worstX = 0;
    auto check = [&](double x) {
      const double exact = static_cast<double>(std::pow(static_cast<long double>(x), -1.0L / q));
      const std::int64_t d = ulps(inverseRoot(x, q), exact);
      if (d > worst) {
        worst = d;
        worstX = x;
      }
    };
    for (int i = 0; i < 200000; ++i) check(std::pow(10.0, exponent(rng)));
    for (int e = -99; e <= 99; ++e) check(std::ldexp(1.0, e));
    check(1.0);
    check(1e-30);
    check(1e30);
    QVERIFY2(worst <= 2, qPrintable(QString("%1 ulps at x = %2").arg(worst).arg(worstX, 0, 'g', 17)));
  }

  // Outside [1e-30, 1e30] the argument is clamped: the result is finite and positive, and the
  // step control's clamp to [0.2, 1e4] then gives what it gives for the true power.
  void inverseRootClampsItsArgument() {
    for (int q : {3, 5}) {
      for (double x : {0.0, std::numeric_limits<double>::denorm_min(), 1e-300, 1e300,
                       std::numeric_limits<double>::max()}) {
        const double y = inverseRoot(x, q);
        QVERIFY(std::isfinite(y) && y > 0);
        const double clamped = std::clamp(x, 1e-30, 1e30);
        QCOMPARE(y, inverseRoot(clamped, q));
      }
    }
  }

  void nextUpMatchesNextafter() {
    const double inf = std::numeric_limits<double>::infinity();
    for (double t : {0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300, 3.7e5, -2.5e-7,
                     std::numeric_limits<double>::denorm_min(),
                     -std::numeric_limits<double>::denorm_min(),
                     std::numeric_limits<double>::min(), -std::numeric_limits<double>::min(),
                     std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(),
                     inf, -inf}) {
      const double expected = std::nextafter(t, inf);
      QVERIFY2(std::bit_cast<std::uint64_t>(nextUp(t)) == std::bit_cast<std::uint64_t>(expected) ||
                   (nextUp(t) == 0 && expected == 0),
               qPrintable(QString("t = %1").arg(t, 0, 'g', 17)));
    }
    QVERIFY(std::isnan(nextUp(std::numeric_limits<double>::quiet_NaN())));
  }
};

QTEST_GUILESS_MAIN(TestStepArithmetic)
#include "tst_step_arithmetic.moc"
