// SPDX-License-Identifier: MIT
// Steady states of models with events (core/tasks/steady_state_events.h): the simulation with
// events runs until they stop changing the state, then Newton solves from there, and the result
// is accepted only when no trigger switches on the way to it. Closed-form cases: a dose that
// changes a conserved total (so the steady state and its sensitivities differ from those of the
// ODE without its events), a reset that keeps firing (no steady state, the event named), and a
// threshold the ODE's steady state lies beyond (the event would fire: no steady state).
#include <QtTest/QtTest>

#include <cmath>
#include <string>

#include "core/tasks/steady_state_task.h"
#include "support/event_models.h"

namespace {

using sensode::testing::compileSbml;
using sensode::testing::eventAssignment;
using sensode::testing::eventXml;
using sensode::testing::kMathTime;
using sensode::testing::math;

// A ⇌ B (kf·A − kr·B) with A(0) = 1, B(0) = 0 and a dose A += D at t = 5: the total A + B is
// conserved between events and becomes T = 1 + D at the dose, so A* = kr·T/(kf + kr).
std::string reversibleWithDose() {
  return sensode::testing::sbmlDocument(R"(
    <listOfCompartments><compartment id="c" size="1" constant="true"/></listOfCompartments>
    <listOfSpecies>
      <species id="A" compartment="c" initialAmount="1" hasOnlySubstanceUnits="true"
        boundaryCondition="false" constant="false"/>
      <species id="B" compartment="c" initialAmount="0" hasOnlySubstanceUnits="true"
        boundaryCondition="false" constant="false"/></listOfSpecies>
    <listOfParameters>
      <parameter id="kf" value="0.5" constant="true"/>
      <parameter id="kr" value="0.2" constant="true"/>
      <parameter id="D" value="3" constant="true"/></listOfParameters>
    <listOfReactions><reaction id="R" reversible="true">
      <listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/>
      </listOfReactants>
      <listOfProducts><speciesReference species="B" stoichiometry="1" constant="true"/>
      </listOfProducts>
      <kineticLaw>)" + math("<apply><minus/><apply><times/><ci>kf</ci><ci>A</ci></apply>"
                            "<apply><times/><ci>kr</ci><ci>B</ci></apply></apply>") +
                                        R"(</kineticLaw>
    </reaction></listOfReactions>
    <listOfEvents>)" +
      eventXml("dose", "<apply><geq/>" + std::string(kMathTime) + "<cn>5</cn></apply>",
               eventAssignment("A", "<apply><plus/><ci>A</ci><ci>D</ci></apply>")) +
      "</listOfEvents>");
}

std::size_t indexOf(const std::vector<std::string>& ids, const std::string& id) {
  return static_cast<std::size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
}

}  // namespace

class TestEventSteadyStates : public QObject {
  Q_OBJECT

 private slots:
  void doseChangesTheConservedTotal() {
    sensode::tasks::SteadyStateProblem problem;
    problem.model = compileSbml(reversibleWithDose());
    const auto r = sensode::tasks::runSteadyState(problem, {});
    QVERIFY2(r.status == sensode::tasks::SteadyStateResult::Status::Success, r.message.c_str());
    const double kf = 0.5, kr = 0.2, total = 1 + 3;
    const std::size_t a = indexOf(r.stateIds, "A"), b = indexOf(r.stateIds, "B");
    QVERIFY(std::abs(r.solution.state[a] - kr * total / (kf + kr)) < 1e-9);
    QVERIFY(std::abs(r.solution.state[b] - kf * total / (kf + kr)) < 1e-9);
    QVERIFY2(r.solution.path.find("dose at t = 5") != std::string::npos,
             r.solution.path.c_str());
    // dA*/dθ: kr/(kf + kr) per unit of T (dT/dD = 1, dT/dA0 = 1), ∂/∂kf = −kr·T/(kf + kr)²,
    // ∂/∂kr = kf·T/(kf + kr)².
    const auto& S = r.solution.sensitivities;
    QCOMPARE(S.rows(), Eigen::Index(r.stateIds.size()));
    const auto col = [&](const std::string& id) {
      return static_cast<Eigen::Index>(indexOf(r.parameterIds, id));
    };
    const auto row = static_cast<Eigen::Index>(a);
    const double sum = kf + kr;
    QVERIFY2(std::abs(S(row, col("D")) - kr / sum) < 1e-7, qPrintable(QString::number(S(row, col("D")))));
    QVERIFY(std::abs(S(row, col("kf")) + kr * total / (sum * sum)) < 1e-7);
    QVERIFY(std::abs(S(row, col("kr")) - kf * total / (sum * sum)) < 1e-7);
  }

  // x' = −k·x with x < 2 resetting x to 10: a sawtooth forever, named in the reason.
  void resetThatKeepsFiringHasNoSteadyState() {
    sensode::tasks::SteadyStateProblem problem;
    problem.model = compileSbml(sensode::testing::decayWithEvents(
        "", eventXml("reset", "<apply><lt/><ci>x</ci><cn>2</cn></apply>",
                     eventAssignment("x", "<cn>10</cn>"))));
    const auto r = sensode::tasks::runSteadyState(problem, {});
    QCOMPARE(int(r.status), int(sensode::tasks::SteadyStateResult::Status::NoSteadyState));
    QVERIFY2(r.message.find("'reset'") != std::string::npos, r.message.c_str());
  }

  // x' = −k·x, k = 1e-5: x(1e5) = 10/e, above the threshold x < 1 of an event that sets a
  // species y (y' = −0.1·y) to 1; the ODE's steady state x* = 0 lies beyond the threshold, so
  // the event would fire on the way there.
  void steadyStateBeyondAThresholdIsRefused() {
    sensode::tasks::SteadyStateProblem problem;
    std::string xml = sensode::testing::decayWithEvents(
        "", eventXml("stop", "<apply><lt/><ci>x</ci><cn>1</cn></apply>",
                     eventAssignment("y", "<cn>1</cn>")));
    auto replace = [&](const std::string& from, const std::string& to) {
      xml.replace(xml.find(from), from.size(), to);
    };
    replace(R"(id="k" value="0.3")", R"(id="k" value="1e-5")");
    replace("</listOfSpecies>", R"(<species id="y" compartment="c" initialAmount="0"
      hasOnlySubstanceUnits="true" boundaryCondition="false" constant="false"/></listOfSpecies>)");
    replace("</listOfReactions>", R"(<reaction id="Ry" reversible="false">
      <listOfReactants><speciesReference species="y" stoichiometry="1" constant="true"/>
      </listOfReactants><kineticLaw>)" + math("<apply><times/><cn>0.1</cn><ci>y</ci></apply>") +
                                     "</kineticLaw></reaction></listOfReactions>");
    problem.model = compileSbml(xml);
    const auto r = sensode::tasks::runSteadyState(problem, {});
    QCOMPARE(int(r.status), int(sensode::tasks::SteadyStateResult::Status::NoSteadyState));
    QVERIFY2(r.message.find("'stop'") != std::string::npos, r.message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestEventSteadyStates)
#include "tst_event_steady_states.moc"
