// SPDX-License-Identifier: MIT
// Algebraic rules and fast reactions (docs/dae.md) against closed-form solutions: a linear DAE
// x' = −k·x + b·y, 0 = a·y + x − T (y = (T − x)/a, so x relaxes with rate λ = k + b/a); an
// algebraic rule solved symbolically (the system stays an ODE); a rapid-equilibrium pair
// A ⇌ B (fast) with B → ∅ (slow) against its reduced ODE; IDAS forward sensitivities against
// the closed form and against finite differences; PBSR's hand-over to IDAS; the stiff surrogate
// where rapid equilibrium turns degenerate; and the errors for a rule that cannot hold and for an
// overdetermined model.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/time_course_task.h"
#include "tests/support/numeric_compare.h"

using sensode::integrators::Method;
using sensode::tasks::SensitivityMethod;
using sensode::tasks::Termination;
Q_DECLARE_METATYPE(sensode::integrators::Method)
Q_DECLARE_METATYPE(sensode::tasks::SensitivityMethod)

namespace {

std::string math(const std::string& body) {
  return R"(<math xmlns="http://www.w3.org/1998/Math/MathML">)" + body + "</math>";
}

std::string document(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" level="3" version="2">
  <model id="dae"><listOfCompartments><compartment id="c" size="1" constant="true"/>
  </listOfCompartments>)" +
         body + "</model></sbml>";
}

std::string species(const std::string& id, double amount) {
  return R"(<species id=")" + id + R"(" compartment="c" initialAmount=")" +
         std::to_string(amount) +
         R"(" hasOnlySubstanceUnits="true" boundaryCondition="false" constant="false"/>)";
}

std::string parameter(const std::string& id, double value, bool constant = true) {
  return R"(<parameter id=")" + id + R"(" value=")" + std::to_string(value) +
         R"(" constant=")" + (constant ? "true" : "false") + R"("/>)";
}

std::string reaction(const std::string& id, const std::string& reactant, const std::string& product,
                     const std::string& rate, const std::string& fast = "") {
  // fast: "" (L3V2, no attribute), "true" or "false" (L3V1 requires the attribute).
  std::string r = R"(<reaction id=")" + id + R"(" reversible="true")" +
                  (fast.empty() ? "" : R"( fast=")" + fast + R"(")") + ">";
  if (!reactant.empty())
    r += R"(<listOfReactants><speciesReference species=")" + reactant +
         R"(" stoichiometry="1" constant="true"/></listOfReactants>)";
  if (!product.empty())
    r += R"(<listOfProducts><speciesReference species=")" + product +
         R"(" stoichiometry="1" constant="true"/></listOfProducts>)";
  return r + "<kineticLaw>" + math(rate) + "</kineticLaw></reaction>";
}

std::string times(const std::string& a, const std::string& b) {
  return "<apply><times/><ci>" + a + "</ci><ci>" + b + "</ci></apply>";
}

// L3V1-style file for the fast attribute (L3V2 removed it).
std::string documentL3V1(const std::string& body) {
  std::string d = document(body);
  const auto replace = [&](const std::string& from, const std::string& to) {
    d.replace(d.find(from), from.size(), to);
  };
  replace("level3/version2/core", "level3/version1/core");
  replace(R"(version="2")", R"(version="1")");
  return d;
}

// x' = −k·x + b·y with 0 = a·y + x − T: a is a parameter, so the rule is not solved
// symbolically and y is an algebraic state.
constexpr double kX0 = 2, kK = 0.7, kB = 0.5, kA = 2, kT = 3;
std::string linearDae() {
  return document("<listOfSpecies>" + species("x", kX0) + "</listOfSpecies><listOfParameters>" +
                  parameter("k", kK) + parameter("b", kB) + parameter("a", kA) +
                  parameter("T", kT) + parameter("y", 1, false) +
                  "</listOfParameters><listOfRules><algebraicRule id=\"balance\">" +
                  math("<apply><minus/><apply><plus/>" + times("a", "y") +
                       "<ci>x</ci></apply><ci>T</ci></apply>") +
                  "</algebraicRule></listOfRules><listOfReactions>" +
                  reaction("decay", "x", "", times("k", "x")) +
                  reaction("supply", "", "x", times("b", "y")) + "</listOfReactions>");
}
// Closed form: x = x∞ + (x0 − x∞)·e^{−λt}, λ = k + b/a, x∞ = b·T/(a·λ).
double linearX(double t, double k = kK) {
  const double lambda = k + kB / kA, xInf = kB * kT / (kA * lambda);
  return xInf + (kX0 - xInf) * std::exp(-lambda * t);
}
double linearDxDk(double t) {
  const double lambda = kK + kB / kA, xInf = kB * kT / (kA * lambda);
  const double dxInf = -kB * kT / (kA * lambda * lambda);
  return dxInf * (1 - std::exp(-lambda * t)) - (kX0 - xInf) * t * std::exp(-lambda * t);
}

// A ⇌ B fast (kf·A − kr·B), B → ∅ slow (k·B). Reduced ODE: w = A + B, B = q·w with
// q = kf/(kf + kr), w' = −k·q·w, so w = w0·e^{−k·q·t}; w0 = A0 + B0 (pools are conserved by the
// equilibration at t0).
constexpr double kA0 = 1, kB0 = 0.25, kKf = 3, kKr = 1, kKs = 0.4;
std::string rapidEquilibrium() {
  return documentL3V1(
      "<listOfSpecies>" + species("A", kA0) + species("B", kB0) +
      "</listOfSpecies><listOfParameters>" + parameter("kf", kKf) + parameter("kr", kKr) +
      parameter("k", kKs) + "</listOfParameters><listOfReactions>" +
      reaction("R", "A", "B",
               "<apply><minus/>" + times("kf", "A") + times("kr", "B") + "</apply>", "true") +
      reaction("out", "B", "", times("k", "B"), "false") + "</listOfReactions>");
}
double pooled(double t) {
  const double q = kKf / (kKf + kKr);
  return (kA0 + kB0) * std::exp(-kKs * q * t);
}

// Degenerate rapid equilibrium (suite cases 00987 and 01570): a fast A → B at rate k·A while
// k = 0 until an event at t = 1 sets k = 1, with B → ∅ slow (ks·B). ∂g/∂z is singular while
// k = 0, so the tasks run the stiff surrogate. Closed form: A = A0, B = B0·e^{−ks·t} before
// t = 1; then A = 0 and B = (B0·e^{−ks} + A0)·e^{−ks·(t − 1)}.
constexpr double kDegA0 = 1, kDegB0 = 0.5, kDegKs = 0.3;
std::string degenerateUntilEvent() {
  const std::string timeGeq1 =
      "<apply><geq/><csymbol encoding=\"text\" "
      "definitionURL=\"http://www.sbml.org/sbml/symbols/time\">time</csymbol><cn>1</cn></apply>";
  return documentL3V1(
      "<listOfSpecies>" + species("A", kDegA0) + species("B", kDegB0) +
      "</listOfSpecies><listOfParameters>" + parameter("k", 0, false) +
      parameter("ks", kDegKs) + "</listOfParameters><listOfReactions>" +
      reaction("conversion", "A", "B", times("k", "A"), "true") +
      reaction("out", "B", "", times("ks", "B"), "false") +
      "</listOfReactions><listOfEvents><event id=\"on\" useValuesFromTriggerTime=\"true\">"
      "<trigger initialValue=\"false\" persistent=\"true\">" + math(timeGeq1) +
      "</trigger><listOfEventAssignments><eventAssignment variable=\"k\">" + math("<cn>1</cn>") +
      "</eventAssignment></listOfEventAssignments></event></listOfEvents>");
}

// A fast S1 → S2 at rate piecewise(S1·k, k > 0, S2·k) with k' = −1 from k = 1.5: everything is
// S2 while k > 0 (from t0 on: the start is at equilibrium), everything S1 once k < 0, and at
// k = 0 (t = 1.5) both sides of the equilibrium vanish. S1 + S2 = S1(0) + S2(0) throughout.
constexpr double kSwS1 = 3, kSwS2 = 2;
std::string degenerateAtSwitch() {
  return documentL3V1(
      "<listOfSpecies>" + species("S1", kSwS1) + species("S2", kSwS2) +
      "</listOfSpecies><listOfParameters>" + parameter("k", 1.5, false) +
      "</listOfParameters><listOfRules><rateRule variable=\"k\">" + math("<cn>-1</cn>") +
      "</rateRule></listOfRules><listOfReactions>" +
      reaction("J0", "S1", "S2",
               "<piecewise><piece>" + times("S1", "k") +
                   "<apply><gt/><ci>k</ci><cn>0</cn></apply></piece><otherwise>" +
                   times("S2", "k") + "</otherwise></piecewise>",
               "true") +
      "</listOfReactions>");
}

std::shared_ptr<const sensode::symbolic::CompiledModel> compile(const std::string& xml) {
  return std::make_shared<const sensode::symbolic::CompiledModel>(
      sensode::symbolic::buildOdeSystem(sensode::model::importSbmlString(xml, "dae.xml")));
}

sensode::tasks::TimeCourseResult timeCourse(
    std::shared_ptr<const sensode::symbolic::CompiledModel> model, Method method,
    const std::vector<double>& t, const std::vector<std::string>& outputs) {
  sensode::tasks::TimeCourseProblem problem;
  problem.model = std::move(model);
  problem.times = t;
  problem.outputs = outputs;
  sensode::tasks::TimeCourseOptions options;
  options.method = method;
  options.integrator.rtol = 1e-10;
  options.integrator.atol = 1e-12;
  return sensode::tasks::runTimeCourse(problem, options);
}

sensode::tasks::SensitivityResult sensitivities(
    std::shared_ptr<const sensode::symbolic::CompiledModel> model, SensitivityMethod method,
    const std::vector<double>& t, const std::vector<std::string>& outputs,
    const std::vector<std::string>& params) {
  sensode::tasks::SensitivityProblem problem;
  problem.model = std::move(model);
  problem.times = t;
  problem.outputs = outputs;
  problem.parameters = params;
  sensode::tasks::SensitivityOptions options;
  options.method = method;
  options.integrator.rtol = 1e-10;
  options.integrator.atol = 1e-12;
  return sensode::tasks::runSensitivities(problem, options);
}

bool mentions(const std::vector<std::string>& sentences, const std::string& word) {
  return std::any_of(sentences.begin(), sentences.end(),
                     [&](const std::string& s) { return s.find(word) != std::string::npos; });
}

#define EXPECT_CLOSE(actual, expected, atol, rtol, what, index)                              \
  QVERIFY2(sensode::test::withinTolerance(actual, expected, atol, rtol),                     \
           sensode::test::closeMessage(actual, expected, atol, rtol, what, index).c_str())

const std::vector<double> kTimes{0, 0.1, 0.5, 1, 2, 5, 10};

void methods() {
  QTest::addColumn<Method>("method");
  QTest::newRow("cvodes") << Method::Cvodes;
  QTest::newRow("odesd") << Method::OdeSd;
}

}  // namespace

class TestDae : public QObject {
  Q_OBJECT

 private slots:
  void linearDaeIsADae() {
    const auto model = compile(::linearDae());
    const auto& sys = model->system();
    QVERIFY(sys.isDae());
    const int y = sys.findState("y");
    QVERIFY(y >= 0);
    QVERIFY(sys.states[static_cast<std::size_t>(y)].algebraic);
    QCOMPARE(sys.states[static_cast<std::size_t>(y)].constraint,
             std::string("algebraic rule 'balance'"));
  }

  // x and y against the closed form; requested odeSD or CVODES, IDAS runs and the statistics
  // say so.
  void linearDae_data() { methods(); }
  void linearDae() {
    QFETCH(Method, method);
    const auto r = timeCourse(compile(::linearDae()), method, kTimes, {"x", "y"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    QVERIFY2(mentions(r.stats.fallbacks, "IDAS"), "no fallback sentence naming IDAS");
    for (std::size_t i = 0; i < kTimes.size(); ++i) {
      const double x = linearX(kTimes[i]);
      EXPECT_CLOSE(r.at(i, 0), x, 1e-9, 1e-7, "x", static_cast<long>(i));
      EXPECT_CLOSE(r.at(i, 1), (kT - x) / kA, 1e-9, 1e-7, "y", static_cast<long>(i));
    }
  }

  // An inconsistent start (y = 1 in the file; the rule gives y = (3 − 2)/2 = 0.5): the output at
  // t0 is already consistent.
  void initialValuesAreConsistent() {
    const auto r = timeCourse(compile(::linearDae()), Method::Cvodes, {0, 1}, {"y"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    EXPECT_CLOSE(r.at(0, 0), (kT - kX0) / kA, 1e-12, 1e-12, "y(0)", 0);
  }

  // IDAS forward sensitivities: dx/dk against the closed form, dy/dk = −(dx/dk)/a; every
  // parameter against finite differences.
  void linearDaeSensitivities() {
    const auto model = compile(::linearDae());
    const auto r = sensitivities(model, SensitivityMethod::Cvodes, kTimes, {"x", "y"},
                                 {"k", "b", "a", "T", "x"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    for (std::size_t i = 0; i < kTimes.size(); ++i) {
      EXPECT_CLOSE(r.at(i, 0, 0), linearDxDk(kTimes[i]), 1e-8, 1e-6, "dx/dk", static_cast<long>(i));
      EXPECT_CLOSE(r.at(i, 1, 0), -linearDxDk(kTimes[i]) / kA, 1e-8, 1e-6, "dy/dk",
                   static_cast<long>(i));
    }
    const auto fd = sensitivities(model, SensitivityMethod::FiniteDifferences, kTimes,
                                  {"x", "y"}, {"k", "b", "a", "T", "x"});
    QVERIFY2(fd.termination == Termination::Success, fd.message.c_str());
    for (std::size_t v = 0; v < r.values.size(); ++v)
      EXPECT_CLOSE(r.values[v], fd.values[v], 1e-6, 1e-5, "dy/dp vs FD", static_cast<long>(v));
  }

  // PBSR needs an ODE: the task computes IDAS forward sensitivities and says so.
  void pbsrFallsBackToIdas() {
    const auto r = sensitivities(compile(::linearDae()), SensitivityMethod::Pbsr, kTimes, {"x"},
                                 {"k"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    QVERIFY2(mentions(r.stats.fallbacks, "IDAS"), "no fallback sentence naming IDAS");
    for (std::size_t i = 0; i < kTimes.size(); ++i)
      EXPECT_CLOSE(r.at(i, 0, 0), linearDxDk(kTimes[i]), 1e-8, 1e-6, "dx/dk", static_cast<long>(i));
  }

  // 0 = x + y − T with a coefficient 1: y = T − x, an assignment rule; no DAE, no fallback.
  void linearRuleIsSolvedSymbolically() {
    std::string xml = ::linearDae();
    const std::string from = "<apply><times/><ci>a</ci><ci>y</ci></apply>";
    xml.replace(xml.find(from), from.size(), "<ci>y</ci>");
    const auto model = compile(xml);
    QVERIFY(!model->system().isDae());
    QCOMPARE(model->system().findState("y"), -1);
    const auto r = timeCourse(model, Method::OdeSd, kTimes, {"x", "y"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    QVERIFY(!mentions(r.stats.fallbacks, "IDAS"));
    // x' = −k·x + b·(T − x): the closed form with a = 1.
    for (std::size_t i = 0; i < kTimes.size(); ++i) {
      const double lambda = kK + kB, xInf = kB * kT / lambda;
      const double x = xInf + (kX0 - xInf) * std::exp(-lambda * kTimes[i]);
      EXPECT_CLOSE(r.at(i, 0), x, 1e-9, 1e-7, "x", static_cast<long>(i));
      EXPECT_CLOSE(r.at(i, 1), kT - x, 1e-9, 1e-7, "y", static_cast<long>(i));
    }
  }

  // The fast pair against the reduced ODE: A = (1 − q)·w, B = q·w.
  void rapidEquilibrium_data() { methods(); }
  void rapidEquilibrium() {
    QFETCH(Method, method);
    const auto model = compile(::rapidEquilibrium());
    QVERIFY(model->system().isDae());
    const auto r = timeCourse(model, method, kTimes, {"A", "B"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    const double q = kKf / (kKf + kKr);
    for (std::size_t i = 0; i < kTimes.size(); ++i) {
      EXPECT_CLOSE(r.at(i, 0), (1 - q) * pooled(kTimes[i]), 1e-9, 1e-7, "A", static_cast<long>(i));
      EXPECT_CLOSE(r.at(i, 1), q * pooled(kTimes[i]), 1e-9, 1e-7, "B", static_cast<long>(i));
    }
  }

  // An event that adds 1 to A at t = 2 adds 1 to the pool: w = (w(2⁻) + 1)·e^{−k·q·(t − 2)}
  // afterwards, shared between A and B at equilibrium again.
  void eventChangesThePool() {
    std::string xml = ::rapidEquilibrium();
    const std::string timeGeq2 =
        "<apply><geq/><csymbol encoding=\"text\" "
        "definitionURL=\"http://www.sbml.org/sbml/symbols/time\">time</csymbol><cn>2</cn></apply>";
    const std::string event =
        "<listOfEvents><event id=\"dose\" useValuesFromTriggerTime=\"true\"><trigger "
        "initialValue=\"false\" persistent=\"true\">" + math(timeGeq2) +
        "</trigger><listOfEventAssignments><eventAssignment variable=\"A\">" +
        math("<apply><plus/><ci>A</ci><cn>1</cn></apply>") +
        "</eventAssignment></listOfEventAssignments></event></listOfEvents>";
    xml.insert(xml.find("</model>"), event);
    const std::vector<double> t{0, 1, 2, 3, 5};
    const auto r = timeCourse(compile(xml), Method::Cvodes, t, {"A", "B"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    const double q = kKf / (kKf + kKr);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double w = t[i] < 2 ? pooled(t[i])
                                : (pooled(2) + 1) * std::exp(-kKs * q * (t[i] - 2));
      EXPECT_CLOSE(r.at(i, 0), (1 - q) * w, 1e-8, 1e-6, "A", static_cast<long>(i));
      EXPECT_CLOSE(r.at(i, 1), q * w, 1e-8, 1e-6, "B", static_cast<long>(i));
    }
  }

  // dB/dk = q·w0·(−q·t)·e^{−k·q·t} and dB/dkf (closed form through q), plus FD for all.
  void rapidEquilibriumSensitivities() {
    const auto model = compile(::rapidEquilibrium());
    const std::vector<std::string> params{"k", "kf", "kr", "A", "B"};
    const auto r = sensitivities(model, SensitivityMethod::Cvodes, kTimes, {"A", "B"}, params);
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    const double q = kKf / (kKf + kKr), w0 = kA0 + kB0;
    const double dqdkf = kKr / ((kKf + kKr) * (kKf + kKr));
    for (std::size_t i = 0; i < kTimes.size(); ++i) {
      const double t = kTimes[i], e = std::exp(-kKs * q * t);
      EXPECT_CLOSE(r.at(i, 1, 0), q * w0 * (-q * t) * e, 1e-8, 1e-6, "dB/dk", static_cast<long>(i));
      const double dBdkf = dqdkf * w0 * e + q * w0 * (-kKs * t * dqdkf) * e;
      EXPECT_CLOSE(r.at(i, 1, 1), dBdkf, 1e-8, 1e-6, "dB/dkf", static_cast<long>(i));
    }
    const auto fd =
        sensitivities(model, SensitivityMethod::FiniteDifferences, kTimes, {"A", "B"}, params);
    QVERIFY2(fd.termination == Termination::Success, fd.message.c_str());
    for (std::size_t v = 0; v < r.values.size(); ++v)
      EXPECT_CLOSE(r.values[v], fd.values[v], 1e-6, 1e-5, "dy/dp vs FD", static_cast<long>(v));
  }

  // Rapid equilibrium degenerate at t0 (k = 0): every task falls back to the stiff surrogate,
  // says so, and matches the closed form; sensitivities match it too (dB/dA0 = e^{−ks·(t−1)}
  // after the event, dB/dks by the chain rule).
  void degenerateEquilibriumFallsBackToStiffSurrogate_data() { methods(); }
  void degenerateEquilibriumFallsBackToStiffSurrogate() {
    QFETCH(Method, method);
    const auto model = compile(::degenerateUntilEvent());
    QVERIFY(model->system().isDae());
    QVERIFY(model->fastReactionSurrogate() != nullptr);
    QVERIFY(!model->fastReactionSurrogate()->system().isDae());
    const std::vector<double> t{0, 0.5, 1.5, 2, 4};
    const auto r = timeCourse(model, method, t, {"A", "B"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    QVERIFY(mentions(r.stats.fallbacks, "10^8 times faster"));
    const double b1 = kDegB0 * std::exp(-kDegKs) + kDegA0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const bool after = t[i] > 1;
      const double a = after ? 0 : kDegA0;
      const double b = after ? b1 * std::exp(-kDegKs * (t[i] - 1)) : kDegB0 * std::exp(-kDegKs * t[i]);
      EXPECT_CLOSE(r.at(i, 0), a, 1e-7, 1e-6, "A", static_cast<long>(i));
      EXPECT_CLOSE(r.at(i, 1), b, 1e-7, 1e-6, "B", static_cast<long>(i));
    }
    const auto s = sensitivities(model, method == Method::OdeSd ? SensitivityMethod::OdeSd
                                                                : SensitivityMethod::Cvodes,
                                 t, {"B"}, {"A", "ks"});
    QVERIFY2(s.termination == Termination::Success, s.message.c_str());
    QVERIFY(mentions(s.stats.fallbacks, "10^8 times faster"));
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double e0 = std::exp(-kDegKs), tt = t[i];
      const double dBdA0 = tt > 1 ? std::exp(-kDegKs * (tt - 1)) : 0;
      const double dBdks = tt > 1 ? -kDegB0 * e0 * std::exp(-kDegKs * (tt - 1)) -
                                        (tt - 1) * b1 * std::exp(-kDegKs * (tt - 1))
                                  : -tt * kDegB0 * std::exp(-kDegKs * tt);
      EXPECT_CLOSE(s.at(i, 0, 0), dBdA0, 1e-6, 1e-5, "dB/dA0", static_cast<long>(i));
      EXPECT_CLOSE(s.at(i, 0, 1), dBdks, 1e-6, 1e-5, "dB/dks", static_cast<long>(i));
    }
  }

  // Degenerate in mid-run (k crosses 0 at t = 1.5): IDAS fails there, the surrogate runs from
  // the same consistent start (S1 = 0, S2 = 5 at t0) and moves everything to S1 after the
  // switch; its sensitivities to the initial values agree with finite differences.
  void degenerateSwitchFallsBackToStiffSurrogate() {
    const auto model = compile(::degenerateAtSwitch());
    const std::vector<double> t{0, 1, 2, 3};
    const auto r = timeCourse(model, Method::OdeSd, t, {"S1", "S2"});
    QVERIFY2(r.termination == Termination::Success, r.message.c_str());
    QVERIFY(mentions(r.stats.fallbacks, "rapid equilibrium of the fast reactions failed"));
    const double total = kSwS1 + kSwS2;
    for (std::size_t i = 0; i < t.size(); ++i) {
      EXPECT_CLOSE(r.at(i, 0), t[i] < 1.5 ? 0 : total, 1e-7, 1e-6, "S1", static_cast<long>(i));
      EXPECT_CLOSE(r.at(i, 1), t[i] < 1.5 ? total : 0, 1e-7, 1e-6, "S2", static_cast<long>(i));
    }
    const std::vector<std::string> params{"S1", "S2"};
    const auto s = sensitivities(model, SensitivityMethod::OdeSd, t, {"S1", "S2"}, params);
    QVERIFY2(s.termination == Termination::Success, s.message.c_str());
    const auto fd =
        sensitivities(model, SensitivityMethod::FiniteDifferences, t, {"S1", "S2"}, params);
    QVERIFY2(fd.termination == Termination::Success, fd.message.c_str());
    for (std::size_t i = 0; i < t.size(); ++i)
      for (std::size_t p = 0; p < params.size(); ++p) {  // the total moves as a whole
        EXPECT_CLOSE(s.at(i, 0, p), t[i] < 1.5 ? 0 : 1, 1e-6, 1e-5, "dS1/dp", static_cast<long>(i));
        EXPECT_CLOSE(s.at(i, 1, p), t[i] < 1.5 ? 1 : 0, 1e-6, 1e-5, "dS2/dp", static_cast<long>(i));
      }
    for (std::size_t v = 0; v < s.values.size(); ++v)
      EXPECT_CLOSE(s.values[v], fd.values[v], 1e-6, 1e-5, "dy/dp vs FD", static_cast<long>(v));
  }

  // 0 = y² + 1 has no real solution: the run fails with a message naming the rule.
  void unsatisfiableRuleIsNamed() {
    const std::string xml = document(
        "<listOfParameters>" + parameter("y", 1, false) +
        "</listOfParameters><listOfRules><algebraicRule id=\"impossible\">" +
        math("<apply><plus/>" + times("y", "y") + "<cn>1</cn></apply>") +
        "</algebraicRule></listOfRules>");
    const auto r = timeCourse(compile(xml), Method::Cvodes, {0, 1}, {"y"});
    QVERIFY(r.termination != Termination::Success);
    QVERIFY2(r.message.find("'impossible'") != std::string::npos, r.message.c_str());
  }

  // A rule in constants only determines nothing: the model is overdetermined, an SbmlError
  // (libSBML's own check 10601 catches it first on small models; the ODE builder's matching,
  // which names the rule, on the large ones libSBML's checks skip).
  void overdeterminedModelIsRefused() {
    const std::string xml =
        document("<listOfParameters>" + parameter("T", 3) +
                 "</listOfParameters><listOfRules><algebraicRule id=\"extra\">" +
                 math("<apply><minus/><ci>T</ci><cn>3</cn></apply>") +
                 "</algebraicRule></listOfRules>");
    try {
      compile(xml);
      QFAIL("an overdetermined model was accepted");
    } catch (const sensode::SbmlError& e) {
      QVERIFY2(std::string(e.what()).find("overdetermined") != std::string::npos, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDae)
#include "tst_dae.moc"
