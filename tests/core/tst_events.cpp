// SPDX-License-Identifier: MIT
// SBML events through the simulation driver (core/simulation), with both integrators, against
// closed-form solutions: a dose into a first-order decay (a time event), a threshold event whose
// time is known analytically, a cascade ordered by priorities, a delayed non-persistent event
// that is cancelled, and an event at t0 (sensitivities and steady states across events:
// tst_event_sensitivities, tst_event_steady_states).
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/model/sbml_importer.h"
#include "core/simulation/event_simulation.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/time_course_task.h"
#include "support/event_models.h"

using sensode::integrators::Method;
Q_DECLARE_METATYPE(sensode::integrators::Method)

namespace {

// The SBML snippets (tests/support/event_models.h) under this file's short names.
const char* const& kTime = sensode::testing::kMathTime;
using sensode::testing::eventXml;
using sensode::testing::math;
std::string document(const std::string& body) { return sensode::testing::sbmlDocument(body); }
std::string decay(const std::string& extraParameters, const std::string& events) {
  return sensode::testing::decayWithEvents(extraParameters, events);
}
std::string assign(const std::string& variable, const std::string& body) {
  return sensode::testing::eventAssignment(variable, body);
}
std::shared_ptr<const sensode::symbolic::CompiledModel> compile(const std::string& xml) {
  return sensode::testing::compileSbml(xml);
}

sensode::tasks::TimeCourseResult timeCourse(
    std::shared_ptr<const sensode::symbolic::CompiledModel> model, Method method,
    std::vector<double> times, std::vector<std::string> outputs) {
  sensode::tasks::TimeCourseProblem problem;
  problem.model = std::move(model);
  problem.times = std::move(times);
  problem.outputs = std::move(outputs);
  sensode::tasks::TimeCourseOptions options;
  options.method = method;
  options.integrator.rtol = 1e-10;
  options.integrator.atol = 1e-12;
  return sensode::tasks::runTimeCourse(problem, options);
}

void methods() {
  QTest::addColumn<Method>("method");
  QTest::newRow("cvodes") << Method::Cvodes;
  QTest::newRow("odesd") << Method::OdeSd;
}

bool close(double actual, double expected, double rel) {
  return std::abs(actual - expected) <= rel * std::max(1.0, std::abs(expected));
}

}  // namespace

class TestEvents : public QObject {
  Q_OBJECT

 private slots:
  // A dose D = 4 at t = 5 into x' = −k x: x = 10 e^{−kt} before, (10 e^{−5k} + D) e^{−k(t−5)}
  // after; the output at t = 5 is the state after the dose.
  void doseIntoDecay_data() { methods(); }
  void doseIntoDecay() {
    QFETCH(Method, method);
    const auto model = compile(decay(
        "", eventXml("dose", "<apply><geq/>" + std::string(kTime) + "<cn>5</cn></apply>",
                  assign("x", "<apply><plus/><ci>x</ci><cn>4</cn></apply>"))));
    const std::vector<double> times{0, 2.5, 4.999, 5, 5.5, 7, 10};
    const auto r = timeCourse(model, method, times, {"x"});
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    const double k = 0.3;
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double t = times[i];
      const double expected =
          t < 5 ? 10 * std::exp(-k * t) : (10 * std::exp(-5 * k) + 4) * std::exp(-k * (t - 5));
      QVERIFY2(close(r.at(i, 0), expected, 1e-7),
               qPrintable(QString("t = %1: %2 vs %3").arg(t).arg(r.at(i, 0)).arg(expected)));
    }
  }

  // With eventRows the dose shows as two rows at t = 5: just before and just after.
  void eventRowsShowBeforeAndAfter() {
    sensode::tasks::TimeCourseProblem problem;
    problem.model = compile(decay(
        "", eventXml("dose", "<apply><geq/>" + std::string(kTime) + "<cn>5</cn></apply>",
                     assign("x", "<apply><plus/><ci>x</ci><cn>4</cn></apply>"))));
    problem.times = {0, 10};
    problem.outputs = {"x"};
    problem.eventRows = true;
    sensode::tasks::TimeCourseOptions options;
    options.integrator.rtol = 1e-10;
    const auto r = sensode::tasks::runTimeCourse(problem, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    QCOMPARE(r.times, (std::vector<double>{0, 5, 5, 10}));
    QCOMPARE(r.eventTimes, std::vector<double>{5});
    const double before = 10 * std::exp(-1.5);
    QVERIFY(close(r.at(1, 0), before, 1e-7));
    QVERIFY(close(r.at(2, 0), before + 4, 1e-7));
  }

  // x < 2 resets x to 10: the event fires every ln(5)/k, located on the dense output.
  void thresholdTimesAreAnalytic_data() { methods(); }
  void thresholdTimesAreAnalytic() {
    QFETCH(Method, method);
    const auto model = compile(decay(
        "", eventXml("reset", "<apply><lt/><ci>x</ci><cn>2</cn></apply>", assign("x", "<cn>10</cn>"))));
    sensode::integrators::IntegratorOptions options;
    options.rtol = 1e-10;
    options.atol = 1e-12;
    sensode::simulation::EventSimulation sim(model, method, options);
    const std::vector<double> p = model->nominalParameters();
    std::vector<double> x0(static_cast<std::size_t>(model->nx()));
    model->initialState(0, p.data(), x0.data());
    std::vector<double> last;
    sim.run(0, x0, p, {0, 20}, [&](double, const double* x) { last.assign(x, x + 1); });
    const double period = std::log(5.0) / 0.3;  // 5.36: three resets before t = 20
    QCOMPARE(static_cast<int>(sim.executions().size()), 3);
    for (int n = 0; n < 3; ++n) {
      const double t = sim.executions()[static_cast<std::size_t>(n)].time;
      QVERIFY2(close(t, (n + 1) * period, 1e-8),
               qPrintable(QString("reset %1 at %2, expected %3").arg(n).arg(t).arg((n + 1) * period)));
    }
    QVERIFY(close(last[0], 10 * std::exp(-0.3 * (20 - 3 * period)), 1e-7));
    QCOMPARE(sim.restarts(), 3);
  }

  // At t >= 1: A (priority 2) sets a = 1, B (priority 1) sets b = a + 1 from the execution time,
  // C is triggered by A's assignment (a > 0.5) at the same time and records the time. Priorities
  // order A before B, so b = 2; swapping them gives b = 1.
  void cascadeFollowsPriorities_data() {
    methods();
  }
  void cascadeFollowsPriorities() {
    QFETCH(Method, method);
    for (const bool aFirst : {true, false}) {
      const std::string t1 = "<apply><geq/>" + std::string(kTime) + "<cn>1</cn></apply>";
      auto priority = [](int v) {
        return "<priority>" + math("<cn>" + std::to_string(v) + "</cn>") + "</priority>";
      };
      const std::string events =
          eventXml("A", t1, assign("a", "<cn>1</cn>"), priority(aFirst ? 2 : 1)) +
          eventXml("B", t1, assign("b", "<apply><plus/><ci>a</ci><cn>1</cn></apply>"),
                priority(aFirst ? 1 : 2), R"(initialValue="true" persistent="true")",
                R"(useValuesFromTriggerTime="false")") +
          eventXml("C", "<apply><gt/><ci>a</ci><cn>0.5</cn></apply>", assign("when", kTime));
      const auto model = compile(decay(R"(<parameter id="a" value="0" constant="false"/>
        <parameter id="b" value="0" constant="false"/>
        <parameter id="when" value="-1" constant="false"/>)",
                                       events));
      const auto r = timeCourse(model, method, {0, 0.5, 1, 2}, {"a", "b", "when"});
      QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
      QCOMPARE(r.at(1, 1), 0.0);  // nothing before t = 1
      QCOMPARE(r.at(2, 0), 1.0);
      QCOMPARE(r.at(2, 1), aFirst ? 2.0 : 1.0);
      QVERIFY(close(r.at(3, 2), 1.0, 1e-9));  // C fired at t = 1, in the same cascade
    }
  }

  // y' = 1 from 0; "y > 5" with delay 3 sets z = 1 (due at t = 8); a time event at t = 6 sets
  // y = 0, turning the trigger false. Non-persistent: cancelled (z stays 0); persistent: z = 1
  // from t = 8.
  void nonPersistentDelayedEventIsCancelled_data() { methods(); }
  void nonPersistentDelayedEventIsCancelled() {
    QFETCH(Method, method);
    for (const bool persistent : {false, true}) {
      const std::string xml = document(R"(
        <listOfParameters>
          <parameter id="y" value="0" constant="false"/>
          <parameter id="z" value="0" constant="false"/>
        </listOfParameters>
        <listOfRules><rateRule variable="y">)" + math("<cn>1</cn>") + R"(</rateRule></listOfRules>
        <listOfEvents>)" +
          eventXml("late", "<apply><gt/><ci>y</ci><cn>5</cn></apply>", assign("z", "<cn>1</cn>"),
                "<delay>" + math("<cn>3</cn>") + "</delay>",
                std::string(R"(initialValue="true" persistent=")") +
                    (persistent ? "true" : "false") + "\"") +
          eventXml("drop", "<apply><geq/>" + std::string(kTime) + "<cn>6</cn></apply>",
                assign("y", "<cn>0</cn>")) +
          "</listOfEvents>");
      // (8.1, not 8: "y > 5" switches just after t = 5, so the execution is due just after 8.)
      const auto r = timeCourse(compile(xml), method, {0, 5.5, 7.9, 8.1, 10}, {"y", "z"});
      QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
      QVERIFY(close(r.at(1, 0), 5.5, 1e-9));
      QVERIFY(close(r.at(4, 0), 4.0, 1e-9));  // 0 at t = 6, slope 1
      QCOMPARE(r.at(2, 1), 0.0);
      QCOMPARE(r.at(3, 1), persistent ? 1.0 : 0.0);
      QCOMPARE(r.at(4, 1), persistent ? 1.0 : 0.0);
    }
  }

  // initialValue = false with a trigger true at t0: the event fires at t0, before the output.
  void eventAtT0_data() { methods(); }
  void eventAtT0() {
    QFETCH(Method, method);
    const auto model = compile(decay(
        "", eventXml("start", "<apply><lt/>" + std::string(kTime) + "<cn>1</cn></apply>",
                  assign("x", "<cn>2</cn>"), "", R"(initialValue="false" persistent="true")")));
    const auto r = timeCourse(model, method, {0, 1}, {"x"});
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    QCOMPARE(r.at(0, 0), 2.0);
    QVERIFY(close(r.at(1, 0), 2 * std::exp(-0.3), 1e-7));
  }

  // A species assigned in concentration gets amount = value × size (size 2 here).
  void concentrationAssignmentScalesBySize() {
    const std::string xml = document(R"(
      <listOfCompartments><compartment id="c" size="2" constant="true"/></listOfCompartments>
      <listOfSpecies><species id="s" compartment="c" initialConcentration="1"
        hasOnlySubstanceUnits="false" boundaryCondition="true" constant="false"/></listOfSpecies>
      <listOfEvents>)" + eventXml("set", "<apply><geq/>" + std::string(kTime) + "<cn>1</cn></apply>",
                               assign("s", "<cn>3</cn>")) +
                                     "</listOfEvents>");
    sensode::tasks::TimeCourseProblem problem;
    problem.model = compile(xml);
    problem.times = {0, 2};
    problem.outputs = {"s"};
    problem.forceAmount = {"s"};
    const auto r = sensode::tasks::runTimeCourse(problem, {});
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    QCOMPARE(r.at(0, 0), 2.0);
    QCOMPARE(r.at(1, 0), 6.0);
  }

  // A negative delay is an error naming the event, not a silent schedule in the past.
  void negativeDelayIsAnError() {
    const auto model = compile(decay(
        "", eventXml("bad", "<apply><geq/>" + std::string(kTime) + "<cn>1</cn></apply>",
                  assign("x", "<cn>1</cn>"), "<delay>" + math("<cn>-1</cn>") + "</delay>")));
    const auto r = timeCourse(model, Method::Cvodes, {0, 2}, {"x"});
    QVERIFY(r.termination != sensode::tasks::Termination::Success);
    QVERIFY2(r.message.find("'bad'") != std::string::npos, r.message.c_str());
    QVERIFY2(r.message.find("delay") != std::string::npos, r.message.c_str());
  }

  // Forward sensitivities jump at a time event: x = (10 e^{−5k} + D) e^{−k(t−5)} after the dose,
  // so ∂x/∂k = −5·10 e^{−5k} e^{−k(t−5)} − (t−5) x and ∂x/∂D = e^{−k(t−5)} (dτ/dp = 0).
  void sensitivitiesJumpAtDose_data() { methods(); }
  void sensitivitiesJumpAtDose() {
    QFETCH(Method, method);
    sensode::tasks::SensitivityProblem sp;
    sp.model = compile(decay(
        R"(<parameter id="D" value="4" constant="true"/>)",
        eventXml("dose", "<apply><geq/>" + std::string(kTime) + "<cn>5</cn></apply>",
                 assign("x", "<apply><plus/><ci>x</ci><ci>D</ci></apply>"))));
    sp.times = {0, 3, 5, 8};
    sp.outputs = {"x"};
    sp.parameters = {"k", "D"};
    sensode::tasks::SensitivityOptions options;
    options.method = method == Method::Cvodes ? sensode::tasks::SensitivityMethod::Cvodes
                                               : sensode::tasks::SensitivityMethod::OdeSd;
    options.integrator.rtol = 1e-10;
    options.integrator.atol = 1e-12;
    const auto r = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    const double k = 0.3;
    for (std::size_t it = 0; it < sp.times.size(); ++it) {
      const double t = sp.times[it];
      double dk, dD;
      if (t < 5) {
        dk = -t * 10 * std::exp(-k * t);
        dD = 0;
      } else {
        const double decay = std::exp(-k * (t - 5));
        dk = -5 * 10 * std::exp(-5 * k) * decay - (t - 5) * (10 * std::exp(-5 * k) + 4) * decay;
        dD = decay;
      }
      QVERIFY2(close(r.at(it, 0, 0), dk, 1e-6),
               qPrintable(QString("t = %1: dx/dk %2 vs %3").arg(t).arg(r.at(it, 0, 0)).arg(dk)));
      QVERIFY2(close(r.at(it, 0, 1), dD, 1e-6),
               qPrintable(QString("t = %1: dx/dD %2 vs %3").arg(t).arg(r.at(it, 0, 1)).arg(dD)));
    }
  }

  // A threshold event whose time depends on k: x < 2 resets x to 10 at τ = ln 5 / k, and
  // dτ/dk = −τ/k gives ∂x/∂k = −t·x on (τ, 2τ) (−t·x before τ too).
  void sensitivitiesJumpAtThreshold_data() { methods(); }
  void sensitivitiesJumpAtThreshold() {
    QFETCH(Method, method);
    sensode::tasks::SensitivityProblem sp;
    sp.model = compile(decay(
        "", eventXml("reset", "<apply><lt/><ci>x</ci><cn>2</cn></apply>",
                     assign("x", "<cn>10</cn>"))));
    const double k = 0.3, tau = std::log(5.0) / k;
    sp.times = {0, 2, tau - 0.5, tau + 0.5, 8, 10};
    sp.outputs = {"x"};
    sp.parameters = {"k"};
    sensode::tasks::SensitivityOptions options;
    options.method = method == Method::Cvodes ? sensode::tasks::SensitivityMethod::Cvodes
                                               : sensode::tasks::SensitivityMethod::OdeSd;
    options.integrator.rtol = 1e-10;
    options.integrator.atol = 1e-12;
    const auto r = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    for (std::size_t it = 0; it < sp.times.size(); ++it) {
      const double t = sp.times[it];
      const double x = t < tau ? 10 * std::exp(-k * t) : 10 * std::exp(-k * (t - tau));
      QVERIFY2(close(r.at(it, 0, 0), -t * x, 1e-6),
               qPrintable(QString("t = %1: dx/dk %2 vs %3").arg(t).arg(r.at(it, 0, 0)).arg(-t * x)));
    }
  }

  // Suite case 00349 (S1 < 0.75 sets S2 = 1; S3 > 1.4 sets S1 = 1; mass action): the direct
  // sensitivities with their jumps against central finite differences of the whole simulation
  // (which steps across the events through the same driver), every parameter, t = 0..5, to
  // 1e-4 of each column's largest value (FD's own error near the events is ~1e-5).
  void sensitivitiesAgreeWithFiniteDifferences_data() { methods(); }
  void sensitivitiesAgreeWithFiniteDifferences() {
    QFETCH(Method, method);
    const auto path = std::filesystem::path(SENSODE_SHARED_DIR) / "sbml-test-suite" / "cases" /
                      "00349" / "00349-sbml-l3v2.xml";
    if (!std::filesystem::exists(path)) QSKIP("no SBML Test Suite in the shared folder");
    sensode::tasks::SensitivityProblem sp;
    sp.model = std::make_shared<const sensode::symbolic::CompiledModel>(
        sensode::symbolic::buildOdeSystem(sensode::model::importSbmlFile(path)));
    sp.times = {0, 1, 2, 3, 4, 5};
    sensode::tasks::SensitivityOptions options;
    options.integrator.rtol = 1e-9;
    options.integrator.atol = 1e-13;
    options.method = sensode::tasks::SensitivityMethod::FiniteDifferences;
    const auto fd = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(fd.termination == sensode::tasks::Termination::Success, fd.message.c_str());
    options.method = method == Method::Cvodes ? sensode::tasks::SensitivityMethod::Cvodes
                                               : sensode::tasks::SensitivityMethod::OdeSd;
    const auto r = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    const std::size_t ny = r.outputIds.size(), np = r.parameterIds.size();
    QVERIFY(np >= 4);
    for (std::size_t iy = 0; iy < ny; ++iy)
      for (std::size_t ip = 0; ip < np; ++ip) {
        double scale = 1;
        for (std::size_t it = 0; it < sp.times.size(); ++it)
          scale = std::max(scale, std::abs(fd.at(it, iy, ip)));
        for (std::size_t it = 0; it < sp.times.size(); ++it)
          QVERIFY2(std::abs(r.at(it, iy, ip) - fd.at(it, iy, ip)) <= 1e-4 * scale,
                   qPrintable(QString("d%1/d%2 at t = %3: %4 vs fd %5")
                                  .arg(QString::fromStdString(r.outputIds[iy]),
                                       QString::fromStdString(r.parameterIds[ip]))
                                  .arg(sp.times[it])
                                  .arg(r.at(it, iy, ip))
                                  .arg(fd.at(it, iy, ip))));
      }
  }

  // Suite case 00026 imports with its event (it was refused before events were supported).
  // A stiff decay (k = 1000): inside odeSD's long steps each dense output is an implicit
  // sub-step. Scanning the steps for a trigger adds none: on time alone it reads no state, and on
  // a state it is sampled at the output times inside the step, whose values the outputs then
  // reuse. With an event that never fires (t ≥ 1000, or x > 1e6; outputs every 0.1 to t = 10)
  // the run costs the evaluations and LUs of the run without it, and gives the same values.
  void scanningForTriggersCostsNoDenseOutput_data() {
    QTest::addColumn<QString>("trigger");
    QTest::newRow("time") << "<apply><geq/>" + QString(kTime) + "<cn>1000</cn></apply>";
    QTest::newRow("state") << "<apply><gt/><ci>x</ci><cn>1e6</cn></apply>";
  }
  void scanningForTriggersCostsNoDenseOutput() {
    QFETCH(QString, trigger);
    auto stiff = [](const std::string& events) {
      std::string xml = decay("", events);
      const std::string k = R"(id="k" value="0.3")";
      xml.replace(xml.find(k), k.size(), R"(id="k" value="1000")");
      return compile(xml);
    };
    std::vector<double> times;
    for (int i = 0; i <= 100; ++i) times.push_back(0.1 * i);
    const auto plain = timeCourse(stiff(""), Method::OdeSd, times, {"x"});
    const auto withEvent = timeCourse(
        stiff(eventXml("never", trigger.toStdString(), assign("x", "<cn>0</cn>"))), Method::OdeSd,
        times, {"x"});
    QVERIFY2(plain.termination == sensode::tasks::Termination::Success, plain.message.c_str());
    QVERIFY2(withEvent.termination == sensode::tasks::Termination::Success,
             withEvent.message.c_str());
    QVERIFY2(plain.stats.luFactorizations > 50,  // the dense output's sub-steps are there
             qPrintable(QString::number(plain.stats.luFactorizations)));
    QCOMPARE(withEvent.stats.rhsEvals, plain.stats.rhsEvals);
    QCOMPARE(withEvent.stats.luFactorizations, plain.stats.luFactorizations);
    for (std::size_t i = 0; i < times.size(); ++i) QCOMPARE(withEvent.at(i, 0), plain.at(i, 0));
  }

  void suiteEventImports() {
    const auto path = std::filesystem::path(SENSODE_SHARED_DIR) / "sbml-test-suite" / "cases" /
                      "00026" / "00026-sbml-l3v2.xml";
    if (!std::filesystem::exists(path)) QSKIP("no SBML Test Suite in the shared folder");
    const auto m = sensode::model::importSbmlFile(path);
    QCOMPARE(m.events.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(m.events[0].id), QStringLiteral("event1"));
    QVERIFY(!m.events[0].assignments.empty());
  }
};

QTEST_GUILESS_MAIN(TestEvents)
#include "tst_events.moc"
