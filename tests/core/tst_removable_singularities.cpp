// SPDX-License-Identifier: MIT
// Removable singularities of the symbolic layer (issue 16): u^v·ln u, u·ln u and the
// derivatives of u^v at u = 0 evaluate to their limits (the guarded Op::PowLog) in the slow
// evaluator and the tapes, checked against finite differences on both sides of the parameter;
// genuinely infinite derivatives (d/du u^v at u = 0 for v < 1) stay infinite. Then the Hill
// exponent case end to end: ẋ = r^n with r = a·t starting at 0, whose sensitivities w.r.t. n
// are known in closed form, by CVODES forward, odeSD direct and finite differences.
#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/symbolic/compiled_model.h"
#include "core/symbolic/expression.h"
#include "core/symbolic/tape.h"
#include "core/tasks/sensitivities_task.h"
#include "support/hand_built_models.h"
#include "support/numeric_compare.h"

using namespace sensode;
using namespace sensode::symbolic;
using sensode::testing::SystemBuilder;

namespace {

// V·x^n/(K^n + x^n) over symbols (x, n), V = 2, K = 0.5: the Hill activation of issue 16.
struct Hill {
  ExprPool pool;
  Expr x = pool.symbol("x"), n = pool.symbol("n");
  Expr f = pool.div(pool.mul(pool.constant(2.0), pool.pow(x, n)),
                    pool.add(pool.pow(pool.constant(0.5), n), pool.pow(x, n)));
  double at(Expr e, double xv, double nv) const {
    const std::vector<double> v{xv, nv};
    return pool.evaluate(e, v);
  }
  // The same through a compiled tape (x a state, n a parameter).
  double taped(Expr e, double xv, double nv) const {
    TapeInputs in;
    in.x = {x};
    in.p = {n};
    const Expr roots[1] = {e};
    const Tape tape(pool, in, roots);
    double out = 0;
    tape.evaluate(0, &xv, &nv, &out);
    return out;
  }
};

}  // namespace

class TestRemovableSingularities : public QObject {
  Q_OBJECT

 private slots:
  void hillExponentDerivativeAtZero_data();
  void hillExponentDerivativeAtZero();
  void stateDerivativesAtZeroKeepTheirLimits();
  void productsWithLnTakeTheirLimit();
  void hillExponentSensitivities_data();
  void hillExponentSensitivities();
};

void TestRemovableSingularities::hillExponentDerivativeAtZero_data() {
  QTest::addColumn<double>("n");
  QTest::newRow("n = 0.5") << 0.5;
  QTest::newRow("n = 1.5") << 1.5;
  QTest::newRow("n = 2.5") << 2.5;
}

// ∂f/∂n = 2·x^n·ln x·K^n·(ln x − ln K)/(K^n + x^n)²-like terms, 0·(−∞) at x = 0 unguarded; its
// limit is 0, which is also what central differences in n (f ≡ 0 at x = 0 for every n) give.
// Away from 0 it is the ordinary derivative (differences in n agree to 1e-8).
void TestRemovableSingularities::hillExponentDerivativeAtZero() {
  QFETCH(double, n);
  Hill h;
  const Expr dfdn = h.pool.diff(h.f, h.n);
  const double hstep = 1e-5;
  for (const double x : {0.0, 1e-12, 1e-6, 1e-3, 0.3, 2.0}) {
    const double fd = (h.at(h.f, x, n + hstep) - h.at(h.f, x, n - hstep)) / (2 * hstep);
    const double slow = h.at(dfdn, x, n), tape = h.taped(dfdn, x, n);
    QVERIFY2(std::isfinite(slow) && std::isfinite(tape),
             qPrintable(QString("df/dn at x = %1: %2 / %3").arg(x).arg(slow).arg(tape)));
    QCOMPARE(tape, slow);
    SENSODE_EXPECT_CLOSE(slow, fd, 1e-9, 1e-6, "df/dn", 0);
  }
  QCOMPARE(h.at(dfdn, 0.0, n), 0.0);
  // The mixed second derivative (odeSD's ∂J/∂p): finite where x^(n−1) is, i.e. n > 1.
  const Expr dfdx = h.pool.diff(h.f, h.x);
  const Expr d2 = h.pool.diff(dfdx, h.n);
  if (n > 1) {
    for (const double x : {0.0, 1e-3, 0.3}) {
      const double fd = (h.at(dfdx, x, n + hstep) - h.at(dfdx, x, n - hstep)) / (2 * hstep);
      SENSODE_EXPECT_CLOSE(h.at(d2, x, n), fd, 1e-8, 1e-6, "d2f/dxdn", 0);
      QCOMPARE(h.taped(d2, x, n), h.at(d2, x, n));
    }
  }
}

// ∂f/∂x = 2·n·x^(n−1)·K^n/(K^n + x^n)²: 0 at x = 0 for n > 1 (the limit, matching one-sided
// differences in x), +∞ for n < 1 — genuinely infinite, left so for the integrators to handle.
void TestRemovableSingularities::stateDerivativesAtZeroKeepTheirLimits() {
  Hill h;
  const Expr dfdx = h.pool.diff(h.f, h.x);
  for (const double n : {1.5, 2.5}) {
    // f ~ x^n near 0, so the one-sided difference is ~x^(n−1): small at a small step.
    const double step = 1e-12;
    const double fd = (4 * h.at(h.f, step, n) - h.at(h.f, 2 * step, n) - 3 * h.at(h.f, 0, n)) /
                      (2 * step);
    QCOMPARE(h.at(dfdx, 0.0, n), 0.0);
    QVERIFY2(std::abs(fd) < 1e-4, qPrintable(QString("one-sided df/dx at 0: %1").arg(fd)));
  }
  QCOMPARE(h.at(dfdx, 0.0, 0.5), std::numeric_limits<double>::infinity());
  QCOMPARE(h.taped(dfdx, 0.0, 0.5), std::numeric_limits<double>::infinity());
}

// u·ln u, u^1.5·ln²u and x^n·ln x as the model writes them: 0 at u = 0 (their limits), the
// plain products elsewhere; their derivatives where the limit is finite.
void TestRemovableSingularities::productsWithLnTakeTheirLimit() {
  ExprPool pool;
  const Expr u = pool.symbol("u"), v = pool.symbol("v");
  const Expr lnU = pool.unary(Op::Log, u);
  const Expr uLnU = pool.mul(u, lnU);
  const Expr u15Ln2 = pool.mul(std::vector<Expr>{pool.pow(u, pool.constant(1.5)), lnU, lnU});
  const Expr uvLnU = pool.div(pool.mul(pool.pow(u, v), lnU), pool.add(pool.one(), v));
  QCOMPARE(pool.op(uLnU), Op::PowLog);
  QCOMPARE(pool.op(u15Ln2), Op::PowLog);
  auto at = [&](Expr e, double uv, double vv) {
    const std::vector<double> s{uv, vv};
    return pool.evaluate(e, s);
  };
  for (const Expr e : {uLnU, u15Ln2, uvLnU}) QCOMPARE(at(e, 0.0, 0.7), 0.0);
  SENSODE_EXPECT_CLOSE(at(uLnU, 0.3, 0), 0.3 * std::log(0.3), 1e-15, 0, "u ln u", 0);
  SENSODE_EXPECT_CLOSE(at(u15Ln2, 0.3, 0), std::pow(0.3, 1.5) * std::log(0.3) * std::log(0.3),
                       1e-15, 0, "u^1.5 ln^2 u", 0);
  SENSODE_EXPECT_CLOSE(at(uvLnU, 0.3, 0.7), std::pow(0.3, 0.7) * std::log(0.3) / 1.7, 1e-15, 0,
                       "u^v ln u / (1 + v)", 0);
  // d/du (u^1.5·ln²u) = 1.5·u^0.5·ln²u + 2·u^0.5·ln u → 0 at u = 0; d/du (u ln u) = ln u + 1 →
  // −∞ (genuinely infinite); d/dv (u^v ln u) = u^v ln²u → 0.
  const Expr d1 = pool.diff(u15Ln2, u), d2 = pool.diff(uLnU, u), d3 = pool.diff(uvLnU, v);
  QCOMPARE(at(d1, 0.0, 0), 0.0);
  QCOMPARE(at(d2, 0.0, 0), -std::numeric_limits<double>::infinity());
  QCOMPARE(at(d3, 0.0, 0.7), 0.0);
  const double h = 1e-6;
  for (const double uv : {1e-3, 0.3}) {
    SENSODE_EXPECT_CLOSE(at(d1, uv, 0), (at(u15Ln2, uv + h * uv, 0) - at(u15Ln2, uv - h * uv, 0)) /
                                            (2 * h * uv),
                         1e-10, 1e-6, "d/du u^1.5 ln^2 u", 0);
    const double fdV = (at(uvLnU, uv, 0.7 + h) - at(uvLnU, uv, 0.7 - h)) / (2 * h);
    SENSODE_EXPECT_CLOSE(at(d3, uv, 0.7), fdV, 1e-10, 1e-6, "d/dv u^v ln u/(1+v)", 0);
  }
}

void TestRemovableSingularities::hillExponentSensitivities_data() {
  QTest::addColumn<double>("n");
  QTest::newRow("n = 0.5") << 0.5;
  QTest::newRow("n = 1.5") << 1.5;
  QTest::newRow("n = 2.5") << 2.5;
}

// ṙ = a, ẋ = r^n, r(0) = x(0) = 0: r = a·t, x = a^n·t^(n+1)/(n+1), so
// ∂x/∂n = x·(ln(a·t) − 1/(n+1)) and ∂x/∂a = n·x/a. At t = 0 the right-hand side's ∂f/∂n is
// r^n·ln r at r = 0, which was 0·(−∞) = NaN and stopped CVODES and odeSD at t = 0.
void TestRemovableSingularities::hillExponentSensitivities() {
  QFETCH(double, n);
  const double a = 2.0;
  SystemBuilder b;
  auto& e = b.e();
  const Expr pa = b.param("a", a), pn = b.param("n", n);
  const Expr r = b.state("r", 0.0), x = b.state("x", 0.0);
  b.rhs(r, pa);
  b.rhs(x, e.pow(r, pn));
  const auto model = b.compile();
  // The symbolic ∂f/∂n at the initial state: finite and 0.
  {
    const auto& pattern = model->paramJacobianPattern();
    std::vector<double> fp(static_cast<std::size_t>(pattern.nnz()));
    const double x0[2] = {0, 0}, p[2] = {a, n};
    model->paramJacobian(0, x0, p, fp.data());
    for (const double v : fp) QVERIFY2(std::isfinite(v), "non-finite df/dp at t = 0");
  }
  const std::vector<double> times{0.5, 1.0, 2.0};
  auto exactX = [&](double t) { return std::pow(a, n) * std::pow(t, n + 1) / (n + 1); };
  for (const auto method : {tasks::SensitivityMethod::Cvodes, tasks::SensitivityMethod::OdeSd,
                            tasks::SensitivityMethod::FiniteDifferences}) {
    tasks::SensitivityProblem problem;
    problem.model = model;
    problem.times = times;
    tasks::SensitivityOptions options;
    options.method = method;
    options.integrator.rtol = 1e-10;
    options.integrator.atol = 1e-12;
    const tasks::SensitivityResult res = tasks::runSensitivities(problem, options);
    const QString label = QString("%1, n = %2").arg(tasks::toString(method)).arg(n);
    const bool infiniteDerivative =
        (method == tasks::SensitivityMethod::Cvodes && n < 1) ||
        (method == tasks::SensitivityMethod::OdeSd && n < 2);
    if (res.termination != tasks::Termination::Success && infiniteDerivative &&
        (res.message.find("non-finite") != std::string::npos ||
         res.message.find("no finite derivative") != std::string::npos)) {
      // ∂f/∂r = n·r^(n−1) is +∞ at r = 0 for n < 1, and odeSD's ∂²f/∂r² = n(n−1)·r^(n−2) for
      // n < 2 (genuinely): the integrators' side of issue 16, not a symbolic one.
      qWarning("%s: %s (the infinite Jacobian at r = 0 is the integrators' to survive)",
               qPrintable(label), res.message.c_str());
      continue;
    }
    QVERIFY2(res.termination == tasks::Termination::Success,
             qPrintable(label + ": " + QString::fromStdString(res.message)));
    const std::size_t ix = 1, ia = 0, in = 1;
    for (std::size_t it = 0; it < times.size(); ++it) {
      const double t = times[it], xv = exactX(t);
      const double dn = xv * (std::log(a * t) - 1 / (n + 1)), da = n * xv / a;
      SENSODE_EXPECT_CLOSE(res.stateAt(it, ix, in), dn, 1e-8, 1e-6, qPrintable(label + " dx/dn"),
                           it);
      SENSODE_EXPECT_CLOSE(res.stateAt(it, ix, ia), da, 1e-8, 1e-6, qPrintable(label + " dx/da"),
                           it);
    }
  }
}

QTEST_APPLESS_MAIN(TestRemovableSingularities)
#include "tst_removable_singularities.moc"
