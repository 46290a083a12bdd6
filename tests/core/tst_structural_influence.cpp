// SPDX-License-Identifier: MIT
// Which states and outputs a parameter reaches (sensitivity/structural_influence.h): through
// chains of right-hand sides, initial values, outputs and piecewise conditions; no answer for
// models that couple quantities outside the right-hand sides (events).
#include <QtTest/QtTest>

#include <vector>

#include "core/sensitivity/structural_influence.h"
#include "support/hand_built_models.h"

using namespace sensode;
using sensode::symbolic::Expr;
using sensode::testing::SystemBuilder;

class TestStructuralInfluence : public QObject {
  Q_OBJECT

 private slots:
  void chainsConditionsAndInitialValues();
  void noAnswerWithEvents();
};

namespace {

// u̇ = −k·u,  v̇ = u − v,  w = piecewise(1, t < tau, 0) − w,  z(0) = z0, ż = 0.
struct Chain {
  SystemBuilder b;
  Chain() {
    auto& e = b.e();
    const Expr k = b.param("k", 0.5), tau = b.param("tau", 2.0), z0 = b.param("z0", 3.0);
    const Expr u = b.state("u", 1.0), v = b.state("v", 0.0), w = b.state("w", 0.0);
    const Expr z = b.state("z", z0);
    b.rhs(u, e.neg(e.mul(k, u)));
    b.rhs(v, e.sub(u, v));
    const Expr pieces[] = {b.c(1), e.binary(symbolic::Op::Lt, b.t(), tau)};
    b.rhs(w, e.sub(e.piecewise(pieces, b.c(0)), w));
    b.rhs(z, b.c(0));
  }
};

}  // namespace

void TestStructuralInfluence::chainsConditionsAndInitialValues() {
  Chain chain;
  const auto model = chain.b.compile();
  const symbolic::OdeSystem& system = model->system();
  // Outputs: v's value and z's amount (the builder makes one output per state; the rows are
  // CompiledModel::outputs()': values, then amounts, then concentrations).
  const std::size_t ny = system.outputs.size();
  const std::vector<std::size_t> outputRows{static_cast<std::size_t>(system.findOutput("v")),
                                            static_cast<std::size_t>(system.findOutput("z")) + ny};
  const std::vector<int> params{system.findParam("k"), system.findParam("tau"),
                                system.findParam("z0")};
  const auto reached = sensitivity::structuralInfluence(system, params, outputRows);
  QVERIFY(reached.has_value());
  //                        u  v  w  z  out v, out z
  const std::vector<char> k{1, 1, 0, 0, 1, 0};      // u, and v through u
  const std::vector<char> tau{0, 0, 1, 0, 0, 0};    // only in w's condition
  const std::vector<char> z0{0, 0, 0, 1, 0, 1};     // z's initial value
  QCOMPARE((*reached)[0], k);
  QCOMPARE((*reached)[1], tau);
  QCOMPARE((*reached)[2], z0);
}

void TestStructuralInfluence::noAnswerWithEvents() {
  Chain chain;
  auto model = chain.b.compile();
  symbolic::OdeSystem system = model->system();
  symbolic::EventDef event;
  event.id = "reset";
  event.trigger = system.pool->binary(symbolic::Op::Gt, system.time, system.pool->constant(1));
  event.assignments.push_back({3, system.pool->constant(1), system.pool->constant(1)});
  system.events.push_back(event);
  QVERIFY(!sensitivity::structuralInfluence(system, {0}, {}).has_value());
}

QTEST_APPLESS_MAIN(TestStructuralInfluence)
#include "tst_structural_influence.moc"
