// SPDX-License-Identifier: MIT
// The discrete adjoint of odeSD (core/steadystate/odesd_adjoint_pass.h) and AdjointTimeCourse's
// choice between it and CVODES's adjoint: against closed forms, against CVODES's forward
// sensitivities (an independent method), and against odeSD's own forward sensitivities over the
// same fixed steps, which it must transpose to rounding.
#include <QtTest/QtTest>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/odesd_integrator.h"
#include "core/steadystate/adjoint_time_course.h"
#include "core/steadystate/odesd_adjoint_pass.h"
#include "support/hand_built_models.h"

using namespace sensode;
using Model = std::shared_ptr<const symbolic::CompiledModel>;

namespace {

// Data-like jumps ∂J/∂x(t_j) for J = Σ_j g_jᵀ x(t_j): fixed, of mixed signs.
std::vector<std::vector<double>> weights(std::size_t times, int nx) {
  std::vector<std::vector<double>> g(times, std::vector<double>(static_cast<std::size_t>(nx)));
  for (std::size_t j = 0; j < times; ++j)
    for (int i = 0; i < nx; ++i)
      g[j][static_cast<std::size_t>(i)] = std::cos(1.0 + 3.0 * i + 7.0 * j);
  return g;
}

// x0 at the nominal parameters.
std::vector<double> initialState(const Model& m) {
  const std::vector<double> p = m->nominalParameters();
  std::vector<double> x0(static_cast<std::size_t>(m->nx()));
  m->initialState(0.0, p.data(), x0.data());
  return x0;
}

// dJ/dθ = Σ_j g_jᵀ S(t_j) by the forward sensitivities of `in` to every parameter (x0 does not
// depend on θ in these models); `stopAt` is called before each advance.
std::vector<double> forwardGradient(
    integrators::Integrator& in, const Model& m, const integrators::IntegratorOptions& o,
    const std::vector<double>& times, const std::vector<std::vector<double>>& g,
    const std::function<void(integrators::Integrator&, double)>& stopAt = {}) {
  const int nx = m->nx(), np = m->np();
  const auto unx = static_cast<std::size_t>(nx);
  const std::vector<double> p = m->nominalParameters();
  std::vector<double> x = initialState(m), s;
  in.initialize(m, o, 0.0, x, p);
  std::vector<int> idx;
  for (int k = 0; k < np; ++k) idx.push_back(k);
  in.enableSensitivities(idx, std::vector<double>(unx * static_cast<std::size_t>(np), 0.0), true);
  std::vector<double> grad(static_cast<std::size_t>(np), 0.0);
  for (std::size_t j = 0; j < times.size(); ++j) {
    if (stopAt) stopAt(in, times[j]);
    in.advanceTo(times[j], x, {});
    in.sensitivities(s);
    for (int k = 0; k < np; ++k)
      for (int i = 0; i < nx; ++i)
        grad[static_cast<std::size_t>(k)] +=
            g[j][static_cast<std::size_t>(i)] *
            s[static_cast<std::size_t>(k) * unx + static_cast<std::size_t>(i)];
  }
  return grad;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

double maxAbs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

double maxDifference(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

struct Adjoint {
  std::vector<double> lambda0, q;
  bool ok = false;
  std::string whyNot;
};
Adjoint discreteAdjoint(const Model& m, const integrators::IntegratorOptions& o,
                        const std::vector<double>& times, const std::vector<std::vector<double>>& g,
                        double fixedStep = 0) {
  const std::vector<double> p = m->nominalParameters();
  std::vector<double> x0 = initialState(m);
  steadystate::OdeSdAdjointPass pass(m, o, 0.0, x0, p, {});
  if (fixedStep > 0) pass.setFixedStepSize(fixedStep);
  Adjoint a;
  std::vector<std::vector<double>> states;
  a.ok = pass.forward(times, states, a.whyNot);
  if (!a.ok) return a;
  if (states.size() != times.size()) {
    a.ok = false;
    a.whyNot = "states for " + std::to_string(states.size()) + " of " +
               std::to_string(times.size()) + " times";
    return a;
  }
  std::vector<int> all;
  for (int k = 0; k < m->np(); ++k) all.push_back(k);
  a.q.assign(static_cast<std::size_t>(m->np()), 0.0);
  a.ok = pass.backward(g, all, a.lambda0, a.q, a.whyNot);
  return a;
}

}  // namespace

class TestOdeSdAdjoint : public QObject {
  Q_OBJECT

 private slots:
  // x' = −k x, x(0) = 2, k = 0.7; J = Σ_j g_j x(t_j):
  //   dJ/dk = −Σ_j g_j t_j x0 e^{−k t_j},   dJ/dx0 = Σ_j g_j e^{−k t_j}.
  // A measurement at t0 itself only adds to λ(t0).
  void decayAgainstClosedForm() {
    const Model m = testing::decayModel();
    integrators::IntegratorOptions o;
    o.rtol = 1e-10;
    o.atol = 1e-14;
    const std::vector<double> times{0.0, 0.5, 1.0, 2.5, 4.0, 10.0};
    const auto g = weights(times.size(), 1);
    const Adjoint a = discreteAdjoint(m, o, times, g);
    QVERIFY2(a.ok, a.whyNot.c_str());
    const double k = 0.7, x0 = 2;
    double dk = 0, dx0 = 0;
    for (std::size_t j = 0; j < times.size(); ++j) {
      dk -= g[j][0] * times[j] * x0 * std::exp(-k * times[j]);
      dx0 += g[j][0] * std::exp(-k * times[j]);
    }
    QCOMPARE(a.q.size(), std::size_t{1});
    QVERIFY2(std::abs(a.q[0] - dk) <= 1e-8 * std::abs(dk),
             (sci(a.q[0] / dk - 1) + " relative").c_str());
    QVERIFY2(std::abs(a.lambda0[0] - dx0) <= 1e-8 * std::abs(dx0),
             (sci(a.lambda0[0] / dx0 - 1) + " relative").c_str());
  }

  // Over odeSD's own fixed steps, landing on the same times, the discrete adjoint is the
  // transpose of odeSD's forward sensitivity steps: the same dJ/dθ to rounding and to the
  // Newton tolerance of the two runs (rtol 1e-12 here). The repressilator, 6 states and 4
  // parameters (one a Hill exponent), steps of 0.01 landing on every time.
  void transposesOdeSdSensitivitySteps() {
    const Model m = testing::repressilatorModel();
    integrators::IntegratorOptions o;
    o.rtol = 1e-12;
    const std::vector<double> times{0.5, 1.0, 2.345, 5.0, 8.0};
    const auto g = weights(times.size(), m->nx());
    const double h = 0.01;
    const Adjoint a = discreteAdjoint(m, o, times, g, h);
    QVERIFY2(a.ok, a.whyNot.c_str());
    integrators::OdeSdIntegrator odesd;
    integrators::OdeSdOptions sd;
    sd.fixedStepSize = h;
    odesd.setOdeSdOptions(sd);
    const std::vector<double> f =
        forwardGradient(odesd, m, o, times, g, [](integrators::Integrator& in, double t) {
          static_cast<integrators::OdeSdIntegrator&>(in).setStopTime(t);
        });
    const double scale = maxAbs(f);
    QVERIFY(scale > 0);
    const double diff = maxDifference(a.q, f);
    QVERIFY2(diff <= 1e-12 * scale, (sci(diff / scale) + " of the largest entry").c_str());
  }

  // Against an independent method: CVODES's forward sensitivities at rtol 1e-12, on the
  // nonlinear Michaelis–Menten model with odeSD's own step control at rtol 1e-10.
  void matchesCvodesForwardSensitivities() {
    const Model m = testing::michaelisMentenModel();
    integrators::IntegratorOptions o;
    o.rtol = 1e-10;
    const std::vector<double> times{0.01, 0.1, 1.0, 5.0, 20.0};
    const auto g = weights(times.size(), m->nx());
    const Adjoint a = discreteAdjoint(m, o, times, g);
    QVERIFY2(a.ok, a.whyNot.c_str());
    integrators::IntegratorOptions tight = o;
    tight.rtol = 1e-12;
    tight.atol = 1e-16;
    integrators::CvodesIntegrator cvodes;
    const std::vector<double> f = forwardGradient(cvodes, m, tight, times, g);
    const double scale = maxAbs(f);
    const double diff = maxDifference(a.q, f);
    QVERIFY2(diff <= 1e-7 * scale, (sci(diff / scale) + " of the largest entry").c_str());
  }

  // AdjointTimeCourse with preferOdeSd: the discrete adjoint runs and says so; the gradient
  // agrees with CVODES's adjoint of the same pass. Where odeSD cannot do the pass — per-state
  // absolute tolerances (the equilibrations' passes) — CVODES runs and fallback() says why.
  void adjointTimeCourseChoosesAndFallsBack() {
    const Model m = testing::michaelisMentenModel();
    integrators::IntegratorOptions o;
    o.rtol = 1e-10;
    const std::vector<double> p = m->nominalParameters();
    std::vector<double> x0 = initialState(m);
    const std::vector<double> times{0.01, 0.1, 1.0, 5.0};
    const auto g = weights(times.size(), m->nx());
    auto run = [&](bool odesd, bool ownAtol, std::string& method, std::string& fallback) {
      steadystate::AdjointTimeCourse adj(m, o, 0.0, x0, p);
      if (odesd) adj.preferOdeSd();
      if (ownAtol) adj.setStateAbsoluteTolerances(std::vector<double>(x0.size(), 1e-14));
      adj.forward(times);
      std::vector<double> lambda0, q;
      adj.backward(g, lambda0, q);
      method = adj.method();
      fallback = adj.fallback();
      q.insert(q.end(), lambda0.begin(), lambda0.end());
      return q;
    };
    std::string method, fallback;
    const std::vector<double> viaOdeSd = run(true, false, method, fallback);
    QCOMPARE(method, std::string("odeSD, discrete adjoint"));
    QVERIFY(fallback.empty());
    const std::vector<double> viaCvodes = run(false, false, method, fallback);
    QCOMPARE(method, std::string("CVODES, checkpointing, quadratures"));
    QVERIFY(fallback.empty());
    const double diff = maxDifference(viaOdeSd, viaCvodes), scale = maxAbs(viaCvodes);
    QVERIFY2(diff <= 1e-6 * scale, (sci(diff / scale) + " of the largest entry").c_str());
    run(true, true, method, fallback);
    QCOMPARE(method, std::string("CVODES, checkpointing, quadratures"));
    QVERIFY2(fallback.find("absolute tolerances per state") != std::string::npos, fallback.c_str());
  }

  // A derivative that is not finite: x' = −k·x − √q·x with q = 0, where ∂f/∂q = −x / (2√q)
  // is −∞ at every point. The sweep no longer tests each point's derivatives; asked for dJ/dq
  // it must still fail, naming the time of a point, and asked only for dJ/dk (which never reads
  // ∂f/∂q) it must give the closed form of the decay, dJ/dk = −Σ_j g_j t_j x0 e^{−k t_j}.
  void derivativeThatIsNotFinite() {
    testing::SystemBuilder b;
    auto& e = b.e();
    const symbolic::Expr k = b.param("k", 0.7), q = b.param("q", 0.0);
    const symbolic::Expr x = b.state("x", 2.0);
    b.rhs(x, e.neg(e.add(e.mul(k, x), e.mul(e.sqrt(q), x))));
    const Model m = b.compile();
    integrators::IntegratorOptions o;
    o.rtol = 1e-10;
    o.atol = 1e-14;
    const std::vector<double> times{0.5, 1.0, 2.5};
    const auto g = weights(times.size(), 1);
    const Adjoint all = discreteAdjoint(m, o, times, g);
    QVERIFY(!all.ok);
    QVERIFY2(all.whyNot.find("a derivative of the model is not finite at t = ") == 0,
             all.whyNot.c_str());
    const std::vector<double> p = m->nominalParameters();
    steadystate::OdeSdAdjointPass pass(m, o, 0.0, initialState(m), p, {});
    std::vector<std::vector<double>> states;
    std::string whyNot;
    QVERIFY2(pass.forward(times, states, whyNot), whyNot.c_str());
    std::vector<double> lambda0, quadrature(2, 0.0);
    QVERIFY2(pass.backward(g, {0}, lambda0, quadrature, whyNot), whyNot.c_str());
    double dk = 0;
    for (std::size_t j = 0; j < times.size(); ++j)
      dk -= g[j][0] * times[j] * 2.0 * std::exp(-0.7 * times[j]);
    QVERIFY2(std::abs(quadrature[0] - dk) <= 1e-8 * std::abs(dk),
             (sci(quadrature[0] / dk - 1) + " relative").c_str());
  }

  // A pass that ends where the right-hand side switches: x' = k − c·x while t < 1, −c·x after,
  // x(0) = 0, so x(t) = (k/c)(1 − e^{−ct}) on [0, 1]. With setLeftLimitAt(1) the step landing on
  // t = 1 takes the branch it integrates, in odeSD's forward steps and in the sweep:
  // dJ/dk = Σ_j g_j (1 − e^{−c t_j})/c for J = Σ_j g_j x(t_j). Without it the landing step sees
  // f = −c·x at its end, fails the error test and shrinks until its error k·h/2 is within the
  // tolerance: more steps for the same answer (that the switch is real here).
  void passEndingAtSwitchTakesLeftLimit() {
    testing::SystemBuilder b;
    auto& e = b.e();
    const symbolic::Expr k = b.param("k", 2.0);
    const symbolic::Expr x = b.state("x", 0.0);
    const double c = 0.5;
    const symbolic::Expr decay = e.neg(e.mul(b.c(c), x));
    const symbolic::Expr pieces[] = {e.add(k, decay), e.binary(symbolic::Op::Lt, b.t(), b.c(1.0))};
    b.rhs(x, e.piecewise(pieces, decay));
    const Model m = b.compile();
    integrators::IntegratorOptions o;
    o.rtol = 1e-10;
    const std::vector<double> times{0.3, 1.0};
    const auto g = weights(times.size(), 1);
    long steps = 0;
    auto run = [&](bool leftLimit, std::vector<double>& q, std::vector<std::vector<double>>& states) {
      steadystate::AdjointTimeCourse adj(m, o, 0.0, {0.0}, m->nominalParameters());
      adj.preferOdeSd();
      if (leftLimit) adj.setLeftLimitAt(1.0);
      states = adj.forward(times);
      std::vector<double> lambda0;
      q.clear();
      adj.backward(g, lambda0, q);
      steps = adj.forwardSteps();
      return adj.method();
    };
    std::vector<double> q;
    std::vector<std::vector<double>> states;
    QCOMPARE(run(true, q, states), std::string("odeSD, discrete adjoint"));
    const double k0 = 2.0, x1 = k0 / c * (1 - std::exp(-c));
    QVERIFY2(std::abs(states[1][0] - x1) <= 1e-8 * x1, sci(states[1][0] / x1 - 1).c_str());
    double dk = 0;
    for (std::size_t j = 0; j < times.size(); ++j) dk += g[j][0] * (1 - std::exp(-c * times[j])) / c;
    QVERIFY2(std::abs(q[0] - dk) <= 1e-8 * std::abs(dk), (sci(q[0] / dk - 1) + " relative").c_str());
    const long withLeftLimit = steps;
    run(false, q, states);
    QVERIFY2(steps > withLeftLimit,
             (std::to_string(steps) + " steps without, " + std::to_string(withLeftLimit) + " with")
                 .c_str());
  }

  // Robertson to t = 4e5: odeSD hands the stiff tail to CVODES, so the pass is not odeSD's to
  // transpose; forward() says so, and AdjointTimeCourse runs CVODES's adjoint instead.
  void handOverFallsBackToCvodes() {
    const Model m = testing::robertsonModel();
    integrators::IntegratorOptions o;
    o.rtol = 1e-8;
    o.atol = 1e-14;
    const std::vector<double> times{1.0, 100.0, 4e5};
    const auto g = weights(times.size(), m->nx());
    const Adjoint a = discreteAdjoint(m, o, times, g);
    if (a.ok)
      QSKIP("odeSD integrated Robertson to 4e5 without a hand-over: nothing to fall back from");
    QVERIFY2(a.whyNot.find("handed the stiff tail") != std::string::npos, a.whyNot.c_str());
    const std::vector<double> p = m->nominalParameters();
    std::vector<double> x0 = initialState(m);
    steadystate::AdjointTimeCourse adj(m, o, 0.0, x0, p);
    adj.preferOdeSd();
    adj.forward(times);
    std::vector<double> lambda0, q;
    adj.backward(g, lambda0, q);
    QCOMPARE(adj.method(), std::string("CVODES, checkpointing, quadratures"));
    QVERIFY2(adj.fallback().find("handed the stiff tail") != std::string::npos,
             adj.fallback().c_str());
    QCOMPARE(q.size(), static_cast<std::size_t>(m->np()));
    for (double v : q) QVERIFY(std::isfinite(v));
  }
};

QTEST_GUILESS_MAIN(TestOdeSdAdjoint)
#include "tst_odesd_adjoint.moc"
