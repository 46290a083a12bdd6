// SPDX-License-Identifier: MIT
// odeSD: start (§2.6), predictor (§2.3), Newton (§2.2), one accepted step with its retry
// loop, error estimate (§2.4) and step-size control (§2.5).
#include "core/integrators/odesd_impl.h"
#include "core/integrators/step_arithmetic.h"

namespace sensode::integrators {

double OdeSdIntegrator::Impl::rightOf(double tt) { return nextUp(tt); }

void OdeSdIntegrator::Impl::start(double tout) {
  if (!evalFA(rightOf(t), x.data(), f.data(), a.data())) {
    cause.t = t;  // report t0, not the ulp after it
    fail(plain(cause), t, 0, technical(cause) + " (at the start of the integration)");
  }
  if (sens) startSensitivities();
  // §2.6: h0 = min(0.01/‖f0‖, sqrt(0.01/‖a0‖), 0.01 (T − t0)), weights from x0.
  weights(x.data(), x.data(), w.data());
  const double d1 = wnorm(f.data(), w.data(), n), d2 = wnorm(a.data(), w.data(), n);
  const double T = std::min(tout, stopTime);
  double h0 = 0.01 * (T - t);
  if (d1 > 0) h0 = std::min(h0, 0.01 / d1);
  if (d2 > 0) h0 = std::min(h0, std::sqrt(0.01 / d2));
  if (options.initialStepSize > 0) h0 = options.initialStepSize;
  h0 = std::min(h0, options.maxStepSize);
  hNext = std::max(h0, 100 * minStepSize(t));
  started = true;
}

void OdeSdIntegrator::Impl::predict(double hs) {
  double* xp = xPred.data();
  if (history == 0) {
    const double c2 = hs * hs / 2;
    for (int i = 0; i < n; ++i) xp[i] = x[i] + hs * f[i] + c2 * a[i];
  } else if (zLast < sd.predictorSwitch) {
    const auto k = odesd::hermitePredictor(hs / hm1);
    const double h2 = hm1 * hm1;
    for (int i = 0; i < n; ++i) {
      xp[i] = k.xm * xm1[i] + k.x * x[i] + hm1 * (k.fm * fm1[i] + k.f * f[i]) +
              h2 * (k.am * am1[i] + k.a * a[i]);
    }
  } else if (history >= 2) {
    // x alone through as many accepted points as there are, up to stiffPredictorDegree + 1.
    const int deg = std::min(history, sd.stiffPredictorDegree);
    const double past[4] = {hm1, hm2, hm3, hm4};
    const double* pts[5] = {x.data(), xm1.data(), xm2.data(), xm3.data(), xm4.data()};
    double k[5];
    odesd::extrapolationWeights(hs, past, deg, k);
    for (int i = 0; i < n; ++i) {
      double v = k[0] * pts[0][i];
      for (int j = 1; j <= deg; ++j) v += k[j] * pts[j][i];
      xp[i] = v;
    }
  } else {
    const double r = hs / hm1;
    for (int i = 0; i < n; ++i) xp[i] = x[i] + r * (x[i] - xm1[i]);
  }
  if (firstNonFinite(xp, n) >= 0) std::copy(x.begin(), x.end(), xPred.begin());
}

NewtonResult OdeSdIntegrator::Impl::newton(double tNew, double hs, double* yy, double kappa,
                                           int maxIter, detail::SparseLu& wlu, bool haveFA,
                                           double iterateTolerance) {
  NewtonResult r;
  double dOld = 0, rho = 1;
  const double c1 = hs / 2, c2 = hs * hs / 12;
  for (int m = 0; m < maxIter; ++m) {
    if (!(m == 0 && haveFA) && !evalFA(tNew, yy, fy.data(), ay.data())) {
      r.iterations = m;
      return r;
    }
    for (int i = 0; i < n; ++i) g[i] = c[i] + c1 * fy[i] - c2 * ay[i] - yy[i];
    wlu.solve(g.data());
    ++own.newtonIterations;
    const double d = wnorm(g.data(), w.data(), n);
    r.iterations = m + 1;
    if (!std::isfinite(d)) {
      cause = {Cause::Kind::Diverged, -1, -1, tNew};
      return r;
    }
    // yy with its f and ẍ (just evaluated) instead of yy + g, which would need one more
    // evaluation: when g, the error yy still has, is small in the error test's weights at yy.
    if (iterateTolerance > 0 && m > 0 && d <= 0.3 * dOld) {
      weights(x.data(), yy, wIterate.data());
      if (wnorm(g.data(), wIterate.data(), n) <= iterateTolerance) {
        r.converged = true;
        r.evaluatedAtSolution = true;
        r.rate = std::max(0.3 * rho, d / dOld);
        return r;
      }
    }
    for (int i = 0; i < n; ++i) yy[i] += g[i];
    if (m > 0) {
      rho = std::max(0.3 * rho, d / dOld);
      if (d > 2 * dOld) {
        cause = {Cause::Kind::Diverged, -1, -1, tNew};
        r.rate = rho;
        return r;
      }
    }
    r.rate = rho;
    if (d * std::min(1.0, rho) <= kappa) {
      r.converged = true;
      return r;
    }
    dOld = d;
  }
  cause = {Cause::Kind::TooSlow, -1, -1, tNew};
  return r;
}

OdeSdIntegrator::Impl::StepResult OdeSdIntegrator::Impl::step() {
  const bool fixed = sd.fixedStepSize > 0;
  int newtonFails = 0, errorFails = 0;
  for (;;) {
    bool landing = false;
    double hs = stepSize(landing);
    const bool reuseJac = jacobiansAtFrontier && newtonFails == 0 && errorFails == 0 &&
                          sd.sensitivityJacobianReuse != OdeSdOptions::JacobianReuse::None;
    bool ok = true;
    switch (setUpNewton(hs, landing, reuseJac)) {
      case Setup::Handover: return StepResult::Handover;
      case Setup::Failed: ok = false; break;
      case Setup::Ready: break;
    }
    const double tStep = landing ? stopTime : t + hs;
    NewtonResult nr;
    if (ok) {
      nr = solveStep(tStep, hs);
      ok = nr.converged;
    }
    if (!ok && staleAttempt) {
      // A kept W (§2.2 reuse) that does not converge says the Jacobians are out of date, not
      // that h is too large: the same h again with fresh ones, as CVODES does.
      freshNext = true;
      continue;
    }
    if (!ok) {
      // Newton failure (or non-finite values, or a singular W): h/4, fresh Jacobians (§2.2).
      freshNext = true;
      ++own.newtonFailures;
      ++newtonFails;
      failedRecently = true;
      jacobiansAtFrontier = false;
      if (fixed) fail(plain(cause), t, hs, technical(cause) + " (fixed step size)");
      // The load counts steps whose Newton failed to converge, once per step (a streak within
      // one step is maxNewtonFailures's; non-finite values are the bridges').
      if (newtonFails == 1 && !cause.nonFinite()) failureLoad += 1;
      if (sd.failureHandoverLoad > 0 && failureLoad >= sd.failureHandoverLoad &&
          newtonFails == 1 && !cause.nonFinite()) {
        // Newton fails on step after step: hand the rest over to CVODES BDF (a run that stays
        // here costs two attempts per step at h the failures keep small).
        own.fallbacks.push_back("odeSD handed the rest of the run from t = " + num(t) +
                                " to CVODES BDF: Newton failed on step after step (" +
                                std::to_string(own.newtonFailures) + " failures in " +
                                std::to_string(own.steps) + " steps; last: " + technical(cause) +
                                ")");
        return StepResult::Handover;
      }
      if (newtonFails >= sd.maxNewtonFailures) {
        const std::string attempts = std::to_string(newtonFails) + " attempts in a row";
        fail(cause.nonFinite() ? plain(cause)
                               : "the implicit step equations could not be solved in " +
                                     attempts + ", each with a quarter of the step before",
             t, hs,
             "Newton failure on " + attempts + " (h/4 after each); last failure: " +
                 technical(cause));
      }
      hNext = hs / 4;
      continue;
    }

    int q = 5;
    const double errStates = errorEstimate(hs, q);
    if (observer) {  // diagnostics only (OdeSdStepInfo::predictorDistance)
      for (int i = 0; i < n; ++i) pcDiff[i] = y[i] - xPred[i];
      pcDistance = wnorm(pcDiff.data(), w.data(), n);
    }
    double err = errStates;
    if (sens) {
      const double errS = sensitivityStep(tStep, hs, q);
      // (errS is 0 when S is not in the error test: nothing to count then, as in CVODES.)
      if (!(errS <= 1) && errStates <= 1) ++own.sensitivityErrorTestFailures;
      if (sensErrorControl) err = std::max(err, errS);
    }
    if (!fixed && !(err <= 1)) {
      // Rejected (§2.5): h·max(0.2, 0.9 err^(−1/q)).
      ++own.errorTestFailures;
      ++errorFails;
      failedRecently = true;
      // ε = W⁻¹D filters the stiff components through W: after a rejection with a kept W the
      // retry gets a fresh one, so that a stale filter cannot drive a streak of rejections.
      if (staleAttempt) freshNext = true;
      jacobiansAtFrontier = false;
      luAtFrontier = false;
      if (errorFails >= sd.maxErrorTestFailures) {
        if (cause.nonFinite()) {
          fail(plain(cause), t, hs,
               technical(cause) + " (" + std::to_string(errorFails) + " rejected attempts)");
        }
        fail("the local error stayed above the tolerance on " + std::to_string(errorFails) +
                 " smaller and smaller steps",
             t, hs,
             "error test failed " + std::to_string(errorFails) +
                 " times in a row (last error estimate ‖ε‖ = " + num(err, 3) + ")");
      }
      const double factor = std::isfinite(err) ? 0.9 * inverseRoot(err, q) : 0.2;
      hNext = hs * std::max(0.2, factor);
      continue;
    }
    accept(tStep, hs, landing, q, err, errStates, nr);
    return StepResult::Accepted;
  }
}

double OdeSdIntegrator::Impl::stepSize(bool& landing) const {
  double hs = sd.fixedStepSize > 0 ? sd.fixedStepSize : std::min(hNext, options.maxStepSize);
  landing = false;
  if (t + 1.0001 * hs >= stopTime) {
    hs = stopTime - t;
    landing = true;
  }
  if (!(hs > minStepSize(t)) || t + hs == t) {
    if (cause.nonFinite()) {
      fail(plain(cause), t, hs, technical(cause) + " (the step size was cut until t + h = t)");
    } else if (cause.kind != Cause::Kind::None) {
      fail("the step size became too small to move t (t + h = t): the solution may be "
           "blowing up",
           t, hs, "last failure: " + technical(cause));
    }
    fail("the step size became too small to move t (t + h = t): the solution may be blowing up",
         t, hs, "accepted steps shrank until t + h = t");
  }
  return hs;
}

OdeSdIntegrator::Impl::Setup OdeSdIntegrator::Impl::setUpNewton(double& hs, bool& landing,
                                                                bool reuseJac) {
  const bool fixed = sd.fixedStepSize > 0;
  predict(hs);
  const double* jvals = reuseJac ? jv1.data() : jv.data();
  const double* jjvals = reuseJac ? jjv1.data() : jjv.data();
  // The kept pair (jacobianReuseSteps): states only (the sensitivities need J, J_J at x_{n+1}
  // and factorise W_s into lu every step) and never with fixed steps (tests of the rule).
  const bool keep = !sens && !fixed && sd.jacobianReuseSteps > 1;
  const bool useKept = keep && jacKept && !freshNext && jacAge < sd.jacobianReuseSteps;
  staleAttempt = false;
  if (!reuseJac && !useKept) {
    jacKept = false;
    luStepSize = 0;
    freshNext = false;
    if (!evalJacobians(landing ? stopTime : t + hs, xPred.data(), jv.data(), jjv.data(), true)) {
      return Setup::Failed;
    }
    jacKept = keep;
    jacAge = 0;
  }
  normJ1 = jacobianNorm1(jvals);
  // The sharper estimate only where ‖J‖₁ would cap: elsewhere nothing changes and costs nothing.
  const double stiffness =
      !fixed && hs * normJ1 > sd.zMax ? capStiffness(jvals, normJ1) : normJ1;
  if (!fixed && hs * stiffness > sd.zMax) {
    // Capped: hand over after handoverAfter consecutive capped attempts, else h = zMax/stiffness
    // with the predictor (and Jacobians) redone for it.
    ++cappedInARow;
    if (sd.handoverAfter > 0 && cappedInARow >= sd.handoverAfter) return Setup::Handover;
    hs = sd.zMax / stiffness;
    hNext = hs;
    landing = false;
    predict(hs);
    if (!reuseJac && !useKept) {
      if (!evalJacobians(t + hs, xPred.data(), jv.data(), jjv.data(), true)) {
        return Setup::Failed;
      }
      normJ1 = jacobianNorm1(jv.data());
    }
  } else {
    cappedInARow = 0;
  }
  weights(x.data(), xPred.data(), w.data());
  const bool reuseLu = reuseJac && luAtFrontier && hs == hm1 &&
                       sd.sensitivityJacobianReuse == OdeSdOptions::JacobianReuse::JacobiansAndLu;
  if (reuseLu) return Setup::Ready;
  staleAttempt = useKept;
  if (useKept && luStepSize > 0 && std::abs(hs / luStepSize - 1) <= sd.luReuseRatio) {
    return Setup::Ready;
  }
  luStepSize = 0;
  if (!factorW(hs, jvals, jjvals)) return Setup::Failed;
  if (keep) luStepSize = hs;
  return Setup::Ready;
}

NewtonResult OdeSdIntegrator::Impl::solveStep(double tStep, double hs) {
  const double c1 = hs / 2, c2 = hs * hs / 12;
  for (int i = 0; i < n; ++i) c[i] = x[i] + c1 * f[i] + c2 * a[i];
  std::copy(xPred.begin(), xPred.end(), y.begin());
  NewtonResult nr = newton(tStep, hs, y.data(), newtonTolerance(), sd.maxNewtonIterations, lu,
                           false, sens ? 0.0 : sd.iterateTolerance);
  if (nr.converged && nr.evaluatedAtSolution) {
    std::swap(f1, fy);
    std::swap(a1, ay);
  } else if (nr.converged && !evalFA(tStep, y.data(), f1.data(), a1.data())) {
    nr.converged = false;
  }
  return nr;
}

double OdeSdIntegrator::Impl::errorEstimate(double hs, int& q) {
  weights(x.data(), y.data(), w.data());
  if (history >= 1) {
    q = 5;
    const auto k = odesd::errorWeights(hs / hm1);
    const double h2 = hs * hs;
    for (int i = 0; i < n; ++i) {
      dvec[i] = k.dx * (x[i] - xm1[i]) + hs * (k.f0 * f[i] + k.f1 * f1[i]) +
                h2 * (k.a0 * a[i] + k.a1 * a1[i]);
    }
  } else {
    q = 3;
    const double h2 = hs * hs / 2;
    for (int i = 0; i < n; ++i) dvec[i] = y[i] - (x[i] + hs * f[i] + h2 * a[i]);
  }
  lu.solve(dvec.data());
  return wnorm(dvec.data(), w.data(), n);
}

void OdeSdIntegrator::Impl::accept(double tStep, double hs, bool landing, int q, double err,
                                   double errStates, const NewtonResult& nr) {
  std::swap(xm4, xm3);
  std::swap(xm3, xm2);
  std::swap(xm2, xm1);
  std::swap(xm1, x);
  std::swap(fm1, f);
  std::swap(am1, a);
  std::swap(x, y);
  std::swap(f, f1);
  std::swap(a, a1);
  hm4 = hm3;
  hm3 = hm2;
  hm2 = hm1;
  hm1 = hs;
  tPrev = t;
  t = tStep;
  const bool first = history == 0;
  history = std::min(history + 1, 4);
  zLast = hs * normJ1;
  // lu is W(luStepSize) when kept across steps, else the W(hs) this step was solved with.
  stepLuSize = luStepSize > 0 ? luStepSize : hs;
  ++own.steps;
  ++stepGeneration;
  ++jacAge;
  failureLoad *= sd.failureLoadDecay;
  if (sens) acceptSensitivities();

  // Growth caps as CVODE's η_max: 1e4 after the first step, whose h0 (§2.6) is deliberately
  // cautious (x0 = 0 makes the weights atol: h0 = 3.7e-15 on suite case 01561, which then took
  // 22 steps of ×5 to reach h = 1), 10 for the next 10 steps, then §2.5's 5.
  const double maxGrowth = first ? 1e4 : own.steps <= 10 ? 10.0 : 5.0;
  double sigma = maxGrowth;
  if (err > 0) sigma = q == 5 ? inverseRoot(2 * err, 5) : 0.9 * inverseRoot(err, q);
  sigma = std::clamp(sigma, 0.2, maxGrowth);
  if (failedRecently || (nr.rate > 0.5 && nr.iterations > 1)) sigma = std::min(sigma, 1.0);
  if (sens && sd.sensitivityJacobianReuse == OdeSdOptions::JacobianReuse::JacobiansAndLu &&
      sigma >= 1 && sigma <= 1.2) {
    sigma = 1;  // keep h so that the LU of W_s can serve as the next Newton matrix
  }
  // A step shortened to land on the stop time says nothing about the next one.
  hNext = landing && hs < hNext ? std::max(hNext, sigma * hs) : sigma * hs;
  failedRecently = false;
  cause = {};

  if (observer) {
    OdeSdStepInfo info;
    info.t = tPrev;
    info.h = hs;
    info.z = zLast;
    info.error = errStates;
    info.predictorDistance = pcDistance;
    info.newtonIterations = nr.iterations;
    info.firstStep = first;
    info.xStart = std::span<const double>(xm1.data(), xm1.size());
    info.xEnd = std::span<const double>(x.data(), x.size());
    info.errorEstimate = std::span<const double>(dvec.data(), dvec.size());
    observer(info);
  }
  if (stepCallback) {
    Dense view;
    view.impl = this;
    notifyStep(tPrev, t, view);
  }
}

}  // namespace sensode::integrators
