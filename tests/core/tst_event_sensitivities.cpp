// SPDX-License-Identifier: MIT
// Sensitivities across events beyond the direct methods' relational triggers (issue 15): PBSR and
// Exp restarted on each event interval with the jumped S, delayed events (the jump at the
// execution, dτ/dp carried from the trigger), and triggers that are logical or piecewise
// expressions (the root function of the relational that switched). Every case has a closed-form
// S on a first-order decay x' = −k·x, x(0) = 10; a suite model is checked against finite
// differences.
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "core/model/sbml_importer.h"
#include "core/tasks/sensitivities_task.h"
#include "support/event_models.h"

using sensode::tasks::SensitivityMethod;
Q_DECLARE_METATYPE(sensode::tasks::SensitivityMethod)

namespace {

using sensode::testing::compileSbml;
using sensode::testing::decayWithEvents;
using sensode::testing::eventAssignment;
using sensode::testing::eventXml;
using sensode::testing::kMathTime;

// Every method that computes S itself, with the relative tolerance it meets on these smooth
// intervals at rtol 1e-10: the direct methods to their integration error (measured ≤ 2e-9), PBSR
// and Exp to their second-order propagation error on the integrator's step grid (measured: Exp
// 2.3e-5 throughout; PBSR growing smoothly with t, 3e-5 at t = 2, 1.1e-4 at t = 8 — the same
// before and after the events, so none of it comes from the jumps).
void methods() {
  QTest::addColumn<SensitivityMethod>("method");
  QTest::addColumn<double>("tolerance");
  QTest::newRow("odesd") << SensitivityMethod::OdeSd << 1e-6;
  QTest::newRow("cvodes") << SensitivityMethod::Cvodes << 1e-6;
  QTest::newRow("pbsr") << SensitivityMethod::Pbsr << 3e-4;
  QTest::newRow("exp") << SensitivityMethod::Exp << 1e-4;
}

sensode::tasks::SensitivityResult sensitivities(const std::string& xml, std::vector<double> times,
                                                std::vector<std::string> parameters,
                                                SensitivityMethod method) {
  sensode::tasks::SensitivityProblem sp;
  sp.model = compileSbml(xml);
  sp.times = std::move(times);
  sp.outputs = {"x"};
  sp.parameters = std::move(parameters);
  sensode::tasks::SensitivityOptions options;
  options.method = method;
  options.integrator.rtol = 1e-10;
  options.integrator.atol = 1e-12;
  // One exponential step per grid interval: merging trades accuracy for speed by its own
  // tolerance (1e-4 by default), which would hide an error at the events.
  options.peanoBaker.mergeTolerance = 0;
  return sensode::tasks::runSensitivities(sp, options);
}

// Compares dx/dp_j with expected(t) (one value per parameter) at every output time.
void compare(const sensode::tasks::SensitivityResult& r,
             const std::function<std::vector<double>(double t)>& expected, double tolerance) {
  QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
  for (std::size_t it = 0; it < r.times.size(); ++it) {
    const double t = r.times[it];
    const std::vector<double> want = expected(t);
    for (std::size_t ip = 0; ip < want.size(); ++ip)
      QVERIFY2(std::abs(r.at(it, 0, ip) - want[ip]) <=
                   tolerance * std::max(1.0, std::abs(want[ip])),
               qPrintable(QString("t = %1: dx/d%2 = %3, expected %4")
                              .arg(t)
                              .arg(QString::fromStdString(r.parameterIds[ip]))
                              .arg(r.at(it, 0, ip), 0, 'g', 12)
                              .arg(want[ip], 0, 'g', 12)));
  }
}

constexpr double kK = 0.3;

std::string timeAtLeast(const std::string& c) {
  return "<apply><geq/>" + std::string(kMathTime) + c + "</apply>";
}

std::string xBelow2() { return "<apply><lt/><ci>x</ci><cn>2</cn></apply>"; }

// x < 2 resets x to 10 at τ = ln 5 / k: dτ/dk = −τ/k, so ∂x/∂k = −t·x on both sides.
std::vector<double> thresholdReset(double t) {
  const double tau = std::log(5.0) / kK;
  const double x = t < tau ? 10 * std::exp(-kK * t) : 10 * std::exp(-kK * (t - tau));
  return {-t * x};
}

}  // namespace

class TestEventSensitivities : public QObject {
  Q_OBJECT

 private slots:
  // A dose D = 4 at t = 5 (a time event): x = 10 e^{−kt} before, (10 e^{−5k} + D) e^{−k(t−5)}
  // after; the output at t = 5 is the state after the dose. Output times repeat (allowed).
  void doseIntoDecay_data() { methods(); }
  void doseIntoDecay() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const auto r = sensitivities(
        decayWithEvents(R"(<parameter id="D" value="4" constant="true"/>)",
                        eventXml("dose", timeAtLeast("<cn>5</cn>"),
                                 eventAssignment("x", "<apply><plus/><ci>x</ci><ci>D</ci></apply>"))),
        {0, 3, 3, 5, 5, 6.5, 6.5, 8}, {"k", "D"}, method);
    compare(r, [](double t) -> std::vector<double> {
      if (t < 5) return {-t * 10 * std::exp(-kK * t), 0};
      const double decay = std::exp(-kK * (t - 5)), before = 10 * std::exp(-5 * kK);
      return {-5 * before * decay - (t - 5) * (before + 4) * decay, decay};
    }, tolerance);
  }

  // A threshold whose time depends on k (dτ/dk = −τ/k), output times on both sides of it.
  void thresholdTimeDependsOnParameter_data() { methods(); }
  void thresholdTimeDependsOnParameter() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const double tau = std::log(5.0) / kK;
    const auto r = sensitivities(
        decayWithEvents("", eventXml("reset", xBelow2(), eventAssignment("x", "<cn>10</cn>"))),
        {0, 2, tau - 0.5, tau + 0.5, 8, 10}, {"k"}, method);
    compare(r, thresholdReset, tolerance);
  }

  // The threshold reset delayed by d = 1.5 (a parameter): executed at τ_e = ln 5 / k + d with
  // x = 10, so x = 10 e^{−k(t − τ_e)} after it: ∂x/∂k = (d − t)·x, ∂x/∂d = k·x; before it
  // x = 10 e^{−kt} (∂x/∂k = −t·x, ∂x/∂d = 0).
  void delayedThreshold_data() { methods(); }
  void delayedThreshold() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const double d = 1.5, tauE = std::log(5.0) / kK + d;
    const auto r = sensitivities(
        decayWithEvents(R"(<parameter id="d" value="1.5" constant="true"/>)",
                        eventXml("reset", xBelow2(), eventAssignment("x", "<cn>10</cn>"),
                                 "<delay>" + sensode::testing::math("<ci>d</ci>") + "</delay>")),
        {0, 2, tauE - 1, tauE - 0.1, tauE + 0.1, 9, 11}, {"k", "d"}, method);
    compare(r, [&](double t) -> std::vector<double> {
      if (t < tauE) return {-t * 10 * std::exp(-kK * t), 0};
      const double x = 10 * std::exp(-kK * (t - tauE));
      return {(d - t) * x, kK * x};
    }, tolerance);
  }

  // A dose doubling x, triggered at t = 5 and executed at 5 + d (d = 2): with the value from the
  // trigger time x jumps to 2·x(5) = 20 e^{−5k}, so x = 20 e^{−5k} e^{−k(t−5−d)} after it
  // (∂x/∂k = (d − t)·x, ∂x/∂d = k·x); with the value from the execution time x doubles
  // continuously (x = 20 e^{−kt}: ∂x/∂k = −t·x, ∂x/∂d = 0).
  void delayedDoseWithTriggerOrExecutionValues_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<bool>("triggerTimeValues");
    for (const bool trigger : {true, false})
      for (const auto& [name, m, tol] :
           {std::tuple{"odesd", SensitivityMethod::OdeSd, 1e-6},
            std::tuple{"cvodes", SensitivityMethod::Cvodes, 1e-6},
            std::tuple{"pbsr", SensitivityMethod::Pbsr, 3e-4},
            std::tuple{"exp", SensitivityMethod::Exp, 1e-4}})
        QTest::newRow(qPrintable(QString("%1 %2").arg(name, trigger ? "trigger" : "execution")))
            << m << tol << trigger;
  }
  void delayedDoseWithTriggerOrExecutionValues() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    QFETCH(bool, triggerTimeValues);
    const double d = 2, tE = 5 + d;
    const auto r = sensitivities(
        decayWithEvents(
            R"(<parameter id="d" value="2" constant="true"/>)",
            eventXml("dose", timeAtLeast("<cn>5</cn>"),
                     eventAssignment("x", "<apply><times/><cn>2</cn><ci>x</ci></apply>"),
                     "<delay>" + sensode::testing::math("<ci>d</ci>") + "</delay>",
                     R"(initialValue="true" persistent="true")",
                     triggerTimeValues ? R"(useValuesFromTriggerTime="true")"
                                       : R"(useValuesFromTriggerTime="false")")),
        {0, 4, 6, 6.9, 7.1, 10}, {"k", "d"}, method);
    compare(r, [&](double t) -> std::vector<double> {
      if (t < tE) return {-t * 10 * std::exp(-kK * t), 0};
      if (!triggerTimeValues) return {-t * 20 * std::exp(-kK * t), 0};
      const double x = 20 * std::exp(-5 * kK) * std::exp(-kK * (t - tE));
      return {(d - t) * x, kK * x};
    }, tolerance);
  }

  // Logical and piecewise triggers around the relational x < 2: the same reset and the same
  // closed form as thresholdTimeDependsOnParameter, the switch taken from x − 2.
  void logicalAndPiecewiseTriggers_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<QString>("trigger");
    const std::string t = kMathTime;
    const std::vector<std::pair<const char*, std::string>> triggers = {
        {"and", "<apply><and/>" + xBelow2() + "<apply><gt/>" + t + "<cn>1</cn></apply></apply>"},
        {"or", "<apply><or/>" + xBelow2() + "<apply><gt/>" + t + "<cn>100</cn></apply></apply>"},
        {"not", "<apply><not/><apply><geq/><ci>x</ci><cn>2</cn></apply></apply>"},
        {"piecewise",
         "<apply><eq/><piecewise><piece><cn>1</cn>" + xBelow2() +
             "</piece><otherwise><cn>0</cn></otherwise></piecewise><cn>1</cn></apply>"}};
    for (const auto& [name, trigger] : triggers)
      for (const auto& [method, m, tol] :
           {std::tuple{"odesd", SensitivityMethod::OdeSd, 1e-6},
            std::tuple{"cvodes", SensitivityMethod::Cvodes, 1e-6},
            std::tuple{"exp", SensitivityMethod::Exp, 1e-4}})
        QTest::newRow(qPrintable(QString("%1 %2").arg(name, method)))
            << m << tol << QString::fromStdString(trigger);
  }
  void logicalAndPiecewiseTriggers() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    QFETCH(QString, trigger);
    const double tau = std::log(5.0) / kK;
    const auto r = sensitivities(
        decayWithEvents("", eventXml("reset", trigger.toStdString(),
                                     eventAssignment("x", "<cn>10</cn>"))),
        {0, 2, tau - 0.5, tau + 0.5, 8, 10}, {"k"}, method);
    compare(r, thresholdReset, tolerance);
  }

  // Suite case 00349 (S1 < 0.75 sets S2 = 1; S3 > 1.4 sets S1 = 1; mass action): PBSR and Exp
  // across its events against central finite differences of the whole simulation, every
  // parameter, t = 0..5, to 1e-3 of each column's largest value (their own error on the
  // event-free intervals is ~1e-4).
  void peanoBakerAgreesWithFiniteDifferencesOnSuiteModel_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::newRow("pbsr") << SensitivityMethod::Pbsr;
    QTest::newRow("exp") << SensitivityMethod::Exp;
  }
  void peanoBakerAgreesWithFiniteDifferencesOnSuiteModel() {
    QFETCH(SensitivityMethod, method);
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
    options.method = SensitivityMethod::FiniteDifferences;
    const auto fd = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(fd.termination == sensode::tasks::Termination::Success, fd.message.c_str());
    options.method = method;
    const auto r = sensode::tasks::runSensitivities(sp, options);
    QVERIFY2(r.termination == sensode::tasks::Termination::Success, r.message.c_str());
    QVERIFY(r.stats.peanoBaker.intervals > 0);
    const std::size_t ny = r.outputIds.size(), np = r.parameterIds.size();
    QVERIFY(np >= 4);
    for (std::size_t iy = 0; iy < ny; ++iy)
      for (std::size_t ip = 0; ip < np; ++ip) {
        double scale = 1;
        for (std::size_t it = 0; it < sp.times.size(); ++it)
          scale = std::max(scale, std::abs(fd.at(it, iy, ip)));
        for (std::size_t it = 0; it < sp.times.size(); ++it)
          QVERIFY2(std::abs(r.at(it, iy, ip) - fd.at(it, iy, ip)) <= 1e-3 * scale,
                   qPrintable(QString("d%1/d%2 at t = %3: %4 vs fd %5")
                                  .arg(QString::fromStdString(r.outputIds[iy]),
                                       QString::fromStdString(r.parameterIds[ip]))
                                  .arg(sp.times[it])
                                  .arg(r.at(it, iy, ip))
                                  .arg(fd.at(it, iy, ip))));
      }
  }
};

QTEST_GUILESS_MAIN(TestEventSensitivities)
#include "tst_event_sensitivities.moc"
