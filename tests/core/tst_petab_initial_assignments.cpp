// SPDX-License-Identifier: MIT
// Condition tables that override targets of SBML initial assignments (PEtab: the table wins),
// against the closed form. tests/data/petab/initial_assignment_override: d[S]/dt = −k[S] in a
// compartment `cell`, with initial assignments u = a, [S](0) = u and cell = 2, and three
// conditions — `keep` (all NaN or empty: every assignment holds, S0 = u = a, cell = 2), `set_u`
// (u = 7, cell = 4, S empty: S0 = u = 7 through the assignment the condition keeps) and `set_S`
// (S0 = 5, u = a, cell = 2). Before core/petab/initial_assignment_overrides.h the reader refused
// the table's S, u and cell columns.
#include <QtTest/QtTest>

#include <array>
#include <cmath>
#include <numbers>
#include <string>

#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"
#include "support/gradient_method_rows.h"
#include "support/numeric_compare.h"

using namespace sensode::petab;

namespace {

constexpr double kA = 3, kK = 0.5, kSigma = 0.1;

struct ConditionValues {
  const char* id;
  double s0, dS0da, u, duda, cell;
};

const std::array<ConditionValues, 3> kConditions{{
    {"keep", kA, 1, kA, 1, 2},
    {"set_u", 7, 0, 7, 0, 4},
    {"set_S", 5, 0, kA, 1, 2},
}};

struct Closed {
  double objective = 0;
  double gradient[2] = {0, 0};  // a, k
};

// The objective over the measurement table as written (same data in every condition).
Closed closedForm() {
  struct Datum {
    int observable;  // 0: S, 1: u, 2: S·cell
    double value, time;
  };
  const Datum data[] = {{0, 2.5, 0.5}, {0, 1.1, 2}, {1, 4, 1}, {2, 6, 1}};
  Closed c;
  for (const ConditionValues& cv : kConditions)
    for (const Datum& d : data) {
      const double e = std::exp(-kK * d.time);
      double y = 0, dyda = 0, dydk = 0;
      switch (d.observable) {
        case 0:
          y = cv.s0 * e;
          dyda = cv.dS0da * e;
          dydk = -d.time * y;
          break;
        case 1:
          y = cv.u;
          dyda = cv.duda;
          break;
        default:
          y = cv.s0 * cv.cell * e;
          dyda = cv.dS0da * cv.cell * e;
          dydk = -d.time * y;
      }
      const double r = (d.value - y) / kSigma;
      c.objective += 0.5 * std::log(2 * std::numbers::pi * kSigma * kSigma) + 0.5 * r * r;
      c.gradient[0] += -r / kSigma * dyda;
      c.gradient[1] += -r / kSigma * dydk;
    }
  return c;
}

Problem load() {
  return loadProblem(SENSODE_TEST_DATA_DIR
                     "/petab/initial_assignment_override/initial_assignment_override.yaml");
}

}  // namespace

class TestPetabInitialAssignments : public QObject {
  Q_OBJECT

 private slots:
  // The targets became model parameters of their kinds, at the assignments' nominal values.
  void targetsBecomeParameters() {
    const Problem p = load();
    const auto& sys = p.model->system();
    const int u = sys.findParam("u"), s = sys.findParam("S"), cell = sys.findParam("cell");
    QVERIFY(u >= 0 && s >= 0 && cell >= 0);
    QCOMPARE(sys.params[static_cast<std::size_t>(s)].kind,
             sensode::symbolic::ParamKind::SpeciesInitial);
    QCOMPARE(sys.params[static_cast<std::size_t>(cell)].kind,
             sensode::symbolic::ParamKind::CompartmentSize);
    QCOMPARE(sys.params[static_cast<std::size_t>(u)].nominal, kA);
    QCOMPARE(sys.params[static_cast<std::size_t>(s)].nominal, kA);
    QCOMPARE(sys.params[static_cast<std::size_t>(cell)].nominal, 2.0);
    QCOMPARE(p.initialAssignmentDefaults.size(), std::size_t{3});
    // u before S: S's default is u.
    int posU = -1, posS = -1;
    for (std::size_t i = 0; i < p.initialAssignmentDefaults.size(); ++i) {
      if (p.initialAssignmentDefaults[i].param == u) posU = static_cast<int>(i);
      if (p.initialAssignmentDefaults[i].param == s) posS = static_cast<int>(i);
    }
    QVERIFY(posU >= 0 && posU < posS);
    // The hidden parameters that carried the assignments are not outputs.
    for (const auto& o : sys.outputs) QVERIFY2(o.id.rfind("petab_", 0) != 0, o.id.c_str());
  }

  void objectiveAndGradientsMatchClosedForm_data() { sensode::test::gradientMethodRows(); }
  void objectiveAndGradientsMatchClosedForm() {
    QFETCH(int, method);
    QFETCH(bool, odesd);
    QFETCH(double, rtol);
    const Problem p = load();
    ObjectiveOptions o;
    if (odesd) o.forwardIntegrator = sensode::integrators::Method::OdeSd;
    const ObjectiveResult r = evaluateObjective(p, nominalScaledParameters(p),
                                                static_cast<GradientMethod>(method), o);
    const Closed c = closedForm();
    QVERIFY2(sensode::test::withinTolerance(r.objective, c.objective, 0, 1e-8),
             sensode::test::closeMessage(r.objective, c.objective, 0, 1e-8, "objective", 0).c_str());
    QCOMPARE(r.gradient.size(), std::size_t{2});
    const double scale = std::max(std::abs(c.gradient[0]), std::abs(c.gradient[1]));
    for (int i = 0; i < 2; ++i)
      QVERIFY2(sensode::test::withinTolerance(r.gradient[static_cast<std::size_t>(i)],
                                              c.gradient[i], rtol * scale, 0),
               sensode::test::closeMessage(r.gradient[static_cast<std::size_t>(i)], c.gradient[i],
                                           rtol * scale, 0, "gradient (a, k)", i)
                   .c_str());
  }
};

QTEST_GUILESS_MAIN(TestPetabInitialAssignments)
#include "tst_petab_initial_assignments.moc"
