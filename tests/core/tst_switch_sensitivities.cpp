// SPDX-License-Identifier: MIT
// Sensitivities across a switch of the right-hand side at a time that depends on a parameter
// (issue 16: FD disagreed with odeSD on Brannmark's insulin_time_1, and the direct methods were
// the wrong ones). x' = a while t < τ, b after, x(0) = 0:
//   x = a·t (t < τ),  x = a·τ + b·(t − τ) (t ≥ τ),
//   ∂x/∂τ = a − b, ∂x/∂a = τ, ∂x/∂b = t − τ after the switch (0, t, 0 before it).
// ∂f/∂τ of the piecewise is 0 almost everywhere, so the sensitivity equations alone give
// ∂x/∂τ = 0; the task adds the jump (f(τ⁻) − f(τ⁺))·∂τ/∂p at the switch. Every direct method and
// finite differences must give the closed form.
#include <QtTest/QtTest>

#include <array>
#include <string>
#include <vector>

#include "core/symbolic/expression.h"
#include "core/tasks/sensitivities_task.h"
#include "support/hand_built_models.h"
#include "support/numeric_compare.h"

using namespace sensode;
using namespace sensode::testing;
using sensode::symbolic::Expr;
using sensode::symbolic::Op;

namespace {

constexpr double kA = 2, kB = 0.5, kTau = 1.5;

HandBuiltModel stepModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr a = b.param("a", kA), bb = b.param("b", kB), tau = b.param("tau", kTau);
  const Expr x = b.state("x", 0.0);
  const std::array<Expr, 2> pieces{a, e.binary(Op::Lt, b.t(), tau)};
  b.rhs(x, e.piecewise(pieces, bb));
  return b.compile();
}

}  // namespace

class TestSwitchSensitivities : public QObject {
  Q_OBJECT

 private slots:
  void jumpAtTheSwitch_data() {
    QTest::addColumn<int>("method");
    QTest::newRow("odesd (default, with fallbacks)") << static_cast<int>(tasks::SensitivityMethod::OdeSd);
    QTest::newRow("cvodes") << static_cast<int>(tasks::SensitivityMethod::Cvodes);
    QTest::newRow("fd") << static_cast<int>(tasks::SensitivityMethod::FiniteDifferences);
  }
  void jumpAtTheSwitch() {
    QFETCH(int, method);
    tasks::SensitivityProblem problem;
    problem.model = stepModel();
    problem.times = {0, 0.5, 1.5, 2, 3};  // one output time exactly at τ
    tasks::SensitivityOptions options;
    options.method = static_cast<tasks::SensitivityMethod>(method);
    options.integrator.rtol = 1e-8;
    const tasks::SensitivityResult r = tasks::runSensitivities(problem, options);
    QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
    QVERIFY2(r.stats.fallbacks.empty(),
             r.stats.fallbacks.empty() ? "" : r.stats.fallbacks.front().c_str());
    QCOMPARE(r.parameterIds, (std::vector<std::string>{"a", "b", "tau"}));
    for (std::size_t i = 0; i < r.times.size(); ++i) {
      const double t = r.times[i];
      const bool after = t > kTau;
      const double x = after ? kA * kTau + kB * (t - kTau) : kA * t;
      SENSODE_EXPECT_CLOSE(r.states[i], x, 1e-9, 1e-7, "x", i);
      if (t == kTau) continue;  // a kink in τ: left and right derivatives differ there
      SENSODE_EXPECT_CLOSE(r.stateAt(i, 0, 0), after ? kTau : t, 1e-7, 1e-6, "dx/da", i);
      SENSODE_EXPECT_CLOSE(r.stateAt(i, 0, 1), after ? t - kTau : 0, 1e-7, 1e-6, "dx/db", i);
      SENSODE_EXPECT_CLOSE(r.stateAt(i, 0, 2), after ? kA - kB : 0, 1e-7, 1e-6, "dx/dtau", i);
    }
  }
};

QTEST_GUILESS_MAIN(TestSwitchSensitivities)
#include "tst_switch_sensitivities.moc"
