// SPDX-License-Identifier: MIT
// Powers of one base whose exponents differ by integers (core/symbolic/power_families.h): a tape
// computes the highest by pow() and the others by dividing it by the base. Checked against
// the slow evaluator (one std::pow per node) on the powers a Hill term and its derivatives bring,
// over ordinary, zero, subnormal, huge, negative and non-finite bases and integer, fractional
// and negative exponents: within rounding everywhere, and exactly pow()'s value wherever a
// product could differ from it by more (a zero, subnormal or non-finite base or power).
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/symbolic/expression.h"
#include "core/symbolic/power_families.h"
#include "core/symbolic/tape.h"

using namespace sensode::symbolic;

namespace {

// Count of `needle` in `text`.
int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

// Equal, both NaN, or within `ulps` units in the last place of the larger.
bool close(double a, double b, double ulps) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;
  if (std::isinf(a) || std::isinf(b)) return false;
  const double scale = std::max(std::abs(a), std::abs(b));
  return std::abs(a - b) <= ulps * std::numeric_limits<double>::epsilon() * scale;
}

// x^n, x^(n−1), x^(n−2), x^(n−3) and the Hill term 2x^n/(0.5^n + x^n) with its first three
// x-derivatives, over x (a state) and n (a parameter).
struct HillPowers {
  ExprPool pool;
  Expr x = pool.symbol("x"), n = pool.symbol("n");
  std::vector<Expr> powers, derivatives;
  HillPowers() {
    for (int k = 0; k <= 3; ++k) powers.push_back(pool.pow(x, pool.sub(n, pool.constant(k))));
    Expr f = pool.div(pool.mul(pool.constant(2.0), pool.pow(x, n)),
                      pool.add(pool.pow(pool.constant(0.5), n), pool.pow(x, n)));
    for (int k = 0; k <= 3; ++k, f = pool.diff(f, x)) derivatives.push_back(f);
  }
  Tape tape(const std::vector<Expr>& roots) const {
    TapeInputs in;
    in.x = {x};
    in.p = {n};
    return Tape(pool, in, roots);
  }
  double slow(Expr e, double xv, double nv) const {
    const std::vector<double> v{xv, nv};
    return pool.evaluate(e, v);
  }
};

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();
const std::vector<double> kBases = {0.0, -0.0, 4e-310, 1e-3, 0.7, 1.0, 3.5, 1e200,
                                    -2.0, -0.3, kInf, -kInf, kNan};
const std::vector<double> kExponents = {0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, -1.0, 0.0, 7.25};

}  // namespace

class TestPowerFamilies : public QObject {
  Q_OBJECT

 private slots:
  void familiesAreFound();
  void membersMatchPow();
  void hillDerivativesMatchTheSlowEvaluator();
  void powStepFallsBackToPow();
};

// The four powers of x form one family (anchor x^n, the power f itself holds); 0.5^n and the
// powers of another base or of another exponent are not members.
void TestPowerFamilies::familiesAreFound() {
  HillPowers h;
  std::vector<Expr> nodes = h.powers;
  const Expr other = h.pool.pow(h.pool.constant(0.5), h.n);
  const Expr twice = h.pool.pow(h.x, h.pool.mul(h.pool.constant(2.0), h.n));
  nodes.push_back(other);
  nodes.push_back(twice);
  const auto steps = powerFamilies(h.pool, nodes);
  QCOMPARE(steps.size(), std::size_t{3});
  for (int k = 1; k <= 3; ++k) {
    const auto it = steps.find(h.powers[static_cast<std::size_t>(k)]);
    QVERIFY(it != steps.end());
    QCOMPARE(it->second.anchor, h.powers[0]);
    QCOMPARE(it->second.step, k);
  }
  QVERIFY(!steps.count(other) && !steps.count(twice) && !steps.count(h.powers[0]));
  // The tape evaluates one pow() and three steps: visible in the C it emits.
  const std::string c = h.tape(h.powers).emitC("powers");
  QCOMPARE(occurrences(c, "pow("), 1);
  QCOMPARE(occurrences(c, "sensode_powstep("), 3);
}

void TestPowerFamilies::membersMatchPow() {
  HillPowers h;
  const Tape tape = h.tape(h.powers);
  std::vector<double> out(h.powers.size());
  int exact = 0;
  for (double xv : kBases) {
    for (double nv : kExponents) {
      tape.evaluate(0, &xv, &nv, out.data());
      for (std::size_t k = 0; k < h.powers.size(); ++k) {
        const double ref = std::pow(xv, nv - static_cast<double>(k));
        QCOMPARE(h.slow(h.powers[k], xv, nv), ref);  // the slow evaluator is pow() itself
        // Up to three divisions' rounding on top of pow()'s own: within 4 ulp.
        QVERIFY2(close(out[k], ref, 4),
                 qPrintable(QString("x = %1, n = %2: x^(n-%3) tape %4, pow %5")
                                .arg(xv, 0, 'g', 17).arg(nv).arg(k)
                                .arg(out[k], 0, 'g', 17).arg(ref, 0, 'g', 17)));
        // Zero, subnormal and non-finite bases give pow()'s value exactly (signed zeros too).
        const bool special = !(std::isnormal(xv)) || !std::isnormal(ref);
        if (special && !std::isnan(ref)) {
          QVERIFY2(out[k] == ref && std::signbit(out[k]) == std::signbit(ref),
                   qPrintable(QString("x = %1, n = %2: x^(n-%3) tape %4, pow %5")
                                  .arg(xv, 0, 'g', 17).arg(nv).arg(k)
                                  .arg(out[k], 0, 'g', 17).arg(ref, 0, 'g', 17)));
          ++exact;
        }
      }
    }
  }
  QVERIFY(exact > 100);  // the special cases were exercised
}

// The Hill term and its derivatives (the shapes J, ẍ and J_J take): tape against the slow
// evaluator. The k-th derivative is a sum of terms of about 2·(n + k)^k / max(x, K)^k that
// cancel where x ≫ K (at x = 3.5, n = 2.5 the first derivative is 1/130 of its terms), so the
// bound is 64 ulp of that size: rounding of the powers carried through the sums, nothing more.
void TestPowerFamilies::hillDerivativesMatchTheSlowEvaluator() {
  HillPowers h;
  const Tape tape = h.tape(h.derivatives);
  std::vector<double> out(h.derivatives.size());
  for (double xv : {0.0, 1e-3, 0.2, 0.5, 0.7, 1.0, 3.5, 40.0}) {
    for (double nv : {1.0, 1.5, 2.0, 2.5, 3.0, 4.0}) {
      tape.evaluate(0, &xv, &nv, out.data());
      for (std::size_t k = 0; k < h.derivatives.size(); ++k) {
        const double ref = h.slow(h.derivatives[k], xv, nv);
        if (!std::isfinite(ref)) {  // e.g. x^(n−2) at x = 0 for n = 1: the same non-finite value
          QVERIFY(close(out[k], ref, 0));
          continue;
        }
        const double terms = 2 * std::pow(nv + static_cast<double>(k), static_cast<double>(k)) /
                             std::pow(std::max(xv, 0.5), static_cast<double>(k));
        const double bound = 64 * std::numeric_limits<double>::epsilon() *
                             std::max(std::abs(ref), terms);
        QVERIFY2(std::abs(out[k] - ref) <= bound,
                 qPrintable(QString("x = %1, n = %2: d%3f/dx%3 tape %4, slow %5, bound %6")
                                .arg(xv).arg(nv).arg(k)
                                .arg(out[k], 0, 'g', 17).arg(ref, 0, 'g', 17).arg(bound)));
      }
    }
  }
}

// The guard, directly: quotients only where every operand is a normal number.
void TestPowerFamilies::powStepFallsBackToPow() {
  // 0^n = 0 for n = 1, and 0/0 would be NaN where 0^(n−1) = 0^0 = 1.
  QCOMPARE(powStep(0.0, 0.0, 1, 0.0), 1.0);
  // A subnormal anchor (1e-310 = (1e-155)^2) has lost digits: pow() instead.
  QCOMPARE(powStep(1e-155, std::pow(1e-155, 2.0), 1, 1.0), 1e-155);
  // Ordinary values: the quotient.
  QCOMPARE(powStep(3.0, 81.0, 2, 2.0), 9.0);
  QVERIFY(std::isnan(powStep(-2.0, kNan, 1, 1.5)));
}

QTEST_APPLESS_MAIN(TestPowerFamilies)
#include "tst_power_families.moc"
