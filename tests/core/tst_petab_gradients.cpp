// SPDX-License-Identifier: MIT
// PEtab objective gradients through a switching time, against the closed form: the problem in
// tests/data/petab/switching_time has x' = a·[t < tau] − k·x, x(0) = 0, data at t = 1, 1.6, 2, 3
// (σ = 0.1) and estimates a, k and the switching time tau (lin scale). Moving tau moves the jump
// of the right-hand side: dx(t)/dtau = a·e^{−k(t − tau)} for t > tau, a term the sensitivity
// equations do not contain (∂f/∂tau = 0 almost everywhere) — forward and adjoint gave 0 for tau
// before the breakpoint handling (time_breakpoints.h), and CVODES forward sensitivities failed
// at a step input's time on Weber.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "core/petab/gradient_check.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"
#include "core/petab/time_breakpoints.h"
#include "core/steadystate/adjoint_time_course.h"
#include "support/gradient_method_rows.h"
#include "support/numeric_compare.h"

using namespace sensode::petab;

namespace {

constexpr double kA = 2, kK = 0.7, kTau = 1.5, kSigma = 0.1;
const double kTimes[] = {1, 1.6, 2, 3};
const double kData[] = {1.0, 1.2, 0.6, 0.3};

struct Closed {
  double objective = 0;
  double gradient[3] = {0, 0, 0};  // a, k, tau
};

Closed closedForm(double tau = kTau) {
  Closed c;
  const double a = kA, k = kK;
  for (int j = 0; j < 4; ++j) {
    const double t = kTimes[j];
    double x = 0, dk = 0, dtau = 0;
    if (t < tau) {
      x = a / k * (1 - std::exp(-k * t));
      dk = -a / (k * k) * (1 - std::exp(-k * t)) + a / k * t * std::exp(-k * t);
    } else {
      const double e1 = std::exp(-k * (t - tau)), e2 = std::exp(-k * t);
      x = a / k * (e1 - e2);
      dk = -a / (k * k) * (e1 - e2) + a / k * (-(t - tau) * e1 + t * e2);
      dtau = a * e1;
    }
    const double r = (kData[j] - x) / kSigma;
    c.objective += 0.5 * std::log(2 * std::numbers::pi * kSigma * kSigma) + 0.5 * r * r;
    const double w = -r / kSigma;  // d objective / d x
    c.gradient[0] += w * x / a;
    c.gradient[1] += w * dk;
    c.gradient[2] += w * dtau;
  }
  return c;
}

Problem load() {
  return loadProblem(SENSODE_TEST_DATA_DIR "/petab/switching_time/switching_time.yaml");
}

// The adjoint gradient of a shared PEtab problem at its nominal parameters against forward
// sensitivities, within relTol of the largest entry.
void expectAdjointMatchesForward(const std::string& yaml, double relTol, const char* what,
                                 const ObjectiveOptions& adjointOptions = {}) {
  if (!QFileInfo::exists(QString::fromStdString(yaml))) QSKIP("../shared/petab not found");
  const Problem p = loadProblem(yaml);
  const std::vector<double> q = nominalScaledParameters(p);
  const ObjectiveResult adjoint = evaluateObjective(p, q, GradientMethod::Adjoint, adjointOptions);
  const ObjectiveResult forward = evaluateObjective(p, q, GradientMethod::Forward, {});
  QCOMPARE(adjoint.gradient.size(), forward.gradient.size());
  double scale = 0;
  for (double g : forward.gradient) scale = std::max(scale, std::abs(g));
  QVERIFY(scale > 0);
  for (std::size_t i = 0; i < forward.gradient.size(); ++i)
    QVERIFY2(sensode::test::withinTolerance(adjoint.gradient[i], forward.gradient[i], relTol * scale, 0),
             sensode::test::closeMessage(adjoint.gradient[i], forward.gradient[i], relTol * scale, 0,
                                         what, static_cast<long>(i))
                 .c_str());
}

// Objective and gradient of the row's method at (a, k, tau) = (kA, kK, tau) against the closed
// form.
void expectClosedForm(double tau) {
  QFETCH(int, method);
  QFETCH(bool, odesd);
  QFETCH(double, rtol);
  const Problem p = load();
  ObjectiveOptions o;
  if (odesd) o.forwardIntegrator = sensode::integrators::Method::OdeSd;
  std::vector<double> q = nominalScaledParameters(p);
  QCOMPARE(q.size(), std::size_t{3});
  q[2] = tau;  // a, k, tau (lin scale)
  const ObjectiveResult r = evaluateObjective(p, q, static_cast<GradientMethod>(method), o);
  const Closed c = closedForm(tau);
  QVERIFY2(sensode::test::withinTolerance(r.objective, c.objective, 0, 1e-7),
           sensode::test::closeMessage(r.objective, c.objective, 0, 1e-7, "objective", 0).c_str());
  QCOMPARE(r.gradient.size(), std::size_t{3});
  const double scale = std::max({std::abs(c.gradient[0]), std::abs(c.gradient[1]),
                                 std::abs(c.gradient[2])});
  for (int i = 0; i < 3; ++i)
    QVERIFY2(sensode::test::withinTolerance(r.gradient[static_cast<std::size_t>(i)], c.gradient[i],
                                            rtol * scale, 0),
             sensode::test::closeMessage(r.gradient[static_cast<std::size_t>(i)], c.gradient[i],
                                         rtol * scale, 0, "gradient (a, k, tau)", i)
                 .c_str());
}

}  // namespace

class TestPetabGradients : public QObject {
  Q_OBJECT

 private slots:
  void breakpointAndItsDerivative() {
    const Problem p = load();
    const auto& sys = p.model->system();
    std::vector<double> theta = p.model->nominalParameters();
    const auto bps = timeBreakpoints(sys, theta, 0.0, 3.0);
    QCOMPARE(bps.size(), std::size_t{1});
    QVERIFY2(sensode::test::withinTolerance(bps[0].time, kTau, 0, 1e-15), "breakpoint at tau");
    const int tau = sys.findParam("tau"), a = sys.findParam("a");
    QVERIFY(tau >= 0 && a >= 0);
    QVERIFY2(sensode::test::withinTolerance(bps[0].dTime[static_cast<std::size_t>(tau)], 1.0, 0,
                                            1e-15),
             "dτ/dtau = 1");
    QVERIFY(bps[0].dTime[static_cast<std::size_t>(a)] == 0.0);
    // Outside (tStart, tEnd] there is none.
    QVERIFY(timeBreakpoints(sys, theta, 1.5, 3.0).empty());
  }

  void gradientsMatchClosedForm_data() { sensode::test::gradientMethodRows(); }
  void gradientsMatchClosedForm() { expectClosedForm(kTau); }

  // The switch at a measurement time (tau = 2): data at exactly tau belong to the later
  // segment, as in the closed form. (Here J does not change at the switch, so this cannot show
  // what a pass ending there on the wrong branch did to Oliveira: the next test does.) Neither
  // ssASA nor finite differences: the objective has a kink in tau there, and the derivative is
  // the later segment's one-sided one.
  void switchAtAMeasurementTime_data() { sensode::test::gradientMethodRows(false); }
  void switchAtAMeasurementTime() { expectClosedForm(2.0); }

  // Finite differences at a bound stay inside it (Lang's noise parameters at their lower bound
  // 0 made σ negative at −2h): tau at its lower bound 0.1 takes the one-sided difference, says
  // so, and still meets the closed form.
  void finiteDifferencesStayInsideTheBounds() {
    const Problem p = load();
    std::vector<double> q = nominalScaledParameters(p);
    q[2] = 0.1;  // tau's lowerBound (lin scale)
    const ObjectiveResult r = evaluateObjective(p, q, GradientMethod::FiniteDifferences, {});
    QVERIFY2(r.notes.find("one-sided") != std::string::npos, r.notes.c_str());
    const Closed c = closedForm(0.1);
    const double scale = std::max({std::abs(c.gradient[0]), std::abs(c.gradient[1]),
                                   std::abs(c.gradient[2])});
    for (int i = 0; i < 3; ++i)
      QVERIFY2(sensode::test::withinTolerance(r.gradient[static_cast<std::size_t>(i)], c.gradient[i],
                                              1e-4 * scale, 0),
               sensode::test::closeMessage(r.gradient[static_cast<std::size_t>(i)], c.gradient[i],
                                           1e-4 * scale, 0, "fd gradient (a, k, tau)", i)
                   .c_str());
  }

  // Oliveira_NatCommun2021: t_1 = 29 is both a switch of the infection rate and a measurement
  // time. The adjoint pass ending at 29 evaluated J there on the later branch, and CVodeB ran
  // out of its 100000 steps between 29 and 28; with the left limit it agrees with forward
  // sensitivities (measured 2.7e-8 relative to the largest entry).
  void adjointAcrossASwitchAtAMeasurementTime() {
    expectAdjointMatchesForward(
        SENSODE_SHARED_DIR "/petab/Oliveira_NatCommun2021/Oliveira_NatCommun2021.yaml", 1e-4,
        "adjoint vs forward");
  }

  // Above IntegratorOptions::kDenseLimit states both adjoint passes factorise with KLU on J's
  // pattern and on Jᵀ's (adjoint_time_course.cpp); Laske (34 states, 13 parameters) against
  // forward sensitivities: 1.6e-9 of the largest entry measured (dense LU: 2.1e-9). A transposed
  // pattern or value map gone wrong gives errors of order one.
  void sparseAdjointAgreesWithForward() {
    const std::string yaml =
        SENSODE_SHARED_DIR "/petab/Laske_PLOSComputBiol2019/Laske_PLOSComputBiol2019.yaml";
    if (QFileInfo::exists(QString::fromStdString(yaml)))
      QVERIFY(loadProblem(yaml).model->nx() > sensode::integrators::IntegratorOptions::kDenseLimit);
    expectAdjointMatchesForward(yaml, 1e-6, "sparse adjoint vs forward");
  }

  // AdjointTimeCourse::setQuadratureParameters integrates ∫λᵀf_θ dt for the chosen parameters
  // only (the objective passes those its estimated parameters move): their values agree with
  // the integration over all θ, and the others keep what the caller's sum came in with.
  // Boehm (8 states, 9 model parameters), λ from data-like jumps at t = 2.5, 10, 40.
  void adjointQuadratureOfChosenParameters() {
    const std::string yaml =
        SENSODE_SHARED_DIR "/petab/Boehm_JProteomeRes2014/Boehm_JProteomeRes2014.yaml";
    if (!QFileInfo::exists(QString::fromStdString(yaml))) QSKIP("../shared/petab not found");
    const Problem p = loadProblem(yaml);
    const auto model = p.model;
    const std::vector<double> theta = model->nominalParameters();
    std::vector<double> x0(static_cast<std::size_t>(model->nx()));
    model->initialState(0.0, theta.data(), x0.data());
    const std::vector<double> times{2.5, 10, 40};
    std::vector<std::vector<double>> jumps;
    for (std::size_t j = 0; j < times.size(); ++j) {
      std::vector<double> g(x0.size());
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = std::cos(1.0 + static_cast<double>(3 * i + j));
      jumps.push_back(g);
    }
    sensode::integrators::IntegratorOptions o;
    o.rtol = 1e-10;
    auto run = [&](const std::vector<int>* chosen, std::vector<double> quadrature) {
      sensode::steadystate::AdjointTimeCourse adj(model, o, 0.0, x0, theta);
      if (chosen) adj.setQuadratureParameters(*chosen);
      adj.forward(times);
      std::vector<double> lambda0;
      adj.backward(jumps, lambda0, quadrature);
      return quadrature;
    };
    const int np = model->np();
    QVERIFY(np >= 4);
    const std::vector<double> all = run(nullptr, {});
    // The two parameters with the largest quadratures (several are 0: not in f_θ).
    std::vector<int> order(static_cast<std::size_t>(np));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return std::abs(all[static_cast<std::size_t>(a)]) > std::abs(all[static_cast<std::size_t>(b)]);
    });
    const std::vector<int> chosen{order[1], order[0]};  // unsorted on purpose
    const double kept = 7.25;  // stands for an earlier pass's sum
    const std::vector<double> some = run(&chosen, std::vector<double>(static_cast<std::size_t>(np), kept));
    QCOMPARE(some.size(), all.size());
    double scale = 0;
    for (double v : all) scale = std::max(scale, std::abs(v));
    QVERIFY(scale > 0);
    for (int k = 0; k < np; ++k) {
      const auto uk = static_cast<std::size_t>(k);
      if (std::find(chosen.begin(), chosen.end(), k) == chosen.end()) {
        QCOMPARE(some[uk], kept);
      } else {
        QVERIFY(std::abs(all[uk]) > 1e-6 * scale);  // the comparison means something
        QVERIFY2(sensode::test::withinTolerance(some[uk] - kept, all[uk], 1e-6 * scale, 0),
                 sensode::test::closeMessage(some[uk] - kept, all[uk], 1e-6 * scale, 0,
                                             "chosen quadrature", k).c_str());
      }
    }
    QVERIFY_THROWS_EXCEPTION(sensode::InvalidOptions, [&] {
      sensode::steadystate::AdjointTimeCourse adj(model, o, 0.0, x0, theta);
      adj.setQuadratureParameters({np});
    }());
  }

  // Bachmann: 58 model parameters, of which the estimated ones move 27; both adjoints integrate
  // those quadratures only. Against CVODES's forward sensitivities at rtol 1e-12 the gradients at the defaults are 5.8e-5
  // (forward), 6.0e-5 (CVODES's adjoint) and 4.5e-5 (odeSD's discrete adjoint) of the largest
  // entry off; CVODES's two share their error (5.1e-6 apart), odeSD's lies 1.0e-4 from forward.
  void adjointWithQuadraturesOfMovedParametersOnly() {
    ObjectiveOptions cvodes;
    cvodes.adjointIntegrator = sensode::integrators::Method::Cvodes;
    expectAdjointMatchesForward(
        SENSODE_SHARED_DIR "/petab/Bachmann_MSB2011/Bachmann_MSB2011.yaml", 1e-4,
        "CVODES adjoint (moved parameters' quadratures) vs forward", cvodes);
    expectAdjointMatchesForward(
        SENSODE_SHARED_DIR "/petab/Bachmann_MSB2011/Bachmann_MSB2011.yaml", 2e-4,
        "odeSD discrete adjoint (moved parameters' quadratures) vs forward");
  }

  // A default method that fails falls back and says so: forward sensitivities refuse a
  // pre-equilibration whose condition maps an estimated parameter to k1 differently from the
  // simulation condition; ssASA takes over and the result names what failed.
  void failingDefaultFallsBack() {
    const Problem p = loadProblem(SENSODE_TEST_DATA_DIR
                                  "/petab/preequilibration_mapping/preequilibration_mapping.yaml");
    const std::vector<double> q = nominalScaledParameters(p);
    QVERIFY_THROWS_EXCEPTION(PetabError, evaluateObjective(p, q, GradientMethod::Forward));
    const ObjectiveResult r = evaluateWithFallback(p, q, GradientMethod::Forward);
    QVERIFY(r.method == GradientMethod::Ssasa);
    QCOMPARE(r.fallbacks.size(), std::size_t{1});
    QVERIFY2(r.fallbacks[0].find("forward gradient failed") != std::string::npos &&
                 r.fallbacks[0].find("k1") != std::string::npos &&
                 r.fallbacks[0].find("used ssasa instead") != std::string::npos,
             r.fallbacks[0].c_str());
    ObjectiveOptions fd;
    fd.fdOrder = 4;
    fd.fdStep = 1e-4;
    const ObjectiveResult f = evaluateObjective(p, q, GradientMethod::FiniteDifferences, fd);
    QVERIFY2(relativeDifference(r.gradient, f.gradient) < 1e-5,
             std::to_string(relativeDifference(r.gradient, f.gradient)).c_str());
    // An explicitly chosen method that works runs without fallbacks.
    QVERIFY(evaluateWithFallback(p, q, GradientMethod::Adjoint).fallbacks.empty());
  }

  // Pre-equilibration to a steady state where J_r is singular after the conservation
  // reduction (tests/data/petab/preequilibration_singular: A → B at k·A·(E + u), E → ∅ at
  // kd·E, u = 0 then 1): forward sensitivities integrated to the steady state give the closed
  // form y(t) = exp(−k·e0/kd − k·t), and the result names the fallback.
  void preequilibrationWithSingularJacobian() {
    const Problem p = loadProblem(SENSODE_TEST_DATA_DIR
                                  "/petab/preequilibration_singular/preequilibration_singular.yaml");
    const std::vector<double> q = nominalScaledParameters(p);  // log10 of k, kd, e0
    const double k = 1, kd = 2, e0 = 1, sigma = 0.02;
    const double times[] = {0.5, 1, 2}, data[] = {0.35, 0.25, 0.08};
    double objective = 0, grad[3] = {0, 0, 0};
    for (int j = 0; j < 3; ++j) {
      const double y = std::exp(-k * e0 / kd - k * times[j]);
      const double r = (data[j] - y) / sigma;
      objective += 0.5 * std::log(2 * std::numbers::pi * sigma * sigma) + 0.5 * r * r;
      const double w = -r / sigma;
      grad[0] += w * -y * (e0 / kd + times[j]) * k * std::log(10.0);
      grad[1] += w * y * k * e0 / (kd * kd) * kd * std::log(10.0);
      grad[2] += w * -y * k / kd * e0 * std::log(10.0);
    }
    ObjectiveOptions o;
    const ObjectiveResult r = evaluateObjective(p, q, GradientMethod::Forward, o);
    QVERIFY2(sensode::test::withinTolerance(r.objective, objective, 0, 1e-6),
             sensode::test::closeMessage(r.objective, objective, 0, 1e-6, "objective", 0).c_str());
    const double scale = std::max({std::abs(grad[0]), std::abs(grad[1]), std::abs(grad[2])});
    for (int i = 0; i < 3; ++i)
      QVERIFY2(sensode::test::withinTolerance(r.gradient[static_cast<std::size_t>(i)], grad[i],
                                              1e-5 * scale, 0),
               sensode::test::closeMessage(r.gradient[static_cast<std::size_t>(i)], grad[i],
                                           1e-5 * scale, 0, "gradient (k, kd, e0)", i)
                   .c_str());
    QCOMPARE(r.fallbacks.size(), std::size_t{1});
    QVERIFY2(r.fallbacks[0].find("pre-equilibration condition 'pre'") != std::string::npos &&
                 r.fallbacks[0].find("J_r is singular") != std::string::npos &&
                 r.fallbacks[0].find("forward sensitivities") != std::string::npos,
             r.fallbacks[0].c_str());
    QVERIFY2(r.notes.find("J_r is singular") != std::string::npos, r.notes.c_str());
    // evaluateWithFallback keeps the method's own fallback.
    QCOMPARE(evaluateWithFallback(p, q, GradientMethod::Forward).fallbacks.size(), std::size_t{1});
  }

  void checkReportsAgreement() {
    const Problem p = load();
    const GradientCheck check = checkGradients(p, nominalScaledParameters(p));
    QVERIFY2(check.analyticSpread() < 1e-6, std::to_string(check.analyticSpread()).c_str());
    QVERIFY2(check.fdSpread() < 1e-4, std::to_string(check.fdSpread()).c_str());
    QVERIFY(check.find("fd best") != nullptr);
    QCOMPARE(relativeDifference({1, 2}, {1, 2.5}), 0.5 / 2.5);
  }
};

QTEST_GUILESS_MAIN(TestPetabGradients)
#include "tst_petab_gradients.moc"
