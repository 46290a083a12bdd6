// SPDX-License-Identifier: MIT
// Delay differential equations (SBML delay()) through the simulation driver's method of steps,
// with both integrators, against closed-form solutions: x' = −k x(t − τ), x = 1 for t <= 0, whose
// solution is the piecewise polynomial
//   x(t) = Σ_{n=0}^{⌊t/τ⌋+1} (−k)^n (t − (n−1)τ)^n / n!
// (1 − kt on [0, τ], then 1 − kt + k²(t − τ)²/2 on [τ, 2τ], ...), and its exact derivatives with
// respect to k and τ (the sum differentiated term by term: the term a breakpoint adds is 0 there).
// The direct sensitivities carry the delayed terms ∂f/∂x_τ·S(t − τ) and −∂f/∂x_τ·ẋ(t − τ)·∂τ/∂p;
// ∂x/∂τ is also checked against central finite differences of the whole simulation, and so are
// the sensitivities of a state-dependent delay τ = a + b·x. Plus the
// initial history of the SBML Test Suite (time runs before t0) and the refusals: PBSR/Exp fall
// back to odeSD saying so, steady states name the delay.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/steady_state_task.h"
#include "core/tasks/time_course_task.h"
#include "support/numeric_compare.h"

using sensode::integrators::Method;
Q_DECLARE_METATYPE(sensode::integrators::Method)

namespace {

// Plain literals with single-quoted XML attributes (moc misreads some raw strings).
constexpr const char* kDelay =
    "<csymbol encoding='text' definitionURL='http://www.sbml.org/sbml/symbols/delay'>delay</csymbol>";
constexpr const char* kTime =
    "<csymbol encoding='text' definitionURL='http://www.sbml.org/sbml/symbols/time'>time</csymbol>";

std::string math(const std::string& body) {
  return "<math xmlns='http://www.w3.org/1998/Math/MathML'>" + body + "</math>";
}

std::string document(const std::string& id, const std::string& body) {
  return "<?xml version='1.0' encoding='UTF-8'?>"
         "<sbml xmlns='http://www.sbml.org/sbml/level3/version2/core' level='3' version='2'>"
         "<model id='" + id + "'>" + body + "</model></sbml>";
}

// x' = −k·delay(x, tau) for species x (amount 1), as a reaction x → ∅.
std::string delayedDecay(double k, double tau) {
  return document(
      "dde",
      "<listOfCompartments><compartment id='c' size='1' constant='true'/></listOfCompartments>"
      "<listOfSpecies><species id='x' compartment='c' initialAmount='1'"
      " hasOnlySubstanceUnits='true' boundaryCondition='false' constant='false'/></listOfSpecies>"
      "<listOfParameters>"
      "<parameter id='k' value='" + std::to_string(k) + "' constant='true'/>"
      "<parameter id='tau' value='" + std::to_string(tau) + "' constant='true'/>"
      "</listOfParameters>"
      "<listOfReactions><reaction id='R' reversible='false'>"
      "<listOfReactants><speciesReference species='x' stoichiometry='1' constant='true'/>"
      "</listOfReactants><kineticLaw>" +
          math("<apply><times/><ci>k</ci><apply>" + std::string(kDelay) +
               "<ci>x</ci><ci>tau</ci></apply></apply>") +
          "</kineticLaw></reaction></listOfReactions>");
}

// x' = s − k·delay(x, tau): production s (∅ → x) and the delayed decay; steady state x* = s/k.
std::string delayedDecayWithProduction(double s, double k, double tau) {
  std::string xml = delayedDecay(k, tau);
  xml.insert(xml.find("</listOfParameters>"),
             "<parameter id='s' value='" + std::to_string(s) + "' constant='true'/>");
  xml.insert(xml.find("</listOfReactions>"),
             "<reaction id='P' reversible='false'><listOfProducts><speciesReference species='x'"
             " stoichiometry='1' constant='true'/></listOfProducts><kineticLaw>" +
                 math("<ci>s</ci>") + "</kineticLaw></reaction>");
  return xml;
}

// x' = −k·delay(x, a + b·x): a delay that depends on the state and on parameters.
std::string stateDependentDelay() {
  return document(
      "sdd",
      "<listOfCompartments><compartment id='c' size='1' constant='true'/></listOfCompartments>"
      "<listOfSpecies><species id='x' compartment='c' initialAmount='1'"
      " hasOnlySubstanceUnits='true' boundaryCondition='false' constant='false'/></listOfSpecies>"
      "<listOfParameters><parameter id='k' value='1.3' constant='true'/>"
      "<parameter id='a' value='0.5' constant='true'/>"
      "<parameter id='b' value='0.3' constant='true'/></listOfParameters>"
      "<listOfReactions><reaction id='R' reversible='false'>"
      "<listOfReactants><speciesReference species='x' stoichiometry='1' constant='true'/>"
      "</listOfReactants><kineticLaw>" +
          math("<apply><times/><ci>k</ci><apply>" + std::string(kDelay) +
               "<ci>x</ci><apply><plus/><ci>a</ci><apply><times/><ci>b</ci><ci>x</ci></apply>"
               "</apply></apply></apply>") +
          "</kineticLaw></reaction></listOfReactions>");
}

// y = 2 + delay(sin(10 t), 0.2): the history before t0 continues the time function (suite 00937).
std::string echo() {
  return document(
      "echo",
      "<listOfParameters><parameter id='s' constant='false'/><parameter id='y' constant='false'/>"
      "</listOfParameters><listOfRules><assignmentRule variable='s'>" +
          math("<apply><sin/><apply><times/><cn>10</cn>" + std::string(kTime) + "</apply></apply>") +
          "</assignmentRule><assignmentRule variable='y'>" +
          math("<apply><plus/><cn>2</cn><apply>" + std::string(kDelay) +
               "<ci>s</ci><cn>0.2</cn></apply></apply>") +
          "</assignmentRule></listOfRules>");
}

std::shared_ptr<const sensode::symbolic::CompiledModel> compile(const std::string& xml) {
  return std::make_shared<const sensode::symbolic::CompiledModel>(
      sensode::symbolic::buildOdeSystem(sensode::model::importSbmlString(xml, "dde.xml")));
}

double factorial(int n) { return std::tgamma(n + 1.0); }

// The closed form and its derivatives with respect to k and τ.
double exact(double t, double k, double tau) {
  double x = 0;
  for (int n = 0; n <= static_cast<int>(std::floor(t / tau)) + 1; ++n)
    x += std::pow(-k, n) * std::pow(t - (n - 1) * tau, n) / factorial(n);
  return x;
}
double exactDk(double t, double k, double tau) {
  double d = 0;
  for (int n = 1; n <= static_cast<int>(std::floor(t / tau)) + 1; ++n)
    d += n * std::pow(-1.0, n) * std::pow(k, n - 1) * std::pow(t - (n - 1) * tau, n) / factorial(n);
  return d;
}
double exactDtau(double t, double k, double tau) {
  double d = 0;
  for (int n = 2; n <= static_cast<int>(std::floor(t / tau)) + 1; ++n)
    d += std::pow(-k, n) * n * std::pow(t - (n - 1) * tau, n - 1) * (-(n - 1)) / factorial(n);
  return d;
}

std::vector<double> grid() {
  std::vector<double> t;
  for (int i = 0; i <= 16; ++i) t.push_back(0.25 * i);  // [0, 4]: four delay intervals
  return t;
}

void methods() {
  QTest::addColumn<Method>("method");
  QTest::newRow("cvodes") << Method::Cvodes;
  QTest::newRow("odesd") << Method::OdeSd;
}

sensode::tasks::SensitivityResult sensitivities(sensode::tasks::SensitivityMethod method,
                                                double k, double tau) {
  sensode::tasks::SensitivityProblem sp;
  sp.model = compile(delayedDecay(k, tau));
  sp.times = grid();
  sp.outputs = {"x"};
  sp.parameters = {"k", "tau"};
  sensode::tasks::SensitivityOptions options;
  options.method = method;
  options.integrator.rtol = 1e-10;
  options.integrator.atol = 1e-12;
  return sensode::tasks::runSensitivities(sp, options);
}

sensode::tasks::SensitivityMethod direct(Method m) {
  return m == Method::Cvodes ? sensode::tasks::SensitivityMethod::Cvodes
                             : sensode::tasks::SensitivityMethod::OdeSd;
}

}  // namespace

class TestDelays : public QObject {
  Q_OBJECT

 private slots:
  // x' = −x(t − 1) on [0, 4] against the piecewise polynomial, to 1e-7.
  void scalarDdeMatchesPiecewisePolynomial_data() { methods(); }
  void scalarDdeMatchesPiecewisePolynomial() {
    QFETCH(Method, method);
    sensode::tasks::TimeCourseProblem problem;
    problem.model = compile(delayedDecay(1.0, 1.0));
    problem.times = grid();
    problem.outputs = {"x"};
    sensode::tasks::TimeCourseOptions options;
    options.method = method;
    options.integrator.rtol = 1e-10;
    options.integrator.atol = 1e-12;
    const auto r = sensode::tasks::runTimeCourse(problem, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    QVERIFY2(r.stats.fallbacks.empty(),
             r.stats.fallbacks.empty() ? "" : r.stats.fallbacks.front().c_str());
    for (std::size_t i = 0; i < problem.times.size(); ++i)
      SENSODE_EXPECT_CLOSE(r.at(i, 0), exact(problem.times[i], 1.0, 1.0), 1e-7, 1e-7, "x", long(i));
  }

  // A non-integer ratio of delay to output spacing and a faster decay: x' = −1.7 x(t − 0.7).
  void scalarDdeWithOtherRateAndDelay_data() { methods(); }
  void scalarDdeWithOtherRateAndDelay() {
    QFETCH(Method, method);
    sensode::tasks::TimeCourseProblem problem;
    problem.model = compile(delayedDecay(1.7, 0.7));
    problem.times = grid();
    problem.outputs = {"x"};
    sensode::tasks::TimeCourseOptions options;
    options.method = method;
    options.integrator.rtol = 1e-10;
    options.integrator.atol = 1e-12;
    const auto r = sensode::tasks::runTimeCourse(problem, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    for (std::size_t i = 0; i < problem.times.size(); ++i)
      SENSODE_EXPECT_CLOSE(r.at(i, 0), exact(problem.times[i], 1.7, 0.7), 1e-7, 1e-7, "x", long(i));
  }

  // ∂x/∂k and ∂x/∂τ of x' = −k x(t − τ) (k = 1.3, τ = 0.9) against the differentiated closed
  // form: the delayed term ∂f/∂x_τ·S(t − τ) (both) and −∂f/∂x_τ·ẋ(t − τ) (τ).
  void sensitivitiesMatchClosedForm_data() { methods(); }
  void sensitivitiesMatchClosedForm() {
    QFETCH(Method, method);
    const double k = 1.3, tau = 0.9;
    const auto r = sensitivities(direct(method), k, tau);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    const std::vector<double> t = grid();
    for (std::size_t i = 0; i < t.size(); ++i) {
      SENSODE_EXPECT_CLOSE(r.at(i, 0, 0), exactDk(t[i], k, tau), 1e-6, 1e-6, "dx/dk", long(i));
      SENSODE_EXPECT_CLOSE(r.at(i, 0, 1), exactDtau(t[i], k, tau), 1e-6, 1e-6, "dx/dtau", long(i));
    }
  }

  // The same against central finite differences of whole simulations (an independent method
  // that knows nothing of the delayed sensitivity terms).
  void sensitivitiesMatchFiniteDifferences_data() { methods(); }
  void sensitivitiesMatchFiniteDifferences() {
    QFETCH(Method, method);
    const double k = 1.3, tau = 0.9;
    const auto fd = sensitivities(sensode::tasks::SensitivityMethod::FiniteDifferences, k, tau);
    QVERIFY2(fd.termination == sensode::tasks::Termination::Success, fd.message.c_str());
    const auto r = sensitivities(direct(method), k, tau);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    for (std::size_t i = 0; i < grid().size(); ++i)
      for (std::size_t p = 0; p < 2; ++p)
        SENSODE_EXPECT_CLOSE(r.at(i, 0, p), fd.at(i, 0, p), 1e-5, 1e-4,
                             p == 0 ? "dx/dk vs fd" : "dx/dtau vs fd", long(i));
  }

  // The compiled C evaluators read the delay inputs after p like the tape interpreter.
  void nativeEvaluatorsReadTheDelayInputs() {
    const auto model = compile(delayedDecay(1.3, 0.9));
    if (!model->waitForNative(120)) QSKIP("no native evaluators (no C compiler?)");
    sensode::tasks::SensitivityProblem sp;
    sp.model = model;
    sp.times = grid();
    sp.outputs = {"x"};
    sp.parameters = {"k", "tau"};
    sensode::tasks::SensitivityOptions options;
    options.method = sensode::tasks::SensitivityMethod::OdeSd;
    options.integrator.rtol = 1e-10;
    options.integrator.atol = 1e-12;
    const auto r = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    QVERIFY(model->nativeStatus().state == sensode::symbolic::NativeState::Ready);
    for (std::size_t i = 0; i < sp.times.size(); ++i) {
      const double t = sp.times[i];
      SENSODE_EXPECT_CLOSE(r.at(i, 0, 0), exactDk(t, 1.3, 0.9), 1e-6, 1e-6, "dx/dk", long(i));
      SENSODE_EXPECT_CLOSE(r.at(i, 0, 1), exactDtau(t, 1.3, 0.9), 1e-6, 1e-6, "dx/dtau", long(i));
    }
  }

  // A state- and parameter-dependent delay τ = a + b·x: the chain rule through τ(x, p)
  // (−∂f/∂x_τ·ẋ(t − τ)·(∂τ/∂x·S + ∂τ/∂p)) against central finite differences, every parameter.
  void stateDependentDelaySensitivitiesMatchFiniteDifferences_data() { methods(); }
  void stateDependentDelaySensitivitiesMatchFiniteDifferences() {
    QFETCH(Method, method);
    sensode::tasks::SensitivityProblem sp;
    sp.model = compile(stateDependentDelay());
    sp.times = grid();
    sp.outputs = {"x"};
    sp.parameters = {"k", "a", "b"};
    sensode::tasks::SensitivityOptions options;
    options.integrator.rtol = 1e-10;
    options.integrator.atol = 1e-12;
    options.method = sensode::tasks::SensitivityMethod::FiniteDifferences;
    const auto fd = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(fd.termination == sensode::tasks::Termination::Success, fd.message.c_str());
    options.method = direct(method);
    const auto r = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    for (std::size_t i = 0; i < sp.times.size(); ++i)
      for (std::size_t p = 0; p < 3; ++p)
        SENSODE_EXPECT_CLOSE(r.at(i, 0, p), fd.at(i, 0, p), 1e-6, 1e-4, "dx/dp vs fd",
                             long(3 * i + p));
  }

  // Before t0 time runs: delay(sin(10 t), 0.2) is sin(10 (t − 0.2)) from t = 0 on.
  void historyBeforeStartContinuesTimeFunctions_data() { methods(); }
  void historyBeforeStartContinuesTimeFunctions() {
    QFETCH(Method, method);
    sensode::tasks::TimeCourseProblem problem;
    problem.model = compile(echo());
    problem.times = {0, 0.1, 0.2, 0.5, 1};
    problem.outputs = {"y"};
    sensode::tasks::TimeCourseOptions options;
    options.method = method;
    const auto r = sensode::tasks::runTimeCourse(problem, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    for (std::size_t i = 0; i < problem.times.size(); ++i)
      SENSODE_EXPECT_CLOSE(r.at(i, 0), 2 + std::sin(10 * (problem.times[i] - 0.2)), 1e-6, 1e-6,
                           "y", long(i));
  }

  // PBSR and Exp have no delayed terms: the task computes odeSD direct sensitivities instead,
  // says so naming the delay, and gets the closed form.
  void peanoBakerFallsBackNamingTheDelay() {
    for (const auto m : {sensode::tasks::SensitivityMethod::Pbsr, sensode::tasks::SensitivityMethod::Exp}) {
      const auto r = sensitivities(m, 1.3, 0.9);
      QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
      QVERIFY(!r.stats.fallbacks.empty());
      const std::string& why = r.stats.fallbacks.front();
      QVERIFY2(why.find("delay(x, tau)") != std::string::npos, why.c_str());
      QVERIFY2(why.find("odeSD") != std::string::npos, why.c_str());
      SENSODE_EXPECT_CLOSE(r.at(8, 0, 0), exactDk(2.0, 1.3, 0.9), 1e-6, 1e-6, "dx/dk", 8);
    }
  }

  // At a steady state delay(g, τ) = g: x' = s − k·x(t − τ) rests at x* = s/k, with
  // dx*/ds = 1/k, dx*/dk = −s/k² and dx*/dτ = 0, and the result says the delays were read so.
  void steadyStateReadsDelaysAsPresentValues() {
    constexpr double kS = 0.6, kK = 1.5, kTau = 0.8;
    sensode::tasks::SteadyStateProblem ssp;
    ssp.model = compile(delayedDecayWithProduction(kS, kK, kTau));
    const auto ss = sensode::tasks::runSteadyState(ssp, {});
    QVERIFY2(ss.status == sensode::tasks::SteadyStateResult::Status::Success, ss.message.c_str());
    QVERIFY2(ss.solution.path.find("delay(g, τ) = g") != std::string::npos,
             ss.solution.path.c_str());
    QCOMPARE(ss.stateIds.size(), std::size_t{1});
    SENSODE_EXPECT_CLOSE(ss.solution.state[0], kS / kK, 1e-10, 1e-8, "x*", 0);
    const auto param = [&](const std::string& id) {
      const auto it = std::find(ss.parameterIds.begin(), ss.parameterIds.end(), id);
      return static_cast<Eigen::Index>(it - ss.parameterIds.begin());
    };
    const auto& S = ss.solution.sensitivities;
    QCOMPARE(S.cols(), static_cast<Eigen::Index>(ss.parameterIds.size()));
    SENSODE_EXPECT_CLOSE(S(0, param("s")), 1 / kK, 1e-10, 1e-8, "dx*/ds", 0);
    SENSODE_EXPECT_CLOSE(S(0, param("k")), -kS / (kK * kK), 1e-10, 1e-8, "dx*/dk", 0);
    SENSODE_EXPECT_CLOSE(S(0, param("tau")), 0, 1e-12, 0, "dx*/dtau", 0);
  }
};

QTEST_GUILESS_MAIN(TestDelays)
#include "tst_delays.moc"
