// SPDX-License-Identifier: MIT
// The conservation-reduced system (NUMERICS.md §8.2) built from an imported SBML model: the laws
// found, the totals as parameters, a non-singular reduced Jacobian where the full one is
// singular, and the same trajectory as the full system.
#include <QtTest/QtTest>

#include <Eigen/Dense>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/reduced_system.h"
#include "core/tasks/time_course_task.h"
#include "support/numeric_compare.h"

using namespace sensode;
using namespace sensode::symbolic;

namespace {

OdeSystem michaelisMenten() {
  return buildOdeSystem(model::importSbmlFile(std::string(SENSODE_TEST_DATA_DIR) +
                                              "/models/michaelis_menten.xml"));
}

Eigen::MatrixXd denseJacobian(const CompiledModel& m, const std::vector<double>& x,
                              const std::vector<double>& p) {
  const auto& pat = m.jacobianPattern();
  std::vector<double> v(static_cast<std::size_t>(pat.nnz()));
  m.jacobian(0, x.data(), p.data(), v.data());
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(m.nx(), m.nx());
  for (int c = 0; c < pat.cols; ++c)
    for (int k = pat.colPtr[c]; k < pat.colPtr[c + 1]; ++k) j(pat.rowIdx[k], c) = v[k];
  return j;
}

}  // namespace

class TestReducedSystem : public QObject {
  Q_OBJECT

 private slots:
  void findsTheMichaelisMentenMoieties();
  void reducedJacobianIsNonSingular();
  void reducedTrajectoryEqualsFullTrajectory();
};

void TestReducedSystem::findsTheMichaelisMentenMoieties() {
  const OdeSystem sys = michaelisMenten();
  const ConservationAnalysis a = analyzeConservation(sys);
  QCOMPARE(a.laws.count(), 2);
  QVERIFY(a.laws.exact);
  // Abundance order (S = 1 first, then E = 0.1) makes S and E the dependent species.
  QStringList laws;
  for (const auto& d : a.descriptions) laws << QString::fromStdString(d);
  laws.sort();
  QCOMPARE(laws, (QStringList{"E + C", "S + C + P"}));
  QCOMPARE(a.totalIds.size(), std::size_t{2});

  const OdeSystem reduced = reduceSystem(sys, a);
  QCOMPARE(reduced.numStates(), 2);
  QCOMPARE(reduced.numParams(), sys.numParams() + 2);
  // Totals at nominal values: E + C = 0.1, S + C + P = 1.
  const int te = reduced.findParam("total_E"), ts = reduced.findParam("total_S");
  QVERIFY(te >= 0 && ts >= 0);
  SENSODE_EXPECT_CLOSE(reduced.params[te].nominal, 0.1, 0, 1e-15, "total_E", 0);
  SENSODE_EXPECT_CLOSE(reduced.params[ts].nominal, 1.0, 0, 1e-15, "total_S", 0);
}

void TestReducedSystem::reducedJacobianIsNonSingular() {
  const OdeSystem sys = michaelisMenten();
  CompiledModel full(sys);
  CompiledModel reduced(reduceSystem(sys, analyzeConservation(sys)));
  const std::vector<double> x{0.05, 0.4, 0.05, 0.55};  // E, S, C, P
  const auto jFull = denseJacobian(full, x, full.nominalParameters());
  Eigen::FullPivLU<Eigen::MatrixXd> luFull(jFull);
  QCOMPARE(static_cast<int>(luFull.rank()), 2);  // two conservation laws: rank 4 − 2
  std::vector<double> xr;
  for (const auto& s : reduced.system().states) xr.push_back(x[sys.findState(s.id)]);
  const auto jr = denseJacobian(reduced, xr, reduced.nominalParameters());
  Eigen::FullPivLU<Eigen::MatrixXd> lu(jr);
  QCOMPARE(static_cast<int>(lu.rank()), 2);
}

void TestReducedSystem::reducedTrajectoryEqualsFullTrajectory() {
  const OdeSystem sys = michaelisMenten();
  auto full = std::make_shared<CompiledModel>(sys);
  auto reduced = std::make_shared<CompiledModel>(reduceSystem(sys, analyzeConservation(sys)));
  tasks::TimeCourseOptions opt;
  opt.method = integrators::Method::Cvodes;
  opt.integrator.rtol = 1e-10;
  opt.integrator.atol = 1e-14;
  tasks::TimeCourseProblem prob;
  prob.times = {0, 1, 10};
  prob.outputs = {"E", "S", "C", "P"};
  prob.model = full;
  const auto a = tasks::runTimeCourse(prob, opt);
  prob.model = reduced;
  const auto b = tasks::runTimeCourse(prob, opt);
  QCOMPARE(a.termination, tasks::Termination::Success);
  QCOMPARE(b.termination, tasks::Termination::Success);
  // NUMERICS.md §11 reference at t = 10 for both.
  const double ref[4] = {4.1636668606e-2, 1.4136928979e-1, 5.8363331394e-2, 8.0026737881e-1};
  for (int i = 0; i < 4; ++i) {
    SENSODE_EXPECT_CLOSE(a.at(2, i), ref[i], 1e-10, 1e-7, "full x(10)", i);
    SENSODE_EXPECT_CLOSE(b.at(2, i), ref[i], 1e-10, 1e-7, "reduced x(10)", i);
    SENSODE_EXPECT_CLOSE(b.at(1, i), a.at(1, i), 1e-12, 1e-8, "x(1) reduced vs full", i);
  }
}

QTEST_GUILESS_MAIN(TestReducedSystem)
#include "tst_reduced_system.moc"
