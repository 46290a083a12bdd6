// SPDX-License-Identifier: MIT
// odeSD: what odeSD does instead of failing: bridges with CVODES BDF over points it cannot step
// from (non-finite higher derivatives, failed steps) and the hand-over of stiff tails (§4.3); and
// the statistics that merge odeSD's counters with CVODES's.
#include "core/integrators/odesd_impl.h"

namespace sensode::integrators {

bool OdeSdIntegrator::Impl::derivativesFiniteAt(double tt, const double* xx) {
  jacKept = false;  // jv, jjv are overwritten below
  if (!evalFA(tt, xx, fy.data(), ay.data())) return false;
  if (sens) return evalJacobians(tt, xx, jv.data(), jjv.data()) &&
                    evalParamDerivatives(tt, xx, jv.data());
  // Without sensitivities J_J only builds Newton matrices, which do without its non-finite
  // entries (evalJacobians): J must be finite (a state that stays at 0 under a Hill term keeps
  // J_J non-finite for good, and must not keep CVODES bridging).
  model->jacobianPair(std::min(tt, evalTimeLimit), xx, p.data(), jv.data(), jjv.data());
  ++jacobianWrites;
  ++own.jacEvals;
  ++own.jacobianOfSecondEvals;
  const auto& jp = model->jacobianPattern();
  if (const int k = firstNonFinite(jv.data(), jp.nnz()); k >= 0) {
    cause = {Cause::Kind::NonFiniteJ, jp.rowIdx[static_cast<size_t>(k)], columnOf(jp, k), tt};
    return false;
  }
  return true;
}

void OdeSdIntegrator::Impl::restartAt(double tt, const std::vector<double>& xx,
                                      const std::vector<double>& ss) {
  t = tPrev = tt;
  x = xx;
  if (sens) S = ss;
  history = 0;
  ++stepGeneration;
  zLast = 0;
  hNext = 0;
  failedRecently = false;
  cappedInARow = 0;
  failureLoad = 0;
  jacobiansAtFrontier = false;
  luAtFrontier = false;
  jacKept = false;
  luStepSize = 0;
  stepLuSize = 0;
  freshNext = false;
  started = false;
  cause = {};
}

OdeSdIntegrator::Impl::Bridged OdeSdIntegrator::Impl::bridge(double tout,
                                                             const IntegrationFailure& failure,
                                                             const ProgressMonitor& monitor) {
  const double tFrom = t;
  const std::string reason = lastFailure;
  // Failing again before one odeSD step since the last bridge: no ping-pong.
  if (bridges >= sd.maxBridges || own.steps == stepsAtBridge) {
    handOver();
    takeoverFailure = failure.what();
    takeoverDetails = failure.details();
    own.fallbacks.push_back("odeSD handed the rest of the run from t = " + num(tFrom) +
                            " to CVODES BDF: " + reason +
                            (own.steps == stepsAtBridge
                                 ? " (again right after the last hand-over)"
                                 : " (after " + std::to_string(bridges) + " hand-overs)"));
    return Bridged::HandedOver;
  }
  CvodesIntegrator cv;
  IntegratorOptions o = options;
  o.initialStepSize = 0;
  o.sensitivityCorrector = options.handoverCorrector;
  cv.initialize(model, o, t, x, p);
  if (sens) cv.enableSensitivities(paramIdx, S, sensErrorControl);
  cv.setStopTime(tout);
  long steps = 0;
  std::vector<double> probe(static_cast<size_t>(n));
  cv.setStepCallback([&](double ta, double tb, StepDenseOutput& dense) {
    notifyStep(ta, tb, dense);
    if (++steps < sd.bridgeMinSteps || tb >= tout) return;
    dense.state(tb, probe.data());
    if (derivativesFiniteAt(tb, probe.data())) throw BridgeEnd{tb};
  });
  double tEnd = tout;
  std::vector<double> xb, sb;
  try {
    try {
      cv.advanceTo(tout, xb, monitor);
    } catch (const BridgeEnd& end) {
      tEnd = end.t;
      cv.advanceTo(tEnd, xb, monitor);  // CVODES stands at tEnd: no step, its exact values
    }
  } catch (const IntegrationFailure& e) {
    add(bridged, cv.stats());
    throw IntegrationFailure(
        std::string(failure.what()) + "; CVODES BDF, tried from t = " + num(tFrom) +
            " instead, failed too: " + e.what(),
        e.t(), e.stepSize(),
        failure.details() + (e.details().empty() ? "" : "; CVODES: " + e.details()));
  }
  add(bridged, cv.stats());
  if (sens) cv.sensitivities(sb);
  ++bridges;
  const std::string sentence = "odeSD handed t in [" + num(tFrom) + ", " + num(tEnd) +
                               "] to CVODES BDF (" + std::to_string(cv.stats().steps) +
                               " steps): " + reason;
  restartAt(tEnd, xb, sb);
  stepsAtBridge = own.steps;
  if (tEnd >= tout && !derivativesFiniteAt(tEnd, xb.data())) {
    // Still not finite at the end of the interval: no point in coming back.
    handOver();
    takeoverFailure = failure.what();
    takeoverDetails = failure.details();
    own.fallbacks.push_back(sentence + "; CVODES keeps the rest of the run (" + plain(cause) +
                            ")");
    cause = {};
    return Bridged::HandedOver;
  }
  own.fallbacks.push_back(sentence + "; odeSD resumed at t = " + num(tEnd));
  cause = {};
  return Bridged::Resumed;
}

void OdeSdIntegrator::Impl::handOver() {
  bdf = std::make_unique<CvodesIntegrator>();
  IntegratorOptions o = options;
  // CVODES picks its own first step: starting it at the capped odeSD step measured no better.
  o.initialStepSize = 0;
  // With sensitivities: the augmented mode by default (IntegratorOptions::handoverCorrector);
  // the forward module's per-vector operations made the tail up to 89 % of odeSD's time.
  o.sensitivityCorrector = options.handoverCorrector;
  bdf->initialize(model, o, t, x, p);
  bdf->setStepCallback(cvodesCallback());
  own.handoverTime = t;
  if (sens) {
    try {
      bdf->enableSensitivities(paramIdx, S, sensErrorControl);
    } catch (const InvalidOptions& e) {
      fail(std::string("stiff tail: hand-over to CVODES BDF with sensitivities failed: ") +
               e.what(),
           t, hNext);
    }
  }
  // CVODES keeps odeSD's promise not to step past the stop time (a jump of the right-hand
  // side there; with sensitivities CVODES otherwise cuts its step until t + h = t).
  if (stopTime < kInf) bdf->setStopTime(stopTime);
  mergeStats();
}

void OdeSdIntegrator::Impl::add(IntegratorStats& into, const IntegratorStats& b) {
  into.steps += b.steps;
  into.rhsEvals += b.rhsEvals;
  into.jacEvals += b.jacEvals;
  into.luFactorizations += b.luFactorizations;
  into.newtonIterations += b.newtonIterations;
  into.newtonFailures += b.newtonFailures;
  into.errorTestFailures += b.errorTestFailures;
  into.sensitivityRhsEvals += b.sensitivityRhsEvals;
  into.sensitivityErrorTestFailures += b.sensitivityErrorTestFailures;
}

void OdeSdIntegrator::Impl::advanceTakenOver(double tout, std::vector<double>& xResult,
                                             const ProgressMonitor& monitor) {
  try {
    bdf->advanceTo(tout, xResult, monitor);
  } catch (const IntegrationFailure& e) {
    if (takeoverFailure.empty()) throw;
    throw IntegrationFailure(
        takeoverFailure + "; CVODES BDF, which took over from t = " + num(own.handoverTime) +
            ", failed too: " + e.what(),
        e.t(), e.stepSize(),
        takeoverDetails + (e.details().empty() ? "" : "; CVODES: " + e.details()));
  }
}

void OdeSdIntegrator::Impl::mergeStats() {
  merged = own;
  add(merged, bridged);
  merged.fallbackSteps = bridged.steps;
  if (patchedNewtonMatrices > 0) {
    merged.fallbacks.insert(
        merged.fallbacks.begin(),
        "odeSD built " + std::to_string(patchedNewtonMatrices) +
            " Newton matrices without the second-derivative terms that are not finite (first: " +
            plain(firstPatch) +
            "); they only steer the iteration, the solution uses f and its time derivative");
  }
  if (!bdf) return;
  const IntegratorStats& b = bdf->stats();
  merged.steps += b.steps;
  merged.rhsEvals += b.rhsEvals;
  merged.jacEvals += b.jacEvals;
  merged.luFactorizations += b.luFactorizations;
  merged.newtonIterations += b.newtonIterations;
  merged.newtonFailures += b.newtonFailures;
  merged.errorTestFailures += b.errorTestFailures;
  merged.sensitivityRhsEvals += b.sensitivityRhsEvals;
  merged.sensitivityErrorTestFailures += b.sensitivityErrorTestFailures;
  merged.handoverSteps = b.steps;
}

}  // namespace sensode::integrators
