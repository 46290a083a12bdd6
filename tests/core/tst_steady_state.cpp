// SPDX-License-Identifier: MIT
// Steady states (NUMERICS.md §8.3/§8.4): damped Newton on the conservation-reduced system with
// simulation fallback. Reversible Michaelis–Menten (measured steady state, Newton from the
// measured start points, the non-physical root rejected and recovered by the fallback), A ⇌ B
// (x₁* and dx₁*/dθ references of §8.5), models without a steady state (exponential and linear
// growth, the repressilator's oscillation), steady-state sensitivities against central finite
// differences, the task's output sensitivities, option validation, and the CLI.
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/model/sbml_importer.h"
#include "core/steadystate/steady_state_solver.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/steady_state_task.h"
#include "support/numeric_compare.h"

using sensode::steadystate::ConservedModel;
using sensode::steadystate::FoundBy;
using sensode::steadystate::SteadyStateMethod;
using sensode::steadystate::SteadyStateOptions;
using SensitivityMethod = sensode::steadystate::SteadyStateSensitivityMethod;
using sensode::steadystate::SteadyStateSolution;
using sensode::symbolic::CompiledModel;

using sensode::test::keepWorst;

namespace {

struct Reaction {
  std::string id;
  std::vector<std::string> reactants, products;
  std::string mathml;  // kinetic law content
};

// An SBML L3V2 model in one compartment of size 1 (concentrations = amounts).
std::string sbml(const std::string& id, const std::vector<std::pair<std::string, double>>& species,
                 const std::vector<std::pair<std::string, double>>& params,
                 const std::vector<Reaction>& reactions) {
  std::string s = R"(<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2">
  <model id=")" + id + R"(">
    <listOfCompartments><compartment id="c" size="1" constant="true"/></listOfCompartments>
    <listOfSpecies>)";
  for (const auto& [sid, v] : species)
    s += "<species id=\"" + sid + "\" compartment=\"c\" initialConcentration=\"" +
         std::to_string(v) +
         "\" hasOnlySubstanceUnits=\"false\" boundaryCondition=\"false\" constant=\"false\"/>";
  s += "</listOfSpecies><listOfParameters>";
  for (const auto& [pid, v] : params)
    s += "<parameter id=\"" + pid + "\" value=\"" + std::to_string(v) + "\" constant=\"true\"/>";
  s += "</listOfParameters><listOfReactions>";
  for (const Reaction& r : reactions) {
    s += "<reaction id=\"" + r.id + "\" reversible=\"true\">";
    if (!r.reactants.empty()) {
      s += "<listOfReactants>";
      for (const auto& x : r.reactants)
        s += "<speciesReference species=\"" + x + "\" stoichiometry=\"1\" constant=\"true\"/>";
      s += "</listOfReactants>";
    }
    if (!r.products.empty()) {
      s += "<listOfProducts>";
      for (const auto& x : r.products)
        s += "<speciesReference species=\"" + x + "\" stoichiometry=\"1\" constant=\"true\"/>";
      s += "</listOfProducts>";
    }
    s += "<kineticLaw><math xmlns=\"http://www.w3.org/1998/Math/MathML\">" + r.mathml +
         "</math></kineticLaw></reaction>";
  }
  s += "</listOfReactions></model></sbml>";
  return s;
}

std::string ci(const std::string& id) { return "<ci>" + id + "</ci>"; }
std::string times(const std::vector<std::string>& a) {
  std::string s = "<apply><times/>";
  for (const auto& x : a) s += x;
  return s + "</apply>";
}
std::string minus(const std::string& a, const std::string& b) {
  return "<apply><minus/>" + a + b + "</apply>";
}

// E + S ⇌ C ⇌ E + P, θ = (k1, k2, k3, k4, S0) = (2, 1, 1.5, 0.5, 2), E0 = 1 (NUMERICS §8.5).
std::string reversibleMm() {
  return sbml("revMM", {{"E", 1}, {"S", 2}, {"C", 0}, {"P", 0}},
              {{"k1", 2}, {"k2", 1}, {"k3", 1.5}, {"k4", 0.5}},
              {{"R1", {"E", "S"}, {"C"},
                minus(times({ci("k1"), ci("E"), ci("S")}), times({ci("k2"), ci("C")}))},
               {"R2", {"C"}, {"E", "P"},
                minus(times({ci("k3"), ci("C")}), times({ci("k4"), ci("E"), ci("P")}))}});
}
constexpr double kCStar = 0.3238250223, kPStar = 1.4367214094;

// A ⇌ B: ẋ₁ = −k₁x₁ + k₂x₂, x₁(0) = A (= a₀), x₂(0) = ½.
std::string aToB() {
  return sbml("AB", {{"A", 1.0}, {"B", 0.5}}, {{"k1", 0.8}, {"k2", 0.3}},
              {{"R", {"A"}, {"B"}, minus(times({ci("k1"), ci("A")}), times({ci("k2"), ci("B")}))}});
}

std::shared_ptr<const CompiledModel> compile(const std::string& xml, const std::string& name) {
  return std::make_shared<const CompiledModel>(
      sensode::symbolic::buildOdeSystem(sensode::model::importSbmlString(xml, name)));
}

int stateIndex(const CompiledModel& m, const std::string& id) {
  return m.system().findState(id);
}
int paramIndex(const CompiledModel& m, const std::string& id) {
  return m.system().findParam(id);
}

// Full state (E, S, C, P) in the model's state order from reduced coordinates (C, P).
std::vector<double> mmState(const CompiledModel& m, double c, double p) {
  std::vector<double> x(static_cast<std::size_t>(m.nx()));
  x[static_cast<std::size_t>(stateIndex(m, "E"))] = 1 - c;
  x[static_cast<std::size_t>(stateIndex(m, "S"))] = 2 - c - p;
  x[static_cast<std::size_t>(stateIndex(m, "C"))] = c;
  x[static_cast<std::size_t>(stateIndex(m, "P"))] = p;
  return x;
}

void writeFile(const QString& path, const std::string& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text.data(), static_cast<qint64>(text.size()));
}

}  // namespace

class TestSteadyState : public QObject {
  Q_OBJECT

 private slots:
  void defaultOptionsValidate() {
    QVERIFY(!SteadyStateOptions{}.validate().has_value());
    SteadyStateOptions o;
    o.rtol = -1;
    const auto m = o.validate();
    QVERIFY(m.has_value());
    QVERIFY2(m->find("rtol = -1") != std::string::npos && m->find("rtol > 0") != std::string::npos,
             m->c_str());
    o = {};
    o.maxSimulationTime = 1;
    QVERIFY(o.validate().has_value());
  }

  // Newton from the initial state (C, P) = (0, 0), the measured references, two laws.
  void reversibleMichaelisMenten() {
    const auto model = compile(reversibleMm(), "revMM");
    const ConservedModel cm(model);
    QCOMPARE(cm.nc(), 2);
    QCOMPARE(cm.nr(), 2);
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), {});
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(s.foundBy, FoundBy::Newton);
    QVERIFY(s.newtonIterations >= 2 && s.newtonIterations <= 8);
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "C")], kCStar, 0, 1e-9, "C*", 0);
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "P")], kPStar, 0, 1e-9, "P*", 0);
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "E")] + s.state[stateIndex(*model, "C")], 1.0,
                         1e-14, 0, "E+C", 0);
    QCOMPARE(s.conservationLaws.size(), std::size_t(2));
    QVERIFY(s.stable);
    QVERIFY(s.maxRealEigenvalue < 0);
    QVERIFY(std::isfinite(s.conditionEstimate) && s.conditionEstimate >= 1);
    QVERIFY(s.residualNorm < 1 && s.newtonStepNorm < 1);
    QVERIFY(!s.negative);
    qInfo("revMM: %d Newton iterations, cond(J_r) ~ %.4g, max Re(lambda) = %.6g, laws: %s; %s",
          s.newtonIterations, s.conditionEstimate, s.maxRealEigenvalue,
          s.conservationLaws[0].c_str(), s.conservationLaws[1].c_str());
  }

  // The measured start points of §8.3 converge by Newton.
  void newtonFromMeasuredStarts_data() {
    QTest::addColumn<double>("c");
    QTest::addColumn<double>("p");
    QTest::newRow("(0.3,0.5)") << 0.3 << 0.5;
    QTest::newRow("(0,0)") << 0.0 << 0.0;
    QTest::newRow("(0.9,1.9)") << 0.9 << 1.9;
  }
  void newtonFromMeasuredStarts() {
    QFETCH(double, c);
    QFETCH(double, p);
    const auto model = compile(reversibleMm(), "revMM");
    const ConservedModel cm(model);
    SteadyStateOptions o;
    o.method = SteadyStateMethod::Newton;
    const auto x = mmState(*model, c, p);
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), o, {}, &x);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(s.foundBy, FoundBy::Newton);
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "C")], kCStar, 0, 1e-9, "C*", 0);
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "P")], kPStar, 0, 1e-9, "P*", 0);
  }

  // From (C, P) = (5, −3) Newton lands on the non-physical root (C ≈ 6.18, P ≈ −3.58): rejected
  // by the sign check with Newton alone, recovered by the simulation fallback in auto mode.
  void nonPhysicalRootRejectedAndRecovered() {
    const auto model = compile(reversibleMm(), "revMM");
    const ConservedModel cm(model);
    const auto x = mmState(*model, 5, -3);
    SteadyStateOptions o;
    o.method = SteadyStateMethod::Newton;
    const SteadyStateSolution rejected = solveSteadyState(cm, model->nominalParameters(), o, {}, &x);
    QVERIFY(!rejected.found);
    QVERIFY2(rejected.reason.find("non-physical root") != std::string::npos,
             rejected.reason.c_str());
    qInfo("Newton only: %s", rejected.reason.c_str());

    o.acceptNegative = true;
    o.acceptUnstable = true;
    const SteadyStateSolution accepted = solveSteadyState(cm, model->nominalParameters(), o, {}, &x);
    QVERIFY2(accepted.found, accepted.reason.c_str());
    QVERIFY(accepted.negative);
    SENSODE_EXPECT_CLOSE(accepted.state[stateIndex(*model, "C")], 6.18, 0.01, 0, "C (root)", 0);
    SENSODE_EXPECT_CLOSE(accepted.state[stateIndex(*model, "P")], -3.58, 0.01, 0, "P (root)", 0);

    o = {};  // auto
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), o, {}, &x);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(s.foundBy, FoundBy::Fallback);
    QVERIFY2(s.fallbackReason.find("non-physical root") != std::string::npos,
             s.fallbackReason.c_str());
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "C")], kCStar, 0, 1e-9, "C*", 0);
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "P")], kPStar, 0, 1e-9, "P*", 0);
    qInfo("auto: found by %s (%s) after: %s", toString(s.foundBy), s.path.c_str(),
          s.fallbackReason.c_str());
  }

  // Simulation first (the reverse order) reaches the criterion and the Newton-step check.
  void simulationFirst() {
    const auto model = compile(reversibleMm(), "revMM");
    const ConservedModel cm(model);
    SteadyStateOptions o;
    o.method = SteadyStateMethod::Simulation;
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), o);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(s.foundBy, FoundBy::Simulation);
    QVERIFY(s.simulationSteps > 0 && s.simulatedTime >= 10);
    // The criterion bounds the error by about rtol relative (weighted norm < 1).
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "C")], kCStar, 0, 1e-6, "C*", 0);
    SENSODE_EXPECT_CLOSE(s.state[stateIndex(*model, "P")], kPStar, 0, 1e-6, "P*", 0);
  }

  // dx*/dθ = −J_r⁻¹ F_θ mapped to all species, against central differences of the solver.
  void mmSensitivitiesMatchFiniteDifferences() {
    const auto model = compile(reversibleMm(), "revMM");
    const ConservedModel cm(model);
    const std::vector<double> theta = model->nominalParameters();
    SteadyStateOptions o;
    o.rtol = 1e-12;
    o.atol = 1e-14;
    const SteadyStateSolution s = solveSteadyState(cm, theta, o);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(s.sensitivities.rows(), static_cast<Eigen::Index>(model->nx()));
    QCOMPARE(s.sensitivities.cols(), static_cast<Eigen::Index>(model->np()));
    double worst = 0;
    for (int k = 0; k < model->np(); ++k) {
      const double h = 1e-6 * std::max(1.0, std::abs(theta[static_cast<std::size_t>(k)]));
      auto tp = theta, tm = theta;
      tp[static_cast<std::size_t>(k)] += h;
      tm[static_cast<std::size_t>(k)] -= h;
      const auto sp = solveSteadyState(cm, tp, o), sm = solveSteadyState(cm, tm, o);
      QVERIFY(sp.found && sm.found);
      for (int i = 0; i < model->nx(); ++i) {
        const double fd = (sp.state[static_cast<std::size_t>(i)] -
                           sm.state[static_cast<std::size_t>(i)]) / (2 * h);
        SENSODE_EXPECT_CLOSE(s.sensitivities(i, k), fd, 1e-7, 1e-6,
                             ("dx*/d" + model->system().params[static_cast<std::size_t>(k)].id)
                                 .c_str(),
                             i);
        keepWorst(worst, std::abs(s.sensitivities(i, k) - fd));
      }
    }
    // The initial value of S enters through the total S + C + P only.
    const int kS = paramIndex(*model, "S");
    QVERIFY(kS >= 0);
    QVERIFY(std::abs(s.sensitivities(stateIndex(*model, "P"), kS)) > 0.1);
    qInfo("revMM dx*/dtheta vs central FD: max |diff| = %.3g", worst);
  }

  // A ⇌ B (§8.5): x₁* = 0.409090909091, dx₁*/dθ = (−0.3719008264, 0.9917355372, 0.2727272727)
  // for θ = (k₁, k₂, a₀); the unreduced Jacobian is singular, the reduced one is not.
  void aToBReferences() {
    const auto model = compile(aToB(), "AB");
    const ConservedModel cm(model);
    QCOMPARE(cm.nc(), 1);
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), {});
    QVERIFY2(s.found, s.reason.c_str());
    const int a = stateIndex(*model, "A");
    SENSODE_EXPECT_CLOSE(s.state[a], 0.409090909091, 1e-12, 0, "x1*", 0);
    const double ref[3] = {-0.3719008264, 0.9917355372, 0.2727272727};
    const char* ids[3] = {"k1", "k2", "A"};
    for (int k = 0; k < 3; ++k)
      SENSODE_EXPECT_CLOSE(s.sensitivities(a, paramIndex(*model, ids[k])), ref[k], 1e-10, 0,
                           "dx1*/dtheta", k);
    // Full Jacobian singular (cond = inf); J_r = −(k1 + k2) is not.
    const auto& pat = model->jacobianPattern();
    std::vector<double> v(static_cast<std::size_t>(pat.nnz()));
    const auto p = model->nominalParameters();
    model->jacobian(0, s.state.data(), p.data(), v.data());
    const Eigen::Map<const Eigen::SparseMatrix<double>> j(pat.rows, pat.cols, pat.nnz(),
                                                          pat.colPtr.data(), pat.rowIdx.data(),
                                                          v.data());
    QVERIFY(std::isinf(sensode::steadystate::conditionEstimate1(Eigen::SparseMatrix<double>(j))));
    SENSODE_EXPECT_CLOSE(s.conditionEstimate, 1.0, 1e-12, 0, "cond(J_r)", 0);
    SENSODE_EXPECT_CLOSE(s.maxRealEigenvalue, -1.1, 1e-12, 0, "eigenvalue", 0);
  }

  // ∅ → X at rate k·X: Newton finds the unstable root X = 0 (rejected), simulation grows.
  void exponentialGrowth() {
    const auto model =
        compile(sbml("grow", {{"X", 1}}, {{"k", 0.1}}, {{"R", {}, {"X"}, times({ci("k"), ci("X")})}}),
                "grow");
    const ConservedModel cm(model);
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), {});
    QVERIFY(!s.found);
    QVERIFY2(s.reason.rfind("unbounded growth", 0) == 0, s.reason.c_str());
    QVERIFY2(s.fallbackReason.find("unstable") != std::string::npos, s.fallbackReason.c_str());
    qInfo("exponential growth: %s", s.reason.c_str());
  }

  // ∅ → X at constant rate k: J = 0 is singular, simulation grows linearly.
  void linearGrowthSingularJacobian() {
    const auto model = compile(sbml("lin", {{"X", 1}}, {{"k", 1}}, {{"R", {}, {"X"}, ci("k")}}),
                               "lin");
    const ConservedModel cm(model);
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), {});
    QVERIFY(!s.found);
    QVERIFY2(s.fallbackReason.find("singular") != std::string::npos, s.fallbackReason.c_str());
    QVERIFY2(s.reason.rfind("unbounded growth", 0) == 0, s.reason.c_str());
    SteadyStateOptions o;
    o.method = SteadyStateMethod::Newton;
    const SteadyStateSolution n = solveSteadyState(cm, model->nominalParameters(), o);
    QVERIFY(!n.found);
    QVERIFY2(n.reason.find("Jacobian J_r is singular") != std::string::npos, n.reason.c_str());
  }

  // A → B catalysed by a decaying enzyme (rate k·A·E, E → ∅ at kd·E), A + B conserved: every
  // (A, B, 0) is a steady state, so J_r = [[−kE, −kA], [0, −kd]] is singular at x* even after
  // the reduction. The trajectory from x₀ keeps the first integral log A − (k/kd)E, so
  // A* = A₀·exp(−k·E₀/kd), B* = A₀ + B₀ − A*, E* = 0: dx*/dθ from forward integration against
  // these derivatives (θ = k, kd and the initial values A₀ = 1, B₀ = 0.5, E₀ = 1).
  void singularCurveSensitivitiesByIntegration() {
    const auto model = compile(
        sbml("curve", {{"A", 1}, {"B", 0.5}, {"E", 1}}, {{"k", 1}, {"kd", 2}},
             {{"R", {"A", "E"}, {"B", "E"}, times({ci("k"), ci("A"), ci("E")})},
              {"D", {"E"}, {}, times({ci("kd"), ci("E")})}}),
        "curve");
    const ConservedModel cm(model);
    QCOMPARE(cm.nc(), 1);
    SteadyStateOptions o;
    o.rtol = 1e-10;
    o.atol = 1e-14;
    // Where on the curve the trajectory ends carries its integration error (1e-8 at rtol 1e-8).
    o.integrator.rtol = 1e-11;
    o.integrator.atol = 1e-14;
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), o);
    QVERIFY2(s.found, s.reason.c_str());
    QVERIFY2(!(s.conditionEstimate < 1e14), std::to_string(s.conditionEstimate).c_str());
    QVERIFY2(s.sensitivityFallback.find("J_r is singular") != std::string::npos &&
                 s.sensitivityFallback.find("forward sensitivities integrated") != std::string::npos,
             (s.sensitivityFallback + " / " + s.sensitivityMessage).c_str());
    const double k = 1, kd = 2, a0 = 1, b0 = 0.5, e0 = 1;
    const double aStar = a0 * std::exp(-k * e0 / kd);
    const int a = stateIndex(*model, "A"), b = stateIndex(*model, "B"), e = stateIndex(*model, "E");
    SENSODE_EXPECT_CLOSE(s.state[a], aStar, 1e-9, 0, "A*", 0);
    SENSODE_EXPECT_CLOSE(s.state[b], a0 + b0 - aStar, 1e-9, 0, "B*", 0);
    QCOMPARE(s.sensitivities.rows(), static_cast<Eigen::Index>(model->nx()));
    // dA*/d(k, kd, A₀, B₀, E₀)
    const double dA[5] = {-aStar * e0 / kd, aStar * k * e0 / (kd * kd), aStar / a0, 0,
                          -aStar * k / kd};
    const char* ids[5] = {"k", "kd", "A", "B", "E"};
    double worst = 0;
    for (int c = 0; c < 5; ++c) {
      const int p = paramIndex(*model, ids[c]);
      QVERIFY2(p >= 0, ids[c]);
      const double dB = (c == 2 || c == 3 ? 1.0 : 0.0) - dA[c];
      SENSODE_EXPECT_CLOSE(s.sensitivities(a, p), dA[c], 1e-7, 1e-6, "dA*/dtheta", c);
      SENSODE_EXPECT_CLOSE(s.sensitivities(b, p), dB, 1e-7, 1e-6, "dB*/dtheta", c);
      SENSODE_EXPECT_CLOSE(s.sensitivities(e, p), 0.0, 1e-7, 0, "dE*/dtheta", c);
      keepWorst(worst, std::abs(s.sensitivities(a, p) - dA[c]));
    }
    qInfo("singular curve: %s; max |dA*/dtheta - exact| = %.3g", s.sensitivityFallback.c_str(),
          worst);
    // The linear solve alone (AMICI's newtonOnly) has no answer there and says so.
    o.sensitivityMethod = SensitivityMethod::LinearSolve;
    const SteadyStateSolution n = solveSteadyState(cm, model->nominalParameters(), o);
    QVERIFY(n.found);
    QCOMPARE(n.sensitivities.size(), Eigen::Index{0});
    QVERIFY2(n.sensitivityMessage.find("J_r is singular") != std::string::npos,
             n.sensitivityMessage.c_str());
  }

  // J_r whose entries span 15 decades is not singular: in the states' units (columns times
  // the states' sizes, rows to max-abs 1; ScaledLu) its condition is small and the solves keep
  // their digits. ∅ → A → B → ∅ at k0 = 1, k1 = 1e8, k2 = 1e-7: J = [[−k1, 0], [k1, −k2]],
  // A* = k0/k1 = 1e-8, B* = k0/k2 = 1e7.
  void scaledLuOnABadlyScaledMatrix() {
    Eigen::SparseMatrix<double> j(2, 2);
    j.insert(0, 0) = -1e8;
    j.insert(1, 0) = 1e8;
    j.insert(1, 1) = -1e-7;
    j.makeCompressed();
    QVERIFY(!(sensode::steadystate::conditionEstimate1(j) < 1e14));
    // Rows alone do not help: [[−1, 0], [1, −1e-15]].
    QVERIFY(!sensode::steadystate::ScaledLu(j).ok());
    const Eigen::VectorXd xs = Eigen::Vector2d(1e-8, 1e7);
    const sensode::steadystate::ScaledLu lu(j, &xs);
    QVERIFY(lu.ok());
    QVERIFY2(lu.condition() < 10, std::to_string(lu.condition()).c_str());
    const Eigen::MatrixXd dense(j);
    const Eigen::Vector2d b(1, 2);
    const Eigen::Vector2d x = lu.solve(b), xt = lu.solveTransposed(b);
    const Eigen::Vector2d exact = dense.inverse() * b, exactT = dense.transpose().inverse() * b;
    for (int i = 0; i < 2; ++i) {
      SENSODE_EXPECT_CLOSE(x(i), exact(i), 0, 1e-14, "J^-1 b", i);
      SENSODE_EXPECT_CLOSE(xt(i), exactT(i), 0, 1e-14, "J^-T b", i);
    }
  }

  // The same chain as a model (k2 = 1e-6: the SBML writer has 6 decimals): the unscaled condition estimate of J_r is above 1e14 (before
  // ScaledLu the solver called it singular and gave no sensitivities, Brannmark's failing
  // pre-equilibrations); dx*/dθ by the linear solve against dA*/dk0 = 1/k1, dA*/dk1 = −k0/k1²,
  // dB*/dk0 = 1/k2, dB*/dk2 = −k0/k2².
  void badlyScaledJacobianIsNotSingular() {
    const auto model = compile(
        sbml("chain", {{"A", 0}, {"B", 0}}, {{"k0", 1}, {"k1", 1e8}, {"k2", 1e-6}},
             {{"R0", {}, {"A"}, ci("k0")},
              {"R1", {"A"}, {"B"}, times({ci("k1"), ci("A")})},
              {"R2", {"B"}, {}, times({ci("k2"), ci("B")})}}),
        "chain");
    const ConservedModel cm(model);
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), {});
    QVERIFY2(s.found, (s.reason + " / " + s.fallbackReason).c_str());
    QVERIFY2(!(s.conditionEstimate < 1e14), std::to_string(s.conditionEstimate).c_str());
    QVERIFY2(s.scaledConditionEstimate < 10, std::to_string(s.scaledConditionEstimate).c_str());
    QVERIFY2(s.sensitivityMessage.empty(), s.sensitivityMessage.c_str());
    QVERIFY2(s.sensitivityFallback.empty(), s.sensitivityFallback.c_str());
    const double k0 = 1, k1 = 1e8, k2 = 1e-6;
    const int a = stateIndex(*model, "A"), b = stateIndex(*model, "B");
    SENSODE_EXPECT_CLOSE(s.state[a], k0 / k1, 0, 1e-8, "A*", 0);
    SENSODE_EXPECT_CLOSE(s.state[b], k0 / k2, 0, 1e-8, "B*", 0);
    const auto d = [&](int x, const char* p) { return s.sensitivities(x, paramIndex(*model, p)); };
    SENSODE_EXPECT_CLOSE(d(a, "k0"), 1 / k1, 0, 1e-8, "dA*/dk0", 0);
    SENSODE_EXPECT_CLOSE(d(a, "k1"), -k0 / (k1 * k1), 0, 1e-8, "dA*/dk1", 0);
    SENSODE_EXPECT_CLOSE(d(a, "k2"), 0.0, 1e-30, 0, "dA*/dk2", 0);
    SENSODE_EXPECT_CLOSE(d(b, "k0"), 1 / k2, 0, 1e-8, "dB*/dk0", 0);
    SENSODE_EXPECT_CLOSE(d(b, "k1"), 0.0, 1e-6, 0, "dB*/dk1", 0);
    SENSODE_EXPECT_CLOSE(d(b, "k2"), -k0 / (k2 * k2), 0, 1e-8, "dB*/dk2", 0);
  }

  // Integration on request where the linear solve works: the same dx*/dθ (reversible MM).
  void integratedSensitivitiesMatchLinearSolve() {
    const auto model = compile(reversibleMm(), "revMM");
    const ConservedModel cm(model);
    SteadyStateOptions o;
    o.rtol = 1e-10;
    o.atol = 1e-14;
    const SteadyStateSolution lin = solveSteadyState(cm, model->nominalParameters(), o);
    o.sensitivityMethod = SensitivityMethod::Integration;
    const SteadyStateSolution in = solveSteadyState(cm, model->nominalParameters(), o);
    QVERIFY(lin.found && in.found);
    QVERIFY(lin.sensitivityFallback.empty());
    QVERIFY2(in.sensitivityFallback.find("requested") != std::string::npos,
             in.sensitivityFallback.c_str());
    QCOMPARE(in.sensitivities.rows(), lin.sensitivities.rows());
    QCOMPARE(in.sensitivities.cols(), lin.sensitivities.cols());
    for (Eigen::Index k = 0; k < lin.sensitivities.size(); ++k)
      SENSODE_EXPECT_CLOSE(in.sensitivities(k), lin.sensitivities(k), 1e-7, 1e-6,
                           "integrated vs linear solve", static_cast<long>(k));
  }

  // The repressilator oscillates: bounded, no convergence, an unstable fixed point.
  void repressilatorOscillates() {
    const auto model = std::make_shared<const CompiledModel>(sensode::symbolic::buildOdeSystem(
        sensode::model::importSbmlFile(SENSODE_RESOURCES_DIR "/models/repressilator.xml")));
    const ConservedModel cm(model);
    const SteadyStateSolution s = solveSteadyState(cm, model->nominalParameters(), {});
    QVERIFY(!s.found);
    QVERIFY2(s.reason.rfind("oscillation", 0) == 0, s.reason.c_str());
    QVERIFY2(s.reason.find("unstable fixed point") != std::string::npos, s.reason.c_str());
    qInfo("repressilator: %s", s.reason.c_str());
    // Accepting unstable roots returns the fixed point with its positive eigenvalue.
    SteadyStateOptions o;
    o.acceptUnstable = true;
    const SteadyStateSolution u = solveSteadyState(cm, model->nominalParameters(), o);
    QVERIFY2(u.found, u.reason.c_str());
    QVERIFY(!u.stable && u.maxRealEigenvalue > 0);
  }

  // The task: overrides, output values and output sensitivities (chain rule) against FD.
  void taskWithOverridesAndOutputSensitivities() {
    sensode::tasks::SteadyStateProblem problem;
    problem.model = compile(reversibleMm(), "revMM");
    problem.overrides = {{"k3", 1.2}};
    problem.outputs = {"C", "P"};
    sensode::tasks::SteadyStateOptions o;
    o.rtol = 1e-12;
    o.atol = 1e-14;
    const auto r = sensode::tasks::runSteadyState(problem, o);
    QCOMPARE(r.status, sensode::tasks::SteadyStateResult::Status::Success);
    QCOMPARE(r.values.size(), std::size_t(2));
    const int np = problem.model->np();
    QCOMPARE(r.outputSensitivities.size(), std::size_t(2 * np));
    const int k3 = paramIndex(*problem.model, "k3");
    const double h = 1e-6;
    auto plus = problem, minusP = problem;
    plus.overrides = {{"k3", 1.2 + h}};
    minusP.overrides = {{"k3", 1.2 - h}};
    const auto rp = sensode::tasks::runSteadyState(plus, o);
    const auto rm = sensode::tasks::runSteadyState(minusP, o);
    for (int j = 0; j < 2; ++j)
      SENSODE_EXPECT_CLOSE(r.outputSensitivities[static_cast<std::size_t>(j * np + k3)],
                           (rp.values[static_cast<std::size_t>(j)] -
                            rm.values[static_cast<std::size_t>(j)]) / (2 * h),
                           1e-7, 1e-6, "dy/dk3", j);

    problem.overrides = {{"nope", 1}};
    const auto bad = sensode::tasks::runSteadyState(problem, o);
    QCOMPARE(bad.status, sensode::tasks::SteadyStateResult::Status::InvalidInput);
    QVERIFY(bad.message.find("nope") != std::string::npos);
  }

  // `sensode steadystate`: CSV id,value with sensitivity rows, stats JSON with diagnostics, and
  // the one-line error with exit status 1 when there is no steady state.
  void commandLine() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString model = tmp.filePath("mm.xml");
    writeFile(model, reversibleMm());
    const QString csv = tmp.filePath("ss.csv"), json = tmp.filePath("ss.json");
    QProcess p;
    p.start(SENSODE_CLI_PATH, {"steadystate", model, "--method", "auto", "--set", "k3=1.5",
                               "--out", csv, "--stats", json});
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.value(0), QString("id,value"));
    bool sawC = false, sawSens = false;
    for (const QString& line : lines) {
      const QStringList cells = line.split(',');
      QCOMPARE(cells.size(), 2);
      if (cells[0] == "C") {
        sawC = true;
        SENSODE_EXPECT_CLOSE(cells[1].toDouble(), kCStar, 0, 1e-8, "CSV C*", 0);
      }
      if (cells[0].startsWith("d(P)/d(")) sawSens = true;
    }
    QVERIFY(sawC && sawSens);
    QFile jf(json);
    QVERIFY(jf.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(jf.readAll()).object();
    for (const char* key : {"method", "wall_seconds", "steps", "rhs_evals", "jac_evals",
                            "lu_factorizations", "newton_iterations", "error_test_failures",
                            "found", "found_by", "condition_estimate", "max_real_eigenvalue",
                            "conservation_laws", "stable"})
      QVERIFY2(o.contains(key), key);
    QCOMPARE(o["found_by"].toString(), QString("newton"));
    QVERIFY(o["newton_iterations"].toInt() >= 2);
    QCOMPARE(o["newton_iterations"].toInt(), o["steady_state_newton_iterations"].toInt());
    QCOMPARE(o["n_conservation_laws"].toInt(), 2);

    QProcess q;
    q.start(SENSODE_CLI_PATH,
            {"steadystate", SENSODE_RESOURCES_DIR "/models/repressilator.xml", "--stats", json});
    QVERIFY(q.waitForFinished(120000));
    QCOMPARE(q.exitCode(), 1);
    const QString err = QString::fromUtf8(q.readAllStandardError()).trimmed();
    QVERIFY2(!err.contains('\n') && err.contains("oscillation"), qPrintable(err));

    QProcess u;
    u.start(SENSODE_CLI_PATH, {"steadystate", model, "--method", "bisection"});
    QVERIFY(u.waitForFinished(60000));
    QCOMPARE(u.exitCode(), 2);
  }
};

QTEST_GUILESS_MAIN(TestSteadyState)
#include "tst_steady_state.moc"
