// SPDX-License-Identifier: MIT
// Per-state absolute tolerances (core/integrators/absolute_tolerances.h): a species read in
// concentration gets atol × its compartment's size, so a model whose cell is 1e-15 L is
// integrated to the accuracy of one whose cell has size 1. Checked on the factors themselves and
// on the decay A → ∅ in a compartment of 1e-15 against its closed form, for odeSD and CVODES,
// with and without forward sensitivities, at the default tolerances (rtol 1e-6, atol 1e-12), and
// on the steady state of a turnover in the same cell (Newton and simulation).
// Before, atol 1e-12 on amounts of ~1e-15 let both integrators cross the whole span in a few
// unchecked steps (BIOMD0000000016, Goldbeter's clock: 5 steps over 100 h, states below zero).
#include <QtTest/QtTest>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/integrators/absolute_tolerances.h"
#include "core/integrators/integrator.h"
#include "core/steadystate/steady_state_solver.h"
#include "core/symbolic/compiled_model.h"
#include "support/event_models.h"
#include "support/numeric_compare.h"

using namespace sensode;
using sensode::testing::compileSbml;
using sensode::testing::math;
using sensode::testing::sbmlDocument;

Q_DECLARE_METATYPE(sensode::integrators::Method)

namespace {

constexpr double kCell = 1e-15;  // litres: a typical cell volume in BioModels
constexpr double kRate = 0.5;

// A in the 1e-15 compartment (concentration 1, read in concentration), decaying at kRate;
// B beside it read as an amount (hasOnlySubstanceUnits), C in a compartment of size 4, and a
// parameter q with a rate rule.
std::string cellModel() {
  return sbmlDocument(R"(
    <listOfCompartments>
      <compartment id="cell" size="1e-15" constant="true"/>
      <compartment id="big" size="4" constant="true"/>
    </listOfCompartments>
    <listOfSpecies>
      <species id="A" compartment="cell" initialConcentration="1" hasOnlySubstanceUnits="false"
        boundaryCondition="false" constant="false"/>
      <species id="B" compartment="cell" initialAmount="0" hasOnlySubstanceUnits="true"
        boundaryCondition="false" constant="false"/>
      <species id="C" compartment="big" initialConcentration="2" hasOnlySubstanceUnits="false"
        boundaryCondition="false" constant="false"/>
    </listOfSpecies>
    <listOfParameters>
      <parameter id="k" value="0.5" constant="true"/>
      <parameter id="q" value="1" constant="false"/>
    </listOfParameters>
    <listOfRules><rateRule variable="q">)" + math("<cn>1</cn>") + R"(</rateRule></listOfRules>
    <listOfReactions>
      <reaction id="R" reversible="false">
        <listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/>
        </listOfReactants>
        <listOfProducts><speciesReference species="B" stoichiometry="1" constant="true"/>
        </listOfProducts>
        <kineticLaw>)" + math("<apply><times/><ci>cell</ci><ci>k</ci><ci>A</ci></apply>") + R"(</kineticLaw>
      </reaction>
      <reaction id="RC" reversible="false">
        <listOfReactants><speciesReference species="C" stoichiometry="1" constant="true"/>
        </listOfReactants>
        <kineticLaw>)" + math("<apply><times/><ci>big</ci><ci>k</ci><ci>C</ci></apply>") + R"(</kineticLaw>
      </reaction>
    </listOfReactions>)");
}

// A alone in the 1e-15 compartment, decaying at k: every state is tiny, so nothing else holds
// the step size down.
std::string decayInACell() {
  return sbmlDocument(R"(
    <listOfCompartments><compartment id="cell" size="1e-15" constant="true"/></listOfCompartments>
    <listOfSpecies>
      <species id="A" compartment="cell" initialConcentration="1" hasOnlySubstanceUnits="false"
        boundaryCondition="false" constant="false"/>
    </listOfSpecies>
    <listOfParameters><parameter id="k" value="0.5" constant="true"/></listOfParameters>
    <listOfReactions>
      <reaction id="R" reversible="false">
        <listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/>
        </listOfReactants>
        <kineticLaw>)" + math("<apply><times/><ci>cell</ci><ci>k</ci><ci>A</ci></apply>") + R"(</kineticLaw>
      </reaction>
    </listOfReactions>)");
}

// ∅ → A at k1 (per volume), A → ∅ at k2 in the 1e-15 cell, from [A] = 0: [A]* = k1 / k2 = 4.
std::string turnoverInACell() {
  return sbmlDocument(R"(
    <listOfCompartments><compartment id="cell" size="1e-15" constant="true"/></listOfCompartments>
    <listOfSpecies>
      <species id="A" compartment="cell" initialConcentration="0" hasOnlySubstanceUnits="false"
        boundaryCondition="false" constant="false"/>
    </listOfSpecies>
    <listOfParameters>
      <parameter id="k1" value="2" constant="true"/>
      <parameter id="k2" value="0.5" constant="true"/>
    </listOfParameters>
    <listOfReactions>
      <reaction id="make" reversible="false">
        <listOfProducts><speciesReference species="A" stoichiometry="1" constant="true"/>
        </listOfProducts>
        <kineticLaw>)" + math("<apply><times/><ci>cell</ci><ci>k1</ci></apply>") + R"(</kineticLaw>
      </reaction>
      <reaction id="decay" reversible="false">
        <listOfReactants><speciesReference species="A" stoichiometry="1" constant="true"/>
        </listOfReactants>
        <kineticLaw>)" + math("<apply><times/><ci>cell</ci><ci>k2</ci><ci>A</ci></apply>") + R"(</kineticLaw>
      </reaction>
    </listOfReactions>)");
}

int stateIndex(const symbolic::CompiledModel& model, const std::string& id) {
  const auto& states = model.system().states;
  for (std::size_t i = 0; i < states.size(); ++i)
    if (states[i].id == id) return static_cast<int>(i);
  return -1;
}

int paramIndex(const symbolic::CompiledModel& model, const std::string& id) {
  const auto& params = model.system().params;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].id == id) return static_cast<int>(i);
  return -1;
}

}  // namespace

class TestAbsoluteTolerances : public QObject {
  Q_OBJECT

 private slots:
  void factorsAreTheCompartmentSizes() {
    const auto model = compileSbml(cellModel());
    const std::vector<double> p = model->nominalParameters();
    std::vector<double> x0(static_cast<std::size_t>(model->nx()));
    model->initialState(0.0, p.data(), x0.data());
    const std::vector<double> atol = integrators::absoluteTolerances(*model, 1e-12, 0.0, x0, p);
    const int a = stateIndex(*model, "A"), b = stateIndex(*model, "B"), c = stateIndex(*model, "C"),
              q = stateIndex(*model, "q");
    QVERIFY(a >= 0 && b >= 0 && c >= 0 && q >= 0);
    SENSODE_EXPECT_CLOSE(atol[static_cast<std::size_t>(a)], 1e-12 * kCell, 0, 1e-14, "atol of A", a);
    SENSODE_EXPECT_CLOSE(atol[static_cast<std::size_t>(b)], 1e-12, 0, 1e-14, "atol of B (amount)", b);
    SENSODE_EXPECT_CLOSE(atol[static_cast<std::size_t>(c)], 1e-12 * 4, 0, 1e-14, "atol of C", c);
    SENSODE_EXPECT_CLOSE(atol[static_cast<std::size_t>(q)], 1e-12, 0, 1e-14, "atol of q", q);
  }

  void decayInATinyCellIsAccurate_data() {
    QTest::addColumn<integrators::Method>("method");
    QTest::addColumn<bool>("withSensitivities");
    QTest::newRow("odesd") << integrators::Method::OdeSd << false;
    QTest::newRow("cvodes") << integrators::Method::Cvodes << false;
    QTest::newRow("odesd, dA/dk") << integrators::Method::OdeSd << true;
    QTest::newRow("cvodes, dA/dk") << integrators::Method::Cvodes << true;
  }

  // [A](t) = e^{−kt} and d[A]/dk = −t·e^{−kt} at the default tolerances: within 1e-4 of the
  // closed form relative to [A](0) = 1 (a global error of ~10 × rtol; measured 2026-11-26:
  // 2e-7 to 2e-6 for both; with one atol of 1e-12 on the amounts, odeSD took 2 steps and was
  // off by 3.2, CVODES took 4 and was off by 0.34).
  void decayInATinyCellIsAccurate() {
    QFETCH(integrators::Method, method);
    QFETCH(bool, withSensitivities);
    const auto model = compileSbml(decayInACell());
    const std::vector<double> p = model->nominalParameters();
    std::vector<double> x(static_cast<std::size_t>(model->nx()));
    model->initialState(0.0, p.data(), x.data());
    const int a = stateIndex(*model, "A"), k = paramIndex(*model, "k");
    QVERIFY(a >= 0 && k >= 0);

    auto integrator = integrators::makeIntegrator(method);
    integrators::IntegratorOptions options;  // the defaults a user gets
    integrator->initialize(model, options, 0.0, x, p);
    if (withSensitivities) {
      std::vector<double> s0(static_cast<std::size_t>(model->nx()), 0.0);
      integrator->enableSensitivities({k}, s0, /*errorControl=*/true);
    }
    double worst = 0, worstS = 0;
    std::vector<double> s;
    for (int i = 1; i <= 20; ++i) {
      const double t = 0.5 * i;
      integrator->advanceTo(t, x, {});
      const double concentration = x[static_cast<std::size_t>(a)] / kCell;
      sensode::test::keepWorst(worst, std::abs(concentration - std::exp(-kRate * t)));
      if (withSensitivities) {
        integrator->sensitivities(s);
        const double dA = s[static_cast<std::size_t>(a)] / kCell;
        sensode::test::keepWorst(worstS, std::abs(dA + t * std::exp(-kRate * t)));
      }
    }
    qInfo("largest error of [A]: %.3g; of d[A]/dk: %.3g; steps %ld", worst, worstS,
          integrator->stats().steps);
    QVERIFY2(worst <= 1e-4, qPrintable(QString("[A] off the closed form by %1").arg(worst)));
    QVERIFY2(worstS <= 1e-4, qPrintable(QString("d[A]/dk off the closed form by %1").arg(worstS)));
  }

  // The steady-state criteria hold for concentrations too: with atol 1e-12 on the amount, the
  // rate at [A] = 0 (2e-15 per unit time) already met |f| < atol and [A] = 0 was returned.
  void steadyStateInATinyCell_data() {
    QTest::addColumn<QString>("method");
    QTest::newRow("newton") << "newton";
    QTest::newRow("simulation") << "simulation";
  }

  void steadyStateInATinyCell() {
    QFETCH(QString, method);
    const auto model = compileSbml(turnoverInACell());
    const steadystate::ConservedModel cm(model);
    steadystate::SteadyStateOptions o;
    if (method == "newton") o.method = steadystate::SteadyStateMethod::Newton;
    if (method == "simulation") o.method = steadystate::SteadyStateMethod::Simulation;
    const steadystate::SteadyStateSolution s = steadystate::solveSteadyState(cm, model->nominalParameters(), o);
    QVERIFY2(s.found, s.reason.c_str());
    const int a = stateIndex(*model, "A");
    SENSODE_EXPECT_CLOSE(s.state[static_cast<std::size_t>(a)] / kCell, 4.0, 0, 1e-5, "[A]*", a);
  }
};

QTEST_GUILESS_MAIN(TestAbsoluteTolerances)
#include "tst_absolute_tolerances.moc"
