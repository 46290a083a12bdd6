// SPDX-License-Identifier: MIT
// odeSD's internals (see odesd_integrator.h for the method): the state of one integration and
// its phases, shared by the files that implement them —
//   odesd_integrator.cpp   the public API, option checks, advanceTo's loop
//   odesd_step.cpp         start, predictor, Newton, error estimate, step control (§2.2–§2.6)
//   odesd_sensitivities.cpp  staggered direct sensitivities (§3)
//   odesd_dense_output.cpp   dense output: quintic Hermite or implicit sub-step (§2.7)
//   odesd_fallbacks.cpp    bridges over points odeSD cannot step from, the stiff-tail hand-over
//                          to CVODES BDF (§4.3), and the statistics of both
// The small evaluation helpers stay inline here (they run in every Newton iteration).
// Internal: included by those files only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/common/errors.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/odesd_coefficients.h"
#include "core/integrators/odesd_failure.h"
#include "core/integrators/odesd_integrator.h"
#include "core/integrators/sparse_lu.h"

namespace sensode::integrators {

namespace odesd {

inline std::string num(double v, int precision = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Steps below this cannot move t (t + h = t): odeSD fails instead of taking them (CVODES only
// warns).
inline double minStepSize(double t) { return 16 * kEps * std::max(std::abs(t), 1e-300); }

struct NewtonResult {
  bool converged = false;
  int iterations = 0;
  double rate = 1;
  bool evaluatedAtSolution = false;  // fy, ay hold f and ẍ at the returned iterate
};

}  // namespace odesd

using odesd::Cause;
using odesd::kEps;
using odesd::kInf;
using odesd::minStepSize;
using odesd::NewtonResult;
using odesd::num;
using std::size_t;

struct OdeSdIntegrator::Impl {
  // ---- problem ----
  std::shared_ptr<const symbolic::CompiledModel> model;
  IntegratorOptions options;
  std::vector<double> atol;  // per state (absolute_tolerances.h): atol × size for concentrations
  OdeSdOptions sd;
  std::vector<double> p;
  int n = 0;
  bool initialized = false;
  bool started = false;  // f0, a0 (and S derivatives) evaluated, h0 chosen
  double stopTime = kInf;
  // Model evaluations take t = min(t, evalTimeLimit) (setLeftLimitAt).
  double evalTimeLimit = kInf;
  std::function<void(const OdeSdStepInfo&)> observer;
  StepCallback stepCallback;
  // What the caller's step callback threw, carried past odeSD's own failure handling (a bridge
  // must not start, nor a CVODES failure be reported, for the caller's exception) and rethrown
  // as it was by advanceTo.
  struct CallbackFailure {
    std::exception_ptr error;
  };
  void notifyStep(double ta, double tb, StepDenseOutput& dense) {
    if (!stepCallback) return;
    try {
      stepCallback(ta, tb, dense);
    } catch (...) {
      throw CallbackFailure{std::current_exception()};
    }
  }
  // The step callback for CVODES (bridges, hand-over): notifyStep.
  StepCallback cvodesCallback() {
    if (!stepCallback) return {};
    return [this](double ta, double tb, StepDenseOutput& dense) { notifyStep(ta, tb, dense); };
  }
  // dense() on the last accepted step, states only, for the step callback.
  struct Dense final : StepDenseOutput {
    Impl* impl = nullptr;
    void state(double tq, double* out) override { impl->dense(tq, out, nullptr); }
    bool sensitivities(double tq, double* outS) override {
      if (!impl->sens) return false;
      scratch.resize(static_cast<std::size_t>(impl->n));
      impl->dense(tq, scratch.data(), outS);
      return true;
    }
    std::vector<double> scratch;
  };

  // ---- integration frontier: the last accepted step ended at t ----
  double t = 0, tPrev = 0;
  std::vector<double> x, f, a;         // at t
  std::vector<double> xm1, fm1, am1;   // at tPrev = t − hm1
  std::vector<double> xm2, xm3, xm4;   // the x-only predictor's older points (stiffPredictorDegree)
  double hm1 = 0, hm2 = 0, hm3 = 0, hm4 = 0;  // hmK: the step that ended at xm(K−1)
  int history = 0;       // accepted steps so far, capped at 4 (how many of xm1 … xm4 are valid)
  double zLast = 0;      // z = h‖J‖₁ of the last accepted step
  double hNext = 0;      // the controller's proposal for the next step (0 = not chosen yet)
  bool failedRecently = false;  // a rejection or Newton failure since the last acceptance
  int cappedInARow = 0;  // consecutive attempts whose h the z cap cut
  double failureLoad = 0;  // Newton failures, decayed per accepted step (failureHandoverLoad)

  // ---- output ----
  double tOut = 0;
  std::vector<double> xOut;

  // ---- work (allocated in initialize) ----
  std::vector<double> xPred, y, fy, ay, g, c, w, dvec, f1, a1;
  std::vector<double> gFiltered;  // dense output: W(stepLuSize)⁻¹ G of the Hermite value
  // The first kEntries stiff dense values (states only) solved on the current step: the event
  // driver scans a step before advanceTo reports its output time, whose implicit sub-step would
  // otherwise be solved twice (core/simulation/event_scan.cpp keeps the step's later
  // outputs itself). Valid while generation == stepGeneration, which every accepted step and
  // every restart bumps.
  struct SubStepMemo {
    static constexpr std::size_t kEntries = 8;
    std::uint64_t generation = ~std::uint64_t{0};
    std::size_t count = 0;
    double tq[kEntries] = {};
    std::vector<double> x;  // kEntries × n, allocated in initialize
  } subStepMemo;
  std::uint64_t stepGeneration = 0;
  std::vector<double> wIterate;   // Newton: error weights at the current iterate
  std::vector<double> pcDiff;     // x_{n+1} − predictor (OdeSdStepInfo::predictorDistance)
  double pcDistance = 0;          // its weighted RMS norm on the attempt just solved
  std::vector<double> jv, jjv;  // J, J_J values (model CSC order) of the current attempt
  double normJ1 = 0;
  std::vector<double> powerV, powerU;  // spectralRadiusEstimate's iterates
  // ‖J‖₁ and the spectral radius estimate of the J values at `values`, valid while no J has been
  // evaluated since (jacobianWrites): a kept J (jacobianReuseSteps) is measured once, not at
  // every step. The estimate's 12 power iterations at every step were 14 % of the discrete
  // adjoint's instructions on Bachmann, which caps (h·‖J‖₁ > zMax) on most steps.
  std::uint64_t jacobianWrites = 0;  // evaluations of J into jv or jv1 (or zeroings) so far
  struct StiffnessOfJ {
    const double* values = nullptr;
    std::uint64_t writes = 0;
    double norm1 = 0, radius = -1;  // radius < 0: not estimated yet
  } stiffnessOfJ;
  symbolic::SparsePattern wPattern;       // union of I, J, J_J
  std::vector<int> wOfJ, wOfJJ, wOfDiag;  // model entry → position in wPattern
  detail::SparseLu lu;
  // The dense output's sub-steps (§2.7) factorise W(θh) here, so that lu keeps the steps' W.
  detail::SparseLu luDense;
  Cause cause;  // why the last attempt failed

  // ---- the Newton matrix kept across steps (OdeSdOptions::jacobianReuseSteps; no sens) ----
  bool jacKept = false;       // jv, jjv hold a (J, J_J) pair that later attempts may reuse
  int jacAge = 0;             // accepted steps since that pair was evaluated
  double luStepSize = 0;      // lu holds W(luStepSize) built from jv, jjv (0: it does not)
  double stepLuSize = 0;      // the last accepted step solved with lu = W(stepLuSize)
  bool staleAttempt = false;  // the current attempt's W came from a kept pair
  bool freshNext = false;     // a kept W failed: the next attempt evaluates J, J_J

  // ---- sensitivities (§3) ----
  bool sens = false;
  bool sensErrorControl = true;
  int ns = 0;
  std::vector<int> paramIdx;
  std::vector<double> S, Sd, Sdd;           // n × ns column-major at t
  std::vector<double> Sm1, Sdm1, Sddm1;     // at tPrev
  std::vector<double> S1, Sd1, Sdd1;        // the step's new values
  std::vector<double> FP, AP;               // f_p, a_p (selected columns, dense n × ns)
  // sensitivityDerivatives' row-major (ns contiguous per state) copies of X and of its two
  // results.
  std::vector<double> rowMajorX, rowMajorJ, rowMajorJJ;
  std::vector<double> fpv, apv;             // model CSC values (all parameters)
  std::vector<double> DS;                   // error estimate
  std::vector<double> jv1, jjv1;            // J, J_J at x_{n+1} (reusable by the next step)
  bool jacobiansAtFrontier = false;         // jv1/jjv1 hold J(x, t) of the current frontier
  bool luAtFrontier = false;                // lu holds W_s(hm1) at the frontier
  std::vector<double> sOut;

  // ---- hand-over ----
  std::unique_ptr<CvodesIntegrator> bdf;
  IntegratorStats own;     // odeSD's counters
  IntegratorStats bridged; // the bridges' CVODES counters, summed
  IntegratorStats merged;  // own + bridged + CVODES's after a hand-over
  mutable std::string lastFailure;  // the last fail()'s cause in a modeller's words
  int bridges = 0;         // bridges so far (see bridge())
  long patchedNewtonMatrices = 0;  // Newton matrices with non-finite J_J entries set to 0
  Cause firstPatch;                // where the first of them was
  long stepsAtBridge = -1; // own.steps when the last bridge ended
  // The failure after which CVODES took over (empty: none, or the stiff-tail hand-over of §4.3).
  std::string takeoverFailure, takeoverDetails;

  // =====================================================================================
  // helpers

  std::string stateName(int i) const {
    const auto& states = model->system().states;
    if (i >= 0 && i < static_cast<int>(states.size())) {
      return "'" + states[static_cast<size_t>(i)].id + "'";
    }
    return "#" + std::to_string(i);
  }

  std::string paramName(int k) const {
    const auto& params = model->system().params;
    if (k >= 0 && k < static_cast<int>(params.size())) {
      return "'" + params[static_cast<size_t>(k)].id + "'";
    }
    return "#" + std::to_string(k);
  }

  odesd::Names names() const {
    return {[this](int i) { return stateName(i); }, [this](int k) { return paramName(k); }};
  }

  // The cause in a modeller's words, and the technical detail behind it.
  std::string plain(const Cause& why) const {
    return odesd::plainCause(why, names(), sd.maxNewtonIterations);
  }
  std::string technical(const Cause& why) const {
    return odesd::technicalCause(why, names(), sd.maxNewtonIterations);
  }

  // Throws IntegrationFailure "odeSD failed at t = … (step size …): <what>" with `details`; what
  // (without the prefix) is kept for the fallback sentence of a bridge (lastFailure).
  [[noreturn]] void fail(const std::string& what, double tt, double hh,
                         const std::string& details = {}) const {
    lastFailure = what;
    throw IntegrationFailure(
        "odeSD failed at t = " + num(tt) + " (step size " + num(hh, 3) + "): " + what, tt, hh,
        details);
  }

  // w_i = rtol·max(|u_i|, |v_i|) + atol_i
  void weights(const double* u, const double* v, double* out) const {
    for (int i = 0; i < n; ++i) {
      out[i] = options.rtol * std::max(std::abs(u[i]), std::abs(v[i])) + atol[static_cast<size_t>(i)];
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

  double newtonTolerance() const {
    return sens ? sd.sensitivityNewtonTolerance : sd.newtonTolerance;
  }

  int firstNonFinite(const double* v, int len) const {
    for (int i = 0; i < len; ++i) {
      if (!std::isfinite(v[i])) return i;
    }
    return -1;
  }

  // f and ẍ at (tt, xx); false (cause recorded) when not finite — or when xx is not: a state
  // that overflowed (x = 1 − 1e308·t) can leave f finite, and the step must not go on from it.
  bool evalFA(double tt, const double* xx, double* ff, double* aa) {
    if (int i = firstNonFinite(xx, n); i >= 0) {
      cause = {Cause::Kind::NonFiniteState, i, -1, tt, xx[i]};
      return false;
    }
    model->rhsAndSecond(std::min(tt, evalTimeLimit), xx, p.data(), ff, aa);
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
  // `newtonMatrixOnly`: the pair only builds a Newton matrix W (the rule's solution and error
  // estimate use f and ẍ, W only sets how fast Newton converges), so non-finite J_J entries
  // where J is finite — J_J = (∂J/∂x)·f + J², and ∂J/∂x is infinite for x^n, n < 2, at x = 0,
  // often times f = 0 when such a state stays at 0 — are replaced by 0 and counted
  // (patchedNewtonMatrices), instead of failing every attempt at that point.
  bool evalJacobians(double tt, const double* xx, double* jvals, double* jjvals,
                     bool newtonMatrixOnly = false) {
    model->jacobianPair(std::min(tt, evalTimeLimit), xx, p.data(), jvals, jjvals);
    ++jacobianWrites;
    ++own.jacEvals;
    ++own.jacobianOfSecondEvals;
    const auto& jp = model->jacobianPattern();
    const auto& jjp = model->jacobianOfSecondPattern();
    if (int k = firstNonFinite(jvals, jp.nnz()); k >= 0) {
      cause = {Cause::Kind::NonFiniteJ, jp.rowIdx[static_cast<size_t>(k)], columnOf(jp, k), tt};
      return false;
    }
    if (int k = firstNonFinite(jjvals, jjp.nnz()); k >= 0) {
      const Cause why{Cause::Kind::NonFiniteJJ, jjp.rowIdx[static_cast<size_t>(k)],
                      columnOf(jjp, k), tt};
      if (!newtonMatrixOnly) {
        cause = why;
        return false;
      }
      if (patchedNewtonMatrices++ == 0) firstPatch = why;
      for (int i = k; i < jjp.nnz(); ++i) {
        if (!std::isfinite(jjvals[i])) jjvals[i] = 0;
      }
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

  // Estimate of the spectral radius ρ(J) for the z cap (§4.3): ‖J‖₁ bounds ρ from above but can
  // overstate it by orders of magnitude (Bachmann: 1.7e6 against 1e4), and the cap then hands a
  // tail to CVODES that odeSD could step. A few power iterations J·v/‖J·v‖₂ from a fixed start
  // vector with entries of both signs; the largest growth factor of the last iterations (a
  // complex dominant pair makes single factors oscillate), times a safety factor of 2 for the
  // slow convergence of close eigenvalues, and never above ‖J‖₁.
  double spectralRadiusEstimate(const double* jvals, double columnSumNorm) {
    const auto& jp = model->jacobianPattern();
    constexpr int kIterations = 12, kLast = 4;
    constexpr double kSafety = 2.0;
    std::vector<double>& v = powerV;
    std::vector<double>& u = powerU;
    v.resize(static_cast<size_t>(n));
    u.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 1.0 + 0.5 * std::sin(1.0 + i);
    double growth = 0;
    for (int it = 0; it < kIterations; ++it) {
      double vv = 0;
      for (double e : v) vv += e * e;
      if (!(vv > 0) || !std::isfinite(vv)) return columnSumNorm;
      const double scale = 1.0 / std::sqrt(vv);
      std::fill(u.begin(), u.end(), 0.0);
      for (int j = 0; j < n; ++j) {
        const double vj = v[static_cast<size_t>(j)] * scale;
        for (int k = jp.colPtr[static_cast<size_t>(j)]; k < jp.colPtr[static_cast<size_t>(j) + 1];
             ++k) {
          u[static_cast<size_t>(jp.rowIdx[static_cast<size_t>(k)])] += jvals[k] * vj;
        }
      }
      double uu = 0;
      for (double e : u) uu += e * e;
      if (it >= kIterations - kLast) growth = std::max(growth, std::sqrt(uu));
      std::swap(u, v);
    }
    if (!std::isfinite(growth)) return columnSumNorm;
    return std::min(columnSumNorm, kSafety * growth);
  }

  // The stiffness measure the z cap compares with zMax / h.
  double capStiffness(const double* jvals, double columnSumNorm) {
    if (sd.stiffnessEstimate != OdeSdOptions::StiffnessEstimate::SpectralRadius)
      return columnSumNorm;
    StiffnessOfJ& cached = stiffnessOfJ;
    // Keyed like jacobianNorm1 (whose ‖J‖₁ of jvals the caller passes): an estimate is never
    // kept under another J's key.
    if (cached.values != jvals || cached.writes != jacobianWrites)
      cached = {jvals, jacobianWrites, columnSumNorm, -1};
    if (cached.radius < 0) cached.radius = spectralRadiusEstimate(jvals, columnSumNorm);
    return cached.radius;
  }
  // ‖J‖₁ of the J values at jvals, once per evaluation of J (stiffnessOfJ).
  double jacobianNorm1(const double* jvals) {
    StiffnessOfJ& cached = stiffnessOfJ;
    if (cached.values != jvals || cached.writes != jacobianWrites)
      cached = {jvals, jacobianWrites, norm1(jvals), -1};
    return cached.norm1;
  }

  // W = I − (hs/2) J + (hs²/12) J_J into the values of `into` (lu unless given), factorised.
  bool factorW(double hs, const double* jvals, const double* jjvals) {
    return factorW(hs, jvals, jjvals, lu);
  }
  bool factorW(double hs, const double* jvals, const double* jjvals, detail::SparseLu& into) {
    double* v = into.values();
    std::fill(v, v + wPattern.nnz(), 0.0);
    for (int i = 0; i < n; ++i) v[wOfDiag[static_cast<size_t>(i)]] = 1.0;
    const double c1 = -hs / 2, c2 = hs * hs / 12;
    for (size_t k = 0; k < wOfJ.size(); ++k) v[wOfJ[k]] += c1 * jvals[k];
    for (size_t k = 0; k < wOfJJ.size(); ++k) v[wOfJJ[k]] += c2 * jjvals[k];
    ++own.luFactorizations;
    if (!into.factorize()) {
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
        if (kj < ej && jp.rowIdx[static_cast<size_t>(kj)] == row)
          wOfJ[static_cast<size_t>(kj++)] = pos;
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
  static double rightOf(double tt);

  void start(double tout);

  // =====================================================================================
  // predictor (§2.3)

  void predict(double hs);

  // =====================================================================================
  // Newton on G(y) = c + (hs/2) f(y) − (hs²/12) a(y) − y with the factorised W (§2.2)

  // With the factorised W in `wlu`. Every attempt starts from rate 1, also with a kept W: unlike
  // CVODES's, odeSD's error estimate (D = g5 − g4 at the final iterate) does not see Newton's
  // remaining error, so a rate carried over from the last step (CVODES's crate) would let an
  // under-converged x_{n+1} through (measured: Perelson's error 5e-5 → 1.6e-4, repressilator at
  // rtol 1e-8 over its reference bound).
  // haveFA: fy, ay already hold f and ẍ at yy (the first iteration skips that evaluation).
  // iterateTolerance > 0 (OdeSdOptions::iterateTolerance): the iterate whose next correction is
  // within it is returned as it is, with its f and ẍ (evaluatedAtSolution).
  NewtonResult newton(double tNew, double hs, double* yy, double kappa, int maxIter,
                      detail::SparseLu& wlu, bool haveFA = false, double iterateTolerance = 0);

  // =====================================================================================
  // one accepted step (with as many attempts as it takes), or a hand-over. Phases, each a
  // function below: step size (stepSize), predictor (predict), Newton matrix and the z cap
  // (setUpNewton), nonlinear solve (solveStep), error estimate (errorEstimate; sensitivities in
  // sensitivityStep), acceptance and step-size control (accept); the retry loop is here.

  enum class StepResult { Accepted, Handover };

  StepResult step();

  // The attempt's step size: the controller's proposal (or the fixed step) within maxStepSize,
  // landing exactly on the stop time when within 0.01 % of a step of it (§2.5).
  double stepSize(bool& landing) const;

  enum class Setup { Ready, Failed, Handover };

  // Predictor, (J, J_J) at the predictor (or the reusable ones of the sensitivity step at the
  // frontier), the z cap of §4.3 (which may shorten hs or ask for the hand-over) and the LU of
  // W = I − (hs/2) J + (hs²/12) J_J. Sets the Newton weights.
  Setup setUpNewton(double& hs, bool& landing, bool reuseJac);

  // Simplified Newton from the predictor for x_{n+1} = y, then f₁ = f(y), a₁ = ẍ(y) (§2.2).
  NewtonResult solveStep(double tStep, double hs);

  // ε = W⁻¹D into dvec and ‖ε‖ (§2.4): D = g5 − g4 with the variable-ratio coefficients, or on
  // the first step D = x₁ − (x₀ + h f₀ + h² a₀/2) with exponent q = 3 (§2.6).
  double errorEstimate(double hs, int& q);

  // Accepts the step: shifts the history, then the next step size (§2.5):
  // σ = (2 err)^(−1/5) (first step 0.9 err^(−1/3)) in [0.2, 5] (wider at the start, below), no
  // growth after a failure or a slowly converging Newton iteration.
  void accept(double tStep, double hs, bool landing, int q, double err, double errStates,
              const NewtonResult& nr);

  // =====================================================================================
  // sensitivities (§3)

  void allocateSensitivities();

  // Selected columns of f_p and a_p at (tt, xx) as dense n × ns blocks; `jvals` is J at the same
  // point (evalJacobians), from which a_p = J·f_p + A_mix is formed (compiled_model.h).
  // False (cause recorded) when a selected entry is not finite.
  bool evalParamDerivatives(double tt, const double* xx, const double* jvals);

  // Scatters the selected columns of f_p or a_p into the dense n × ns block; returns the (row,
  // parameter) of a non-finite entry, or (-1, -1).
  std::pair<int, int> scatterColumns(const symbolic::SparsePattern& pat, const double* vals,
                                     double* out) const;

  // outJ = J·X + FP and outJJ = J_J·X + AP for the dense n × ns X (column-major, as S), with
  // the Jacobians' values jvals, jjvals.
  void sensitivityDerivatives(const double* jvals, const double* jjvals, const double* X,
                              double* outJ, double* outJJ);

  void startSensitivities();

  // After x_{n+1} = y converged: S1, Ṡ1, S̈1 and the sensitivities' error norm.
  double sensitivityStep(double tNew, double hs, int q);

  void acceptSensitivities();

  // =====================================================================================
  // dense output (§2.7)

  // x (and S unless outS is null) at tq ∈ [tPrev, t] into out (outS).
  void dense(double tq, double* out, double* outS);

  // Quintic Hermite on the last step at θ.
  void hermite(double th, double* out) const;

  // The rule applied over θ·h from the step start (stiff steps, §2.7), solved by simplified
  // Newton with the step's Jacobians from the quintic Hermite value (usually one iteration: it
  // is accurate in the non-stiff components), then from linear interpolation between the step
  // points (robust when stiff components pollute the Hermite), then with fresh Jacobians there.
  // False when none converges.
  bool subStep(double th, double* out, double* outS);

  // =====================================================================================
  // bridges: CVODES BDF over a stretch odeSD cannot step through, then odeSD again

  // Thrown by the bridge's step callback to end the bridge at a CVODES step end t.
  struct BridgeEnd {
    double t;
  };

  // True when odeSD can start from (tt, xx): f, ẍ, J (and with sensitivities J_J, f_p, a_p)
  // are finite there. Uses the Newton work arrays (a restart re-evaluates everything).
  bool derivativesFiniteAt(double tt, const double* xx);

  // Restarts odeSD at (tt, xx, ss) as at t0: no history, a fresh initial step (§2.6).
  void restartAt(double tt, const std::vector<double>& xx, const std::vector<double>& ss);

  enum class Bridged { Resumed, HandedOver };

  // odeSD failed from the frontier (t, x, S) with `failure` (the step, or the start's
  // derivatives). Second-derivative methods need ẍ = J·f and J_J = ∂(J·f)/∂x, which can be
  // infinite where f and J are not (x^n, 1 < n < 2, at x = 0) — a property of the method, not
  // of the model — and the rule can fail where BDF does not (§4). So CVODES BDF (which needs f
  // and J only) integrates from the frontier, never past tout, until odeSD's derivatives are
  // finite again at one of its step ends after at least sd.bridgeMinSteps steps; odeSD restarts
  // there. Each bridge is one sentence in IntegratorStats::fallbacks. When the bridge reaches
  // tout with the derivatives still not finite, or after sd.maxBridges bridges, CVODES keeps the
  // rest of the integration (the hand-over of §4.3). When CVODES fails too, the failure names
  // both attempts.
  Bridged bridge(double tout, const IntegrationFailure& failure, const ProgressMonitor& monitor);

  // =====================================================================================
  // hand-over to CVODES BDF (§4.3)

  void handOver();

  static void add(IntegratorStats& into, const IntegratorStats& b);

  // CVODES after a hand-over; its failure after a failure-driven takeover says why it took over.
  void advanceTakenOver(double tout, std::vector<double>& xResult, const ProgressMonitor& monitor);

  void mergeStats();
};

}  // namespace sensode::integrators
