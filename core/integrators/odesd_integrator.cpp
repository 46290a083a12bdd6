// SPDX-License-Identifier: MIT
#include "core/integrators/odesd_integrator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "core/common/errors.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/odesd_coefficients.h"
#include "core/integrators/sparse_lu.h"

namespace sensode::integrators {

namespace {

using std::size_t;

std::string num(double v, int precision = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Steps below this cannot move t (t + h = t): odeSD fails instead of taking them (CVODES only
// warns).
double minStepSize(double t) { return 16 * kEps * std::max(std::abs(t), 1e-300); }

// Why the last attempt failed (for messages after repeated failures).
struct Cause {
  enum class Kind {
    None,
    Diverged,        // ‖δ_m‖ > 2‖δ_{m−1}‖
    TooSlow,         // not converged in maxNewtonIterations
    NonFiniteF,      // f(y) not finite (row = state)
    NonFiniteA,      // ẍ(y) not finite
    NonFiniteJ,      // J entry (row, col)
    NonFiniteJJ,     // J_J entry (row, col)
    Singular,        // W singular or not finite
  };
  Kind kind = Kind::None;
  int row = -1, col = -1;
  double t = 0;
  bool nonFinite() const {
    return kind == Kind::NonFiniteF || kind == Kind::NonFiniteA || kind == Kind::NonFiniteJ ||
           kind == Kind::NonFiniteJJ;
  }
};

struct NewtonResult {
  bool converged = false;
  int iterations = 0;
  double rate = 1;
};

}  // namespace

struct OdeSdIntegrator::Impl {
  // ---- problem ----
  std::shared_ptr<const symbolic::CompiledModel> model;
  IntegratorOptions options;
  OdeSdOptions sd;
  std::vector<double> p;
  int n = 0;
  bool initialized = false;
  bool started = false;  // f0, a0 (and S derivatives) evaluated, h0 chosen
  double stopTime = kInf;
  std::function<void(const OdeSdStepInfo&)> observer;
  StepCallback stepCallback;
  // dense() on the last accepted step, states only, for the step callback.
  struct Dense final : StepDenseOutput {
    Impl* impl = nullptr;
    void state(double tq, double* out) override { impl->dense(tq, out, nullptr); }
  };

  // ---- integration frontier: the last accepted step ended at t ----
  double t = 0, tPrev = 0;
  std::vector<double> x, f, a;         // at t
  std::vector<double> xm1, fm1, am1;   // at tPrev = t − hm1
  std::vector<double> xm2;             // at tPrev − hm2
  double hm1 = 0, hm2 = 0;
  int history = 0;       // accepted steps so far, capped at 2 (how many of xm1, xm2 are valid)
  double zLast = 0;      // z = h‖J‖₁ of the last accepted step
  double hNext = 0;      // the controller's proposal for the next step (0 = not chosen yet)
  bool failedRecently = false;  // a rejection or Newton failure since the last acceptance
  int cappedInARow = 0;  // consecutive attempts whose h the z cap cut

  // ---- output ----
  double tOut = 0;
  std::vector<double> xOut;

  // ---- work (allocated in initialize) ----
  std::vector<double> xPred, y, fy, ay, g, c, w, dvec, f1, a1;
  std::vector<double> jv, jjv;  // J, J_J values (model CSC order) of the current attempt
  double normJ1 = 0;
  symbolic::SparsePattern wPattern;       // union of I, J, J_J
  std::vector<int> wOfJ, wOfJJ, wOfDiag;  // model entry → position in wPattern
  detail::SparseLu lu;
  Cause cause;  // why the last attempt failed

  // ---- sensitivities (§3) ----
  bool sens = false;
  bool sensErrorControl = true;
  int ns = 0;
  std::vector<int> paramIdx;
  std::vector<double> S, Sd, Sdd;           // n × ns column-major at t
  std::vector<double> Sm1, Sdm1, Sddm1;     // at tPrev
  std::vector<double> S1, Sd1, Sdd1;        // the step's new values
  std::vector<double> FP, AP;               // f_p, a_p (selected columns, dense n × ns)
  std::vector<double> fpv, apv;             // model CSC values (all parameters)
  std::vector<double> DS;                   // error estimate
  std::vector<double> jv1, jjv1;            // J, J_J at x_{n+1} (reusable by the next step)
  bool jacobiansAtFrontier = false;         // jv1/jjv1 hold J(x, t) of the current frontier
  bool luAtFrontier = false;                // lu holds W_s(hm1) at the frontier
  std::vector<double> sOut;

  // ---- hand-over ----
  std::unique_ptr<CvodesIntegrator> bdf;
  IntegratorStats own;     // odeSD's counters
  IntegratorStats merged;  // own + CVODES's after a hand-over

  // =====================================================================================
  // helpers

  std::string stateName(int i) const {
    const auto& states = model->system().states;
    if (i >= 0 && i < static_cast<int>(states.size())) {
      return "'" + states[static_cast<size_t>(i)].id + "'";
    }
    return "#" + std::to_string(i);
  }

  std::string describe(const Cause& why) const {
    switch (why.kind) {
      case Cause::Kind::Diverged: return "Newton iteration diverged";
      case Cause::Kind::TooSlow:
        return "Newton iteration did not converge in " + std::to_string(sd.maxNewtonIterations) +
               " iterations";
      case Cause::Kind::NonFiniteF:
        return "non-finite value in f for state " + stateName(why.row) + " at t = " + num(why.t);
      case Cause::Kind::NonFiniteA:
        return "non-finite value in the second derivative of state " + stateName(why.row) +
               " at t = " + num(why.t);
      case Cause::Kind::NonFiniteJ:
        return "non-finite value in the Jacobian entry d f[" + stateName(why.row) + "] / d " +
               stateName(why.col) + " at t = " + num(why.t);
      case Cause::Kind::NonFiniteJJ:
        return "non-finite value in the second-derivative Jacobian entry d a[" +
               stateName(why.row) + "] / d " + stateName(why.col) + " at t = " + num(why.t);
      case Cause::Kind::Singular: return "singular Newton matrix";
      case Cause::Kind::None: break;
    }
    return "unknown cause";
  }

  [[noreturn]] void fail(const std::string& what, double tt, double hh) const {
    throw IntegrationFailure(
        "odeSD failed at t = " + num(tt) + " (step size " + num(hh, 3) + "): " + what, tt, hh);
  }

  // w_i = rtol·max(|u_i|, |v_i|) + atol
  void weights(const double* u, const double* v, double* out) const {
    for (int i = 0; i < n; ++i) {
      out[i] = options.rtol * std::max(std::abs(u[i]), std::abs(v[i])) + options.atol;
    }
  }

  // sqrt((1/n) Σ (v_i / w_i)²)
  double wnorm(const double* v, const double* wts, int len) const {
    double s = 0;
    for (int i = 0; i < len; ++i) {
      const double q = v[i] / wts[i];
      s += q * q;
    }
    return len == 0 ? 0.0 : std::sqrt(s / len);
  }

  int firstNonFinite(const double* v, int len) const {
    for (int i = 0; i < len; ++i) {
      if (!std::isfinite(v[i])) return i;
    }
    return -1;
  }

  // f and ẍ at (tt, xx); false (cause recorded) when not finite.
  bool evalFA(double tt, const double* xx, double* ff, double* aa) {
    model->rhsAndSecond(tt, xx, p.data(), ff, aa);
    ++own.rhsEvals;
    ++own.secondDerivativeEvals;
    if (int i = firstNonFinite(ff, n); i >= 0) {
      cause = {Cause::Kind::NonFiniteF, i, -1, tt};
      return false;
    }
    if (int i = firstNonFinite(aa, n); i >= 0) {
      cause = {Cause::Kind::NonFiniteA, i, -1, tt};
      return false;
    }
    return true;
  }

  int columnOf(const symbolic::SparsePattern& pat, int k) const {
    const auto it = std::upper_bound(pat.colPtr.begin(), pat.colPtr.end(), k);
    return static_cast<int>(it - pat.colPtr.begin()) - 1;
  }

  // (J, J_J) at (tt, xx) into (jvals, jjvals); false (cause recorded) when not finite.
  bool evalJacobians(double tt, const double* xx, double* jvals, double* jjvals) {
    model->jacobianPair(tt, xx, p.data(), jvals, jjvals);
    ++own.jacEvals;
    ++own.jacobianOfSecondEvals;
    const auto& jp = model->jacobianPattern();
    const auto& jjp = model->jacobianOfSecondPattern();
    if (int k = firstNonFinite(jvals, jp.nnz()); k >= 0) {
      cause = {Cause::Kind::NonFiniteJ, jp.rowIdx[static_cast<size_t>(k)], columnOf(jp, k), tt};
      return false;
    }
    if (int k = firstNonFinite(jjvals, jjp.nnz()); k >= 0) {
      cause = {Cause::Kind::NonFiniteJJ, jjp.rowIdx[static_cast<size_t>(k)], columnOf(jjp, k),
               tt};
      return false;
    }
    return true;
  }

  // ‖J‖₁: largest column sum of |J|.
  double norm1(const double* jvals) const {
    const auto& jp = model->jacobianPattern();
    double best = 0;
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = jp.colPtr[static_cast<size_t>(j)]; k < jp.colPtr[static_cast<size_t>(j) + 1];
           ++k) {
        s += std::abs(jvals[k]);
      }
      best = std::max(best, s);
    }
    return best;
  }

  // W = I − (hs/2) J + (hs²/12) J_J into the LU's values, factorised.
  bool factorW(double hs, const double* jvals, const double* jjvals) {
    double* v = lu.values();
    std::fill(v, v + wPattern.nnz(), 0.0);
    for (int i = 0; i < n; ++i) v[wOfDiag[static_cast<size_t>(i)]] = 1.0;
    const double c1 = -hs / 2, c2 = hs * hs / 12;
    for (size_t k = 0; k < wOfJ.size(); ++k) v[wOfJ[k]] += c1 * jvals[k];
    for (size_t k = 0; k < wOfJJ.size(); ++k) v[wOfJJ[k]] += c2 * jjvals[k];
    ++own.luFactorizations;
    if (!lu.factorize()) {
      cause = {Cause::Kind::Singular, -1, -1, t + hs};
      return false;
    }
    return true;
  }

  // Union pattern of I, J and J_J with the maps from the model's entries into it.
  void buildNewtonPattern() {
    const auto& jp = model->jacobianPattern();
    const auto& jjp = model->jacobianOfSecondPattern();
    wPattern = {};
    wPattern.rows = wPattern.cols = n;
    wPattern.colPtr.assign(static_cast<size_t>(n) + 1, 0);
    wOfJ.assign(static_cast<size_t>(jp.nnz()), -1);
    wOfJJ.assign(static_cast<size_t>(jjp.nnz()), -1);
    wOfDiag.assign(static_cast<size_t>(n), -1);
    for (int j = 0; j < n; ++j) {
      int kj = jp.colPtr[static_cast<size_t>(j)], ej = jp.colPtr[static_cast<size_t>(j) + 1];
      int kk = jjp.colPtr[static_cast<size_t>(j)], ek = jjp.colPtr[static_cast<size_t>(j) + 1];
      bool diag = false;
      for (;;) {
        int row = n;
        if (kj < ej) row = std::min(row, jp.rowIdx[static_cast<size_t>(kj)]);
        if (kk < ek) row = std::min(row, jjp.rowIdx[static_cast<size_t>(kk)]);
        if (!diag) row = std::min(row, j);
        if (row == n) break;
        const int pos = wPattern.nnz();
        wPattern.rowIdx.push_back(row);
        if (row == j) {
          wOfDiag[static_cast<size_t>(j)] = pos;
          diag = true;
        }
        if (kj < ej && jp.rowIdx[static_cast<size_t>(kj)] == row) wOfJ[static_cast<size_t>(kj++)] = pos;
        if (kk < ek && jjp.rowIdx[static_cast<size_t>(kk)] == row) {
          wOfJJ[static_cast<size_t>(kk++)] = pos;
        }
      }
      wPattern.colPtr[static_cast<size_t>(j) + 1] = wPattern.nnz();
    }
  }

  // =====================================================================================
  // start

  // The start derivatives (f0, a0 and, with sensitivities, J0, J_J,0, f_p,0, a_p,0) are the
  // right-hand limits at t0: the first step integrates over (t0, t0 + h], and every later
  // evaluation lies inside such an interval. A model whose right-hand side switches at t0
  // itself (a piecewise input "time ≤ t_end" with t_end = t0, e.g. Fujita's EGF pulse) has a
  // value at the single point t0 that no solution on (t0, T] sees; fed into the rule as ẋ0, ẍ0
  // (or Ṡ0 = J S0 + f_p,0) it is a jump that the first-step estimate D = x1 − Taylor-2 reports
  // as an O(h) error at every h: the error test failed until the step size underflowed. The
  // smallest double after t0 is that right-hand limit for every relational test on time (and
  // changes smooth time dependence by one ulp).
  static double rightOf(double tt) {
    return std::nextafter(tt, std::numeric_limits<double>::infinity());
  }

  void start(double tout) {
    if (!evalFA(rightOf(t), x.data(), f.data(), a.data())) {
      cause.t = t;  // report t0, not the ulp after it
      fail(describe(cause) + " (at the initial state)", t, 0);
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

  // =====================================================================================
  // predictor (§2.3)

  void predict(double hs) {
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
      const auto k = odesd::quadraticPredictor(hs, hm1, hm2);
      for (int i = 0; i < n; ++i) xp[i] = k.xm2 * xm2[i] + k.xm1 * xm1[i] + k.x * x[i];
    } else {
      const double r = hs / hm1;
      for (int i = 0; i < n; ++i) xp[i] = x[i] + r * (x[i] - xm1[i]);
    }
    if (firstNonFinite(xp, n) >= 0) std::copy(x.begin(), x.end(), xPred.begin());
  }

  // =====================================================================================
  // Newton on G(y) = c + (hs/2) f(y) − (hs²/12) a(y) − y with the factorised W (§2.2)

  NewtonResult newton(double tNew, double hs, double* yy, double kappa, int maxIter) {
    NewtonResult r;
    double dOld = 0, rho = 1;
    const double c1 = hs / 2, c2 = hs * hs / 12;
    for (int m = 0; m < maxIter; ++m) {
      if (!evalFA(tNew, yy, fy.data(), ay.data())) {
        r.iterations = m;
        return r;
      }
      for (int i = 0; i < n; ++i) g[i] = c[i] + c1 * fy[i] - c2 * ay[i] - yy[i];
      lu.solve(g.data());
      for (int i = 0; i < n; ++i) yy[i] += g[i];
      ++own.newtonIterations;
      const double d = wnorm(g.data(), w.data(), n);
      r.iterations = m + 1;
      if (!std::isfinite(d)) {
        cause = {Cause::Kind::Diverged, -1, -1, tNew};
        return r;
      }
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

  // =====================================================================================
  // one accepted step (with as many attempts as it takes), or a hand-over. Phases, each a
  // function below: step size (stepSize), predictor (predict), Newton matrix and the z cap
  // (setUpNewton), nonlinear solve (solveStep), error estimate (errorEstimate; sensitivities in
  // sensitivityStep), acceptance and step-size control (accept); the retry loop is here.

  enum class StepResult { Accepted, Handover };

  StepResult step() {
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
      if (!ok) {
        // Newton failure (or non-finite values, or a singular W): h/4, fresh Jacobians (§2.2).
        ++own.newtonFailures;
        ++newtonFails;
        failedRecently = true;
        jacobiansAtFrontier = false;
        if (fixed) fail(describe(cause) + " (fixed step size)", t, hs);
        if (newtonFails >= sd.maxNewtonFailures) {
          fail(cause.nonFinite()
                   ? describe(cause) + " (" + std::to_string(newtonFails) +
                         " failed attempts in a row)"
                   : "Newton iteration failed to converge " + std::to_string(newtonFails) +
                         " times in a row (step size too small); last failure: " +
                         describe(cause),
               t, hs);
        }
        hNext = hs / 4;
        continue;
      }

      int q = 5;
      const double errStates = errorEstimate(hs, q);
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
        jacobiansAtFrontier = false;
        luAtFrontier = false;
        if (errorFails >= sd.maxErrorTestFailures) {
          fail("error test failed " + std::to_string(errorFails) +
                   " times in a row (step size too small; error estimate " + num(err, 3) + ")",
               t, hs);
        }
        const double factor = std::isfinite(err) ? 0.9 * std::pow(err, -1.0 / q) : 0.2;
        hNext = hs * std::max(0.2, factor);
        continue;
      }
      accept(tStep, hs, landing, q, err, errStates, nr);
      return StepResult::Accepted;
    }
  }

  // The attempt's step size: the controller's proposal (or the fixed step) within maxStepSize,
  // landing exactly on the stop time when within 0.01 % of a step of it (§2.5).
  double stepSize(bool& landing) const {
    double hs = sd.fixedStepSize > 0 ? sd.fixedStepSize : std::min(hNext, options.maxStepSize);
    landing = false;
    if (t + 1.0001 * hs >= stopTime) {
      hs = stopTime - t;
      landing = true;
    }
    if (!(hs > minStepSize(t)) || t + hs == t) {
      std::string why;
      if (cause.nonFinite()) {
        why = describe(cause) + " (the step size was cut until t + h = t)";
      } else if (cause.kind != Cause::Kind::None) {
        why = "step size too small (t + h = t); last failure: " + describe(cause);
      } else {
        why = "step size too small: t + h = t (the solution may be blowing up)";
      }
      fail(why, t, hs);
    }
    return hs;
  }

  enum class Setup { Ready, Failed, Handover };

  // Predictor, (J, J_J) at the predictor (or the reusable ones of the sensitivity step at the
  // frontier), the z cap of §4.3 (which may shorten hs or ask for the hand-over) and the LU of
  // W = I − (hs/2) J + (hs²/12) J_J. Sets the Newton weights.
  Setup setUpNewton(double& hs, bool& landing, bool reuseJac) {
    const bool fixed = sd.fixedStepSize > 0;
    predict(hs);
    const double* jvals = reuseJac ? jv1.data() : jv.data();
    const double* jjvals = reuseJac ? jjv1.data() : jjv.data();
    if (!reuseJac && !evalJacobians(landing ? stopTime : t + hs, xPred.data(), jv.data(),
                                    jjv.data())) {
      return Setup::Failed;
    }
    normJ1 = norm1(jvals);
    if (!fixed && hs * normJ1 > sd.zMax) {
      // Capped: hand over after handoverAfter consecutive capped attempts, else h = zMax/‖J‖₁
      // with the predictor (and Jacobians) redone for it.
      ++cappedInARow;
      if (sd.handoverAfter > 0 && cappedInARow >= sd.handoverAfter) return Setup::Handover;
      hs = sd.zMax / normJ1;
      hNext = hs;
      landing = false;
      predict(hs);
      if (!reuseJac) {
        if (!evalJacobians(t + hs, xPred.data(), jv.data(), jjv.data())) return Setup::Failed;
        normJ1 = norm1(jv.data());
      }
    } else {
      cappedInARow = 0;
    }
    weights(x.data(), xPred.data(), w.data());
    const bool reuseLu = reuseJac && luAtFrontier && hs == hm1 &&
                         sd.sensitivityJacobianReuse == OdeSdOptions::JacobianReuse::JacobiansAndLu;
    return reuseLu || factorW(hs, jvals, jjvals) ? Setup::Ready : Setup::Failed;
  }

  // Simplified Newton from the predictor for x_{n+1} = y, then f₁ = f(y), a₁ = ẍ(y) (§2.2).
  NewtonResult solveStep(double tStep, double hs) {
    const double c1 = hs / 2, c2 = hs * hs / 12;
    for (int i = 0; i < n; ++i) c[i] = x[i] + c1 * f[i] + c2 * a[i];
    std::copy(xPred.begin(), xPred.end(), y.begin());
    NewtonResult nr = newton(tStep, hs, y.data(), sd.newtonTolerance, sd.maxNewtonIterations);
    if (nr.converged && !evalFA(tStep, y.data(), f1.data(), a1.data())) nr.converged = false;
    return nr;
  }

  // ε = W⁻¹D into dvec and ‖ε‖ (§2.4): D = g5 − g4 with the variable-ratio coefficients, or on
  // the first step D = x₁ − (x₀ + h f₀ + h² a₀/2) with exponent q = 3 (§2.6).
  double errorEstimate(double hs, int& q) {
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

  // Accepts the step: shifts the history, then the next step size (§2.5):
  // σ = (2 err)^(−1/5) (first step 0.9 err^(−1/3)) in [0.2, 5] (wider at the start, below), no
  // growth after a failure or a slowly converging Newton iteration.
  void accept(double tStep, double hs, bool landing, int q, double err, double errStates,
              const NewtonResult& nr) {
    std::swap(xm2, xm1);
    std::swap(xm1, x);
    std::swap(fm1, f);
    std::swap(am1, a);
    std::swap(x, y);
    std::swap(f, f1);
    std::swap(a, a1);
    hm2 = hm1;
    hm1 = hs;
    tPrev = t;
    t = tStep;
    const bool first = history == 0;
    history = std::min(history + 1, 2);
    zLast = hs * normJ1;
    ++own.steps;
    if (sens) acceptSensitivities();

    // Growth caps as CVODE's η_max: 1e4 after the first step, whose h0 (§2.6) is deliberately
    // cautious (x0 = 0 makes the weights atol: h0 = 3.7e-15 on suite case 01561, which then took
    // 22 steps of ×5 to reach h = 1), 10 for the next 10 steps, then §2.5's 5.
    const double maxGrowth = first ? 1e4 : own.steps <= 10 ? 10.0 : 5.0;
    double sigma = maxGrowth;
    if (err > 0) sigma = q == 5 ? std::pow(2 * err, -0.2) : 0.9 * std::pow(err, -1.0 / q);
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
      stepCallback(tPrev, t, view);
    }
  }

  // =====================================================================================
  // sensitivities (§3)

  void allocateSensitivities() {
    const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
    for (auto* v : {&S, &Sd, &Sdd, &Sm1, &Sdm1, &Sddm1, &S1, &Sd1, &Sdd1, &FP, &AP, &DS,
                    &sOut}) {
      v->assign(len, 0.0);
    }
    fpv.assign(static_cast<size_t>(model->paramJacobianPattern().nnz()), 0.0);
    apv.assign(static_cast<size_t>(model->secondParamJacobianPattern().nnz()), 0.0);
    jv1.assign(jv.size(), 0.0);
    jjv1.assign(jjv.size(), 0.0);
  }

  // Selected columns of f_p and a_p at (tt, xx) as dense n × ns blocks.
  void evalParamDerivatives(double tt, const double* xx) {
    model->paramJacobian(tt, xx, p.data(), fpv.data());
    model->secondParamJacobian(tt, xx, p.data(), apv.data());
    ++own.sensitivityRhsEvals;
    scatterColumns(model->paramJacobianPattern(), fpv.data(), FP.data());
    scatterColumns(model->secondParamJacobianPattern(), apv.data(), AP.data());
  }

  void scatterColumns(const symbolic::SparsePattern& pat, const double* vals, double* out) const {
    std::fill(out, out + static_cast<size_t>(n) * static_cast<size_t>(ns), 0.0);
    for (int j = 0; j < ns; ++j) {
      const int col = paramIdx[static_cast<size_t>(j)];
      double* o = out + static_cast<size_t>(j) * static_cast<size_t>(n);
      for (int k = pat.colPtr[static_cast<size_t>(col)]; k < pat.colPtr[static_cast<size_t>(col) + 1];
           ++k) {
        o[pat.rowIdx[static_cast<size_t>(k)]] = vals[k];
      }
    }
  }

  // out = M·X + B for a model-pattern sparse M (n × n) and dense n × ns X, B.
  void sparseTimes(const symbolic::SparsePattern& pat, const double* mvals, const double* X,
                   const double* B, double* out) const {
    const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
    std::copy(B, B + len, out);
    for (int s = 0; s < ns; ++s) {
      const double* xs = X + static_cast<size_t>(s) * static_cast<size_t>(n);
      double* os = out + static_cast<size_t>(s) * static_cast<size_t>(n);
      for (int j = 0; j < n; ++j) {
        const double xj = xs[j];
        if (xj == 0) continue;
        for (int k = pat.colPtr[static_cast<size_t>(j)]; k < pat.colPtr[static_cast<size_t>(j) + 1];
             ++k) {
          os[pat.rowIdx[static_cast<size_t>(k)]] += mvals[k] * xj;
        }
      }
    }
  }

  void startSensitivities() {
    // Ṡ0 = J0 S0 + f_p,0, S̈0 = J_J,0 S0 + a_p,0.
    // Right-hand limits at t0, like f0 and a0 (see rightOf).
    if (!evalJacobians(rightOf(t), x.data(), jv1.data(), jjv1.data())) {
      cause.t = t;
      fail(describe(cause) + " (at the initial state)", t, 0);
    }
    evalParamDerivatives(rightOf(t), x.data());
    sparseTimes(model->jacobianPattern(), jv1.data(), S.data(), FP.data(), Sd.data());
    sparseTimes(model->jacobianOfSecondPattern(), jjv1.data(), S.data(), AP.data(), Sdd.data());
    if (firstNonFinite(Sd.data(), n * ns) >= 0 || firstNonFinite(Sdd.data(), n * ns) >= 0) {
      fail("non-finite sensitivity derivatives at the initial state", t, 0);
    }
    jacobiansAtFrontier = true;  // J(x0) can serve as the first Newton Jacobian
    luAtFrontier = false;
  }

  // After x_{n+1} = y converged: S1, Ṡ1, S̈1 and the sensitivities' error norm.
  double sensitivityStep(double tNew, double hs, int q) {
    if (!evalJacobians(tNew, y.data(), jv1.data(), jjv1.data())) return kInf;
    evalParamDerivatives(tNew, y.data());
    if (!factorW(hs, jv1.data(), jjv1.data())) return kInf;
    const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
    const double c1 = hs / 2, c2 = hs * hs / 12;
    for (size_t k = 0; k < len; ++k) {
      S1[k] = S[k] + c1 * (Sd[k] + FP[k]) + c2 * (Sdd[k] - AP[k]);
    }
    lu.solve(S1.data(), ns);
    sparseTimes(model->jacobianPattern(), jv1.data(), S1.data(), FP.data(), Sd1.data());
    sparseTimes(model->jacobianOfSecondPattern(), jjv1.data(), S1.data(), AP.data(), Sdd1.data());
    // D_S with the same coefficients as the states, ε_S = W_s⁻¹ D_S. The same pass checks that
    // S1, Ṡ1, S̈1 are finite: 0·v is 0 for finite v and NaN otherwise (one pass over the n × ns
    // block instead of three scans).
    double nonFinite = 0;
    if (q == 5) {
      const auto k = odesd::errorWeights(hs / hm1);
      const double h2 = hs * hs;
      for (size_t i = 0; i < len; ++i) {
        nonFinite += 0.0 * (S1[i] + Sd1[i] + Sdd1[i]);
        DS[i] = k.dx * (S[i] - Sm1[i]) + hs * (k.f0 * Sd[i] + k.f1 * Sd1[i]) +
                h2 * (k.a0 * Sdd[i] + k.a1 * Sdd1[i]);
      }
    } else {
      const double h2 = hs * hs / 2;
      for (size_t i = 0; i < len; ++i) {
        nonFinite += 0.0 * (S1[i] + Sd1[i] + Sdd1[i]);
        DS[i] = S1[i] - (S[i] + hs * Sd[i] + h2 * Sdd[i]);
      }
    }
    if (nonFinite != 0 || !std::isfinite(nonFinite)) return kInf;
    // Without S in the error test ε_S is not needed: skip its solve and norm.
    if (!sensErrorControl) return 0;
    lu.solve(DS.data(), ns);
    // max over columns of the weighted RMS norm, weights rtol·max(|S|, |S1|) + atol.
    double err = 0;
    for (int s = 0; s < ns; ++s) {
      const size_t off = static_cast<size_t>(s) * static_cast<size_t>(n);
      double sum = 0;
      for (size_t i = off; i < off + static_cast<size_t>(n); ++i) {
        const double q2 = DS[i] / (options.rtol * std::max(std::abs(S[i]), std::abs(S1[i])) +
                                   options.atol);
        sum += q2 * q2;
      }
      err = std::max(err, sum);
    }
    return std::sqrt(err / n);
  }

  void acceptSensitivities() {
    std::swap(Sm1, S);
    std::swap(Sdm1, Sd);
    std::swap(Sddm1, Sdd);
    std::swap(S, S1);
    std::swap(Sd, Sd1);
    std::swap(Sdd, Sdd1);
    jacobiansAtFrontier = true;
    luAtFrontier = true;  // W_s(hm1) at x_{n+1}
  }

  // =====================================================================================
  // dense output (§2.7)

  // x (and S unless outS is null) at tq ∈ [tPrev, t] into out (outS).
  void dense(double tq, double* out, double* outS) {
    const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
    const bool withS = sens && outS != nullptr;
    if (tq == t || history == 0) {
      std::copy(x.begin(), x.end(), out);
      if (withS) std::copy(S.begin(), S.begin() + static_cast<long>(len), outS);
      return;
    }
    const double th = (tq - tPrev) / hm1;
    if (zLast >= sd.denseSwitch && subStep(th, out, outS)) return;
    hermite(th, out);
    if (withS) {
      const auto k = odesd::hermiteDense(th);
      const double h2 = hm1 * hm1;
      for (size_t i = 0; i < len; ++i) {
        outS[i] = k.x0 * Sm1[i] + k.x1 * S[i] + hm1 * (k.f0 * Sdm1[i] + k.f1 * Sd[i]) +
                  h2 * (k.a0 * Sddm1[i] + k.a1 * Sdd[i]);
      }
    }
  }

  // Quintic Hermite on the last step at θ.
  void hermite(double th, double* out) const {
    const auto k = odesd::hermiteDense(th);
    const double h2 = hm1 * hm1;
    for (int i = 0; i < n; ++i) {
      out[i] = k.x0 * xm1[i] + k.x1 * x[i] + hm1 * (k.f0 * fm1[i] + k.f1 * f[i]) +
               h2 * (k.a0 * am1[i] + k.a1 * a[i]);
    }
  }

  // The rule applied over θ·h from the step start (stiff steps, §2.7), solved by simplified
  // Newton with the step's Jacobians from the quintic Hermite value (usually one iteration: it
  // is accurate in the non-stiff components), then from linear interpolation between the step
  // points (robust when stiff components pollute the Hermite), then with fresh Jacobians there.
  // False when none converges.
  bool subStep(double th, double* out, double* outS) {
    const double hs = th * hm1, tq = tPrev + hs;
    const double c1 = hs / 2, c2 = hs * hs / 12;
    for (int i = 0; i < n; ++i) c[i] = xm1[i] + c1 * fm1[i] + c2 * am1[i];
    weights(xm1.data(), x.data(), w.data());
    luAtFrontier = false;
    bool converged = false, factored = false;
    for (int attempt = 0; attempt < 3 && !converged; ++attempt) {
      if (attempt == 0) {
        hermite(th, out);
        if (firstNonFinite(out, n) >= 0) continue;
      } else {
        for (int i = 0; i < n; ++i) out[i] = xm1[i] + th * (x[i] - xm1[i]);
      }
      if (attempt == 2) {
        if (!evalJacobians(tq, out, jv.data(), jjv.data())) break;
        factored = false;
      }
      if (!factored && !(factored = factorW(hs, jv.data(), jjv.data()))) continue;
      converged = newton(tq, hs, out, sd.newtonTolerance, 6).converged;
    }
    if (!converged) {
      cause = {};
      return false;
    }
    if (sens && outS != nullptr) {
      if (!evalJacobians(tq, out, jv.data(), jjv.data())) return false;
      evalParamDerivatives(tq, out);
      if (!factorW(hs, jv.data(), jjv.data())) return false;
      const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
      for (size_t k = 0; k < len; ++k) {
        outS[k] = Sm1[k] + c1 * (Sdm1[k] + FP[k]) + c2 * (Sddm1[k] - AP[k]);
      }
      lu.solve(outS, ns);
    }
    return true;
  }

  // =====================================================================================
  // hand-over to CVODES BDF (§4.3)

  void handOver() {
    bdf = std::make_unique<CvodesIntegrator>();
    IntegratorOptions o = options;
    // CVODES picks its own first step: starting it at the capped odeSD step measured no better.
    o.initialStepSize = 0;
    // With sensitivities: the augmented mode by default (IntegratorOptions::handoverCorrector);
    // the forward module's per-vector operations made the tail up to 89 % of odeSD's time.
    o.sensitivityCorrector = options.handoverCorrector;
    bdf->initialize(model, o, t, x, p);
    bdf->setStepCallback(stepCallback);
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

  void mergeStats() {
    merged = own;
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
};

// =======================================================================================

OdeSdIntegrator::OdeSdIntegrator() : impl_(std::make_unique<Impl>()) {}
OdeSdIntegrator::~OdeSdIntegrator() = default;

void OdeSdIntegrator::setOdeSdOptions(const OdeSdOptions& options) { impl_->sd = options; }
const OdeSdOptions& OdeSdIntegrator::odeSdOptions() const { return impl_->sd; }

void OdeSdIntegrator::setStopTime(double tStop) {
  Impl& d = *impl_;
  if (!d.initialized) throw Error("OdeSdIntegrator::setStopTime called before initialize");
  if (!(tStop >= d.t)) {
    throw InvalidOptions("OdeSdIntegrator: stop time " + num(tStop, 17) +
                         " is before the current time " + num(d.t, 17));
  }
  d.stopTime = tStop;
  if (d.bdf) d.bdf->setStopTime(tStop);
}

void OdeSdIntegrator::setStepObserver(std::function<void(const OdeSdStepInfo&)> observer) {
  impl_->observer = std::move(observer);
}

void OdeSdIntegrator::setStepCallback(StepCallback callback) {
  impl_->stepCallback = std::move(callback);
  if (impl_->bdf) impl_->bdf->setStepCallback(impl_->stepCallback);
}

void OdeSdIntegrator::initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                                 const IntegratorOptions& options, double t0,
                                 const std::vector<double>& x0, const std::vector<double>& p) {
  const OdeSdOptions sd = impl_->sd;
  auto observer = impl_->observer;
  auto stepCallback = impl_->stepCallback;
  impl_ = std::make_unique<Impl>();
  Impl& d = *impl_;
  d.sd = sd;
  d.observer = std::move(observer);
  d.stepCallback = std::move(stepCallback);
  if (!model) throw Error("OdeSdIntegrator::initialize: no model");
  if (auto problem = options.validate()) throw InvalidOptions(*problem);
  if (!(sd.newtonTolerance > 0) || !(sd.maxNewtonIterations >= 1) || !(sd.zMax > 0) ||
      sd.handoverAfter < 0 || !(sd.maxNewtonFailures >= 1) || !(sd.maxErrorTestFailures >= 1) ||
      !(sd.fixedStepSize >= 0) || !std::isfinite(sd.fixedStepSize)) {
    throw InvalidOptions(
        "OdeSdOptions: newtonTolerance > 0, maxNewtonIterations >= 1, zMax > 0, handoverAfter >= "
        "0, maxNewtonFailures >= 1, maxErrorTestFailures >= 1 and a finite fixedStepSize >= 0 "
        "are required");
  }
  if (!std::isfinite(t0)) throw InvalidOptions("OdeSdIntegrator: t0 = " + num(t0) + " is not finite");
  const int nx = model->nx();
  if (static_cast<int>(x0.size()) != nx || static_cast<int>(p.size()) != model->np()) {
    throw Error("OdeSdIntegrator::initialize: x0 has " + std::to_string(x0.size()) +
                " values and p " + std::to_string(p.size()) + ", the model needs " +
                std::to_string(nx) + " and " + std::to_string(model->np()));
  }
  d.model = std::move(model);
  d.options = options;
  d.p = p;
  d.n = nx;
  d.t = d.tPrev = d.tOut = t0;
  d.x = x0;
  d.xOut = x0;
  const auto n = static_cast<size_t>(nx);
  for (auto* v : {&d.f, &d.a, &d.xm1, &d.fm1, &d.am1, &d.xm2, &d.xPred, &d.y, &d.fy, &d.ay, &d.g,
                  &d.c, &d.w, &d.dvec, &d.f1, &d.a1}) {
    v->assign(n, 0.0);
  }
  d.jv.assign(static_cast<size_t>(d.model->jacobianPattern().nnz()), 0.0);
  d.jjv.assign(static_cast<size_t>(d.model->jacobianOfSecondPattern().nnz()), 0.0);
  d.initialized = true;
  if (nx == 0) return;
  d.buildNewtonPattern();
  const bool sparse =
      options.linearSolver == LinearSolverKind::Sparse ||
      (options.linearSolver == LinearSolverKind::Auto && nx > IntegratorOptions::kDenseLimit);
  using Backend = detail::SparseLu::Backend;
  d.lu.analyze(d.wPattern, !sparse ? Backend::Dense
                           : sd.sparseBackend == OdeSdOptions::SparseBackend::Klu
                               ? Backend::Klu
                               : Backend::EigenSparse);
}

void OdeSdIntegrator::enableSensitivities(const std::vector<int>& paramIndices,
                                          const std::vector<double>& s0, bool errorControl) {
  Impl& d = *impl_;
  if (!d.initialized) throw Error("OdeSdIntegrator::enableSensitivities called before initialize");
  if (d.started || d.bdf) {
    throw InvalidOptions("OdeSdIntegrator: enableSensitivities must be called before advanceTo");
  }
  const int np = d.model->np();
  for (int k : paramIndices) {
    if (k < 0 || k >= np) {
      throw InvalidOptions("OdeSdIntegrator::enableSensitivities: parameter index " +
                           std::to_string(k) + " is outside [0, " + std::to_string(np) + ")");
    }
  }
  const size_t len = static_cast<size_t>(d.n) * paramIndices.size();
  if (s0.size() != len) {
    throw InvalidOptions("OdeSdIntegrator::enableSensitivities: s0 has " +
                         std::to_string(s0.size()) + " values, expected nx × ns = " +
                         std::to_string(len));
  }
  d.sens = true;
  d.sensErrorControl = errorControl;
  d.paramIdx = paramIndices;
  d.ns = static_cast<int>(paramIndices.size());
  d.allocateSensitivities();
  d.S = s0;
  d.sOut = s0;
}

void OdeSdIntegrator::sensitivities(std::vector<double>& s) const {
  const Impl& d = *impl_;
  if (!d.sens) throw InvalidOptions("OdeSdIntegrator: sensitivities were not enabled");
  if (d.bdf) {
    d.bdf->sensitivities(s);
    return;
  }
  s = d.sOut;
}

void OdeSdIntegrator::advanceTo(double tout, std::vector<double>& xResult,
                                const ProgressMonitor& monitor) {
  Impl& d = *impl_;
  if (!d.initialized) throw Error("OdeSdIntegrator::advanceTo called before initialize");
  if (!(tout >= d.tOut) || !std::isfinite(tout)) {
    throw InvalidOptions("OdeSdIntegrator::advanceTo: tout = " + num(tout, 17) +
                         " is not a finite time after the current time " + num(d.tOut, 17));
  }
  if (tout > d.stopTime) {
    throw InvalidOptions("OdeSdIntegrator::advanceTo: tout = " + num(tout, 17) +
                         " is after the stop time " + num(d.stopTime, 17));
  }
  if (tout == d.tOut) {
    xResult = d.xOut;
    return;
  }
  if (d.n == 0) {
    monitor.check({tout, tout, 0});
    d.t = d.tOut = tout;
    xResult.clear();
    return;
  }
  if (d.bdf) {
    try {
      d.bdf->advanceTo(tout, xResult, monitor);
    } catch (...) {
      d.mergeStats();
      throw;
    }
    d.mergeStats();
    d.tOut = tout;
    d.xOut = xResult;
    return;
  }

  try {
    if (!d.started) d.start(tout);
    long stepsHere = 0;
    monitor.check({d.t, tout, d.own.steps});
    while (d.t < tout) {
      if (stepsHere >= d.options.maxSteps) {
        d.fail("too much work: " + std::to_string(stepsHere) + " steps before t = " + num(tout),
               d.t, d.hNext);
      }
      if (d.step() == Impl::StepResult::Handover) {
        d.handOver();
        d.bdf->advanceTo(tout, xResult, monitor);
        d.mergeStats();
        d.tOut = tout;
        d.xOut = xResult;
        return;
      }
      ++stepsHere;
      monitor.check({d.t, tout, d.own.steps});
    }
    d.dense(tout, d.xOut.data(), d.sens ? d.sOut.data() : nullptr);
  } catch (...) {
    d.mergeStats();
    throw;
  }
  d.mergeStats();
  d.tOut = tout;
  xResult = d.xOut;
}

double OdeSdIntegrator::currentTime() const { return impl_->tOut; }

const IntegratorStats& OdeSdIntegrator::stats() const { return impl_->merged; }

bool OdeSdIntegrator::usesSparseSolver() const {
  return impl_->lu.backend() != detail::SparseLu::Backend::Dense;
}

bool OdeSdIntegrator::handedOver() const { return impl_->bdf != nullptr; }

}  // namespace sensode::integrators
