// SPDX-License-Identifier: MIT
// odeSD's direct forward sensitivities as the fits' gradient (issue 29 item 3,
// ObjectiveOptions::forwardIntegrator): the gradient by odeSD, by CVODES and by finite
// differences against the closed form of an exponential decay and against a tight reference on
// a shared PEtab problem, the fallback to CVODES when odeSD fails, and `estimate` reaching the
// same optimum with either integrator, and the fallback's states-only probe: a solution that
// ends where both integrators fail is reported there without a run with sensitivities.
//
// The decay (tests/data/petab/estimation_decay): x' = −k·x, x(0) = x0 (condition from_x0) or 5
// (from_5), y = x with σ = 0.05, k and x0 estimated on log10 scale, so x(t) = x(0)·e^{−kt},
// ∂y/∂log10 k = −t·y·k·ln 10 and ∂y/∂log10 x0 = y·ln 10 (from_x0 only).
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>
#include <numbers>

#include "core/common/errors.h"
#include "core/estimation/estimation.h"
#include "core/petab/objective.h"
#include "core/petab/objective_evaluator.h"
#include "core/petab/petab_problem.h"
#include "support/cli_process.h"
#include "support/numeric_compare.h"

namespace pt = sensode::petab;
namespace est = sensode::estimation;
using sensode::integrators::Method;

namespace {

const QString kDecay = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/estimation_decay/problem.yaml");
// x' = k·x², x(0) = 1: x(t) = 1/(1 − k·t), which ends at t = 1/k; data up to t = 2.
const QString kBlowUp = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/blowup/problem.yaml");
const std::filesystem::path kBoehm =
    SENSODE_SHARED_DIR "/petab/Boehm_JProteomeRes2014/Boehm_JProteomeRes2014.yaml";

// The estimate's objective options (rtol 1e-8, atol 1e-10, 10000 steps) with this integrator.
pt::ObjectiveOptions estimateOptions(Method m) {
  pt::ObjectiveOptions o = est::EstimationOptions{}.objective;
  o.forwardIntegrator = m;
  return o;
}

// The closed-form objective gradient of the decay at (log10 k, log10 x0) = q.
std::vector<double> decayGradient(const pt::Problem& p, const std::vector<double>& q) {
  const double k = std::pow(10.0, q[0]), x0 = std::pow(10.0, q[1]);
  const double ln10 = std::numbers::ln10;
  std::vector<double> g(2, 0.0);
  for (const pt::Measurement& m : p.measurements) {
    const bool fromX0 = p.conditions[static_cast<std::size_t>(m.simulationCondition)].id == "from_x0";
    const double y = (fromX0 ? x0 : 5.0) * std::exp(-k * m.time);
    const double w = -(m.value - y) / (0.05 * 0.05);  // d objective / d y
    g[0] += w * (-m.time * y * k * ln10);
    if (fromX0) g[1] += w * y * ln10;
  }
  return g;
}

double relativeError(const std::vector<double>& g, const std::vector<double>& ref) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, std::abs(g[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return diff / scale;
}

est::EstimationOptions fitOptions(Method m) {
  est::EstimationOptions o;
  o.starts = 4;
  o.seed = 3;
  o.threads = 1;
  o.screen = 0;
  o.polish = 0;
  o.objective.forwardIntegrator = m;
  return o;
}

}  // namespace

class TestForwardIntegrator : public QObject {
  Q_OBJECT

 private slots:
  // At the estimate's tolerances both integrators' gradients are within 1e-6 of the closed
  // form's largest entry, and so are fourth-order central differences at rtol 1e-12.
  void decayGradientAgainstClosedForm() {
    const pt::Problem p = pt::loadProblem(kDecay.toStdString());
    std::vector<double> q = pt::nominalScaledParameters(p);
    q = {std::log10(0.8), std::log10(1.7)};  // away from the data's optimum: a large gradient
    const std::vector<double> exact = decayGradient(p, q);
    for (const Method m : {Method::Cvodes, Method::OdeSd}) {
      const pt::ObjectiveResult r =
          pt::evaluateObjective(p, q, pt::GradientMethod::Forward, estimateOptions(m));
      QCOMPARE(r.integrator, m);
      QVERIFY2(r.fallbacks.empty(), r.fallbacks.empty() ? "" : r.fallbacks.front().c_str());
      QVERIFY(r.integration.steps > 0);
      const double e = relativeError(r.gradient, exact);
      QVERIFY2(e < 1e-6, qPrintable(QStringLiteral("%1: max|g − g_exact|/max|g_exact| = %2")
                                        .arg(sensode::integrators::toString(m))
                                        .arg(e)));
    }
    pt::ObjectiveOptions fd = estimateOptions(Method::Cvodes);
    fd.integrator.rtol = 1e-12;
    fd.integrator.atol = 1e-14;
    fd.fdOrder = 4;
    fd.fdStep = 1e-3;
    const pt::ObjectiveResult r = pt::evaluateObjective(p, q, pt::GradientMethod::FiniteDifferences, fd);
    const double e = relativeError(r.gradient, exact);
    QVERIFY2(e < 1e-6, qPrintable(QStringLiteral("fd: %1").arg(e)));
  }

  // On a shared PEtab problem (Boehm_JProteomeRes2014) both integrators at the estimate's
  // tolerances are within 1e-4 of the reference (CVODES at rtol 1e-12, sensitivities in its
  // error test), and the two references (CVODES and odeSD at 1e-12) agree to 1e-7. At the
  // nominal parameters + 0.1 on every scale: the nominal ones are the published optimum, where
  // the gradient nearly vanishes and its relative error measures cancellation.
  void sharedProblemAgainstTightReference() {
    if (!std::filesystem::exists(kBoehm)) QSKIP("no shared PEtab collection");
    const pt::Problem p = pt::loadProblem(kBoehm);
    std::vector<double> q = pt::nominalScaledParameters(p);
    for (double& v : q) v += 0.1;
    pt::ObjectiveOptions tight = estimateOptions(Method::Cvodes);
    tight.sensitivityErrorControl = true;
    tight.integrator.rtol = 1e-12;
    tight.integrator.atol = 1e-14;
    tight.integrator.maxSteps = 1000000;
    const pt::ObjectiveResult ref = pt::evaluateObjective(p, q, pt::GradientMethod::Forward, tight);
    tight.forwardIntegrator = Method::OdeSd;
    tight.sensitivityErrorControl = false;
    const pt::ObjectiveResult refSd = pt::evaluateObjective(p, q, pt::GradientMethod::Forward, tight);
    QCOMPARE(refSd.integrator, Method::OdeSd);
    const double spread = relativeError(refSd.gradient, ref.gradient);
    QVERIFY2(spread < 1e-7, qPrintable(QStringLiteral("references differ by %1").arg(spread)));
    for (const Method m : {Method::Cvodes, Method::OdeSd}) {
      const pt::ObjectiveResult r =
          pt::evaluateObjective(p, q, pt::GradientMethod::Forward, estimateOptions(m));
      QCOMPARE(r.integrator, m);
      const double e = relativeError(r.gradient, ref.gradient);
      QVERIFY2(e < 1e-4, qPrintable(QStringLiteral("%1: %2")
                                        .arg(sensode::integrators::toString(m))
                                        .arg(e)));
    }
  }

  // odeSD out of steps: the evaluation is CVODES's, bit for bit, and says so.
  void odeSdFailureFallsBackToCvodes() {
    const pt::Problem p = pt::loadProblem(kDecay.toStdString());
    const std::vector<double> q = pt::nominalScaledParameters(p);
    pt::ObjectiveOptions o = estimateOptions(Method::OdeSd);
    o.odeSdMaxSteps = 1;
    const pt::ObjectiveResult r = pt::evaluateObjective(p, q, pt::GradientMethod::Forward, o);
    QCOMPARE(r.integrator, Method::Cvodes);
    QVERIFY(!r.fallbacks.empty());
    QVERIFY2(r.fallbacks.front().rfind(pt::kOdeSdFallback, 0) == 0, r.fallbacks.front().c_str());
    QVERIFY2(r.fallbacks.front().find("CVODES computed this evaluation") != std::string::npos,
             r.fallbacks.front().c_str());
    const pt::ObjectiveResult cv =
        pt::evaluateObjective(p, q, pt::GradientMethod::Forward, estimateOptions(Method::Cvodes));
    QCOMPARE(r.objective, cv.objective);
    QVERIFY(r.gradient == cv.gradient);
  }

  // A solution that ends before the last measurement (k = 1: at t = 1 < 2): odeSD and CVODES's
  // states-only probe both fail at t = 1, and the evaluation fails there, naming both. That it
  // is no lost evaluation: CVODES with sensitivities, the fallback's full run, fails at t = 1
  // too. Below k = 1/2 the same problem evaluates on odeSD, its gradient the closed form's,
  // x(t) = 1/(1 − k·t), ∂x/∂k = t·x².
  void sharedBlowUpEndsTheEvaluation() {
    const pt::Problem p = pt::loadProblem(kBlowUp.toStdString());
    const double k = 0.1;
    const pt::ObjectiveResult fine = pt::evaluateObjective(
        p, {std::log10(k)}, pt::GradientMethod::Forward, estimateOptions(Method::OdeSd));
    QCOMPARE(fine.integrator, Method::OdeSd);
    double exact = 0;
    for (const pt::Measurement& m : p.measurements) {
      const double x = 1 / (1 - k * m.time);
      exact += -(m.value - x) / (0.1 * 0.1) * m.time * x * x * k * std::numbers::ln10;
    }
    // rtol 1e-8 on x; the residuals over σ² = 0.01 magnify its error a hundredfold.
    SENSODE_EXPECT_CLOSE(fine.gradient[0], exact, 0, 2e-5, "d objective / d log10 k", 0);

    const std::vector<double> q = {0.0};  // k = 1
    try {
      pt::evaluateObjective(p, q, pt::GradientMethod::Forward, estimateOptions(Method::OdeSd));
      QFAIL("the evaluation past the blow-up succeeded");
    } catch (const sensode::IntegrationFailure& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("the solution does not continue past t = 1: odeSD and CVODES (the "
                         "states alone) both fail there") == 0,
               what.c_str());
      SENSODE_EXPECT_CLOSE(e.t(), 1.0, 1e-6, 0, "failure time", 0);
    }
    try {
      pt::evaluateObjective(p, q, pt::GradientMethod::Forward, estimateOptions(Method::Cvodes));
      QFAIL("CVODES with sensitivities got past the blow-up");
    } catch (const sensode::IntegrationFailure& e) {
      SENSODE_EXPECT_CLOSE(e.t(), 1.0, 1e-6, 0, "CVODES's failure time", 0);
    }
  }

  // The decision itself: two stalled failures (steps below 1e-12·t) at the same time (relative
  // 1e-4) end the evaluation; failures at different times or at ordinary step sizes, a states'
  // run that succeeds, or one that stops for another reason leave it to the full run; a cancel
  // passes through.
  void probeDecidesOnlyOnASharedStall() {
    using sensode::IntegrationFailure;
    const auto failAt = [](double t, double h) {
      return [t, h] { throw IntegrationFailure("CVODES failed", t, h); };
    };
    const IntegrationFailure blowUp("odeSD failed at t = 28", 27.99997, 1e-15);
    QVERIFY_THROWS_EXCEPTION(IntegrationFailure,
                             pt::detail::stopAtSharedSingularity(blowUp, failAt(27.99998, 2e-15)));
    QVERIFY_THROWS_EXCEPTION(IntegrationFailure,
                             pt::detail::stopAtSharedSingularity(blowUp, failAt(27.9999, 2e-15)));
    pt::detail::stopAtSharedSingularity(blowUp, failAt(27.99, 2e-15));  // 3.6e-4 apart
    pt::detail::stopAtSharedSingularity(blowUp, failAt(27.99998, 1e-9));  // not stalled
    pt::detail::stopAtSharedSingularity(blowUp, [] {});
    pt::detail::stopAtSharedSingularity(blowUp, [] { throw sensode::Error("no steady state"); });
    QVERIFY_THROWS_EXCEPTION(sensode::Cancelled, pt::detail::stopAtSharedSingularity(
                                                     blowUp, [] { throw sensode::Cancelled(3); }));
    // Crauste's knife edge: both stall, 14 % apart.
    const IntegrationFailure knifeEdge("CVODES failed at t = 0.0200489", 0.0200489, 7.36e-19);
    pt::detail::stopAtSharedSingularity(knifeEdge, failAt(0.0229853, 2.19e-18));
    // Fujita: repeated error-test failures at ordinary steps, 0.2 apart.
    const IntegrationFailure errorTest("CVODES failed at t = 283.3", 283.3, 2.2e-4);
    pt::detail::stopAtSharedSingularity(errorTest, failAt(283.5, 2.1e-4));
  }

  // A cancel is not a failure: it is not retried by CVODES.
  void cancelIsNotAFallback() {
    const pt::Problem p = pt::loadProblem(kDecay.toStdString());
    sensode::ProgressMonitor abort;
    abort.callback = [](const sensode::ProgressInfo&) { return sensode::Decision::Abort; };
    QVERIFY_THROWS_EXCEPTION(sensode::Cancelled,
                             pt::evaluateObjective(p, pt::nominalScaledParameters(p),
                                                   pt::GradientMethod::Forward,
                                                   estimateOptions(Method::OdeSd), abort));
  }

  // The same optimum with the odeSD gradient as with CVODES's (least squares and L-BFGS), and a
  // run whose odeSD always fails finishes on CVODES and counts the evaluations.
  void estimateReachesTheSameOptimum() {
    for (const est::Optimizer opt : {est::Optimizer::LeastSquares, est::Optimizer::QuasiNewton}) {
      est::EstimationOptions cvo = fitOptions(Method::Cvodes), sdo = fitOptions(Method::OdeSd);
      cvo.optimizer = sdo.optimizer = opt;
      const est::EstimationResult cv = est::runEstimation({kDecay.toStdString()}, cvo);
      const est::EstimationResult sd = est::runEstimation({kDecay.toStdString()}, sdo);
      QVERIFY2(cv.status == est::EstimationResult::Status::Success, cv.message.c_str());
      QVERIFY2(sd.status == est::EstimationResult::Status::Success, sd.message.c_str());
      QCOMPARE(cv.forwardIntegrator, Method::Cvodes);
      QCOMPARE(sd.forwardIntegrator, Method::OdeSd);
      QCOMPARE(sd.cvodesFallbacks, 0L);
      SENSODE_EXPECT_CLOSE(sd.bestObjective, cv.bestObjective, 0, 1e-6, "best objective", 0);
      for (std::size_t i = 0; i < cv.best.size(); ++i)
        SENSODE_EXPECT_CLOSE(sd.best[i], cv.best[i], 1e-5, 0, "best point (log10)", i);
    }
    est::EstimationOptions failing = fitOptions(Method::OdeSd);
    failing.objective.odeSdMaxSteps = 1;
    const est::EstimationResult f = est::runEstimation({kDecay.toStdString()}, failing);
    const est::EstimationResult cv = est::runEstimation({kDecay.toStdString()}, fitOptions(Method::Cvodes));
    QVERIFY2(f.status == est::EstimationResult::Status::Success, f.message.c_str());
    QVERIFY(f.cvodesFallbacks > 0);
    bool said = false;
    for (const std::string& s : f.fallbacks) said = said || s.rfind(pt::kOdeSdFallback, 0) == 0;
    QVERIFY2(said, "no fallback sentence for the odeSD failures");
    SENSODE_EXPECT_CLOSE(f.bestObjective, cv.bestObjective, 0, 1e-9, "best objective", 0);
  }

  // The CLI names the integrator on stdout, and refuses an unknown one in one line (exit 2).
  void cliNamesTheIntegrator() {
    QProcess run;
    run.start(QStringLiteral(SENSODE_CLI_PATH),
              {QStringLiteral("estimate"), kDecay, QStringLiteral("--starts"), QStringLiteral("2"),
               QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--screen"),
               QStringLiteral("0"), QStringLiteral("--polish"), QStringLiteral("0")});
    QVERIFY(run.waitForFinished(120000));
    QCOMPARE(run.exitCode(), 0);
    const QString out = QString::fromLocal8Bit(run.readAllStandardOutput());
    QVERIFY2(out.contains(QStringLiteral("\nintegrator odesd\n")), qPrintable(out));

    const auto bad = sensode::test::runProcess(
        SENSODE_CLI_PATH,
        {QStringLiteral("estimate"), kDecay, QStringLiteral("--forward-integrator"),
         QStringLiteral("rk4")},
        60000);
    QCOMPARE(bad.exitCode, 2);  // a usage error, as every bad option value
    QCOMPARE(bad.errLines.size(), 1);
    QVERIFY2(bad.errLines.front().contains(QStringLiteral("--forward-integrator: 'rk4' is not one "
                                                          "of odesd, cvodes")),
             qPrintable(bad.errLines.front()));
  }
};

QTEST_GUILESS_MAIN(TestForwardIntegrator)
#include "tst_forward_integrator.moc"
