// SPDX-License-Identifier: MIT
// The state behind CvodesIntegrator and CVODES's C callbacks into it (right-hand side, Jacobian,
// sensitivity right-hand sides, the augmented system's block solver and weights), with the
// translation of CVODES failures into a modeller's words (the sentences:
// cvodes_failure_text.h; handles, options, failure texts and statistics it shares with IDAS:
// sundials_solver.h, sundials_linear_system.h). Internal: included by cvodes_integrator.cpp only,
// which holds the Integrator interface on top of it.
#pragma once

#include "core/integrators/cvodes_integrator.h"

#include <cvodes/cvodes.h>
#include <cvodes/cvodes_ls.h>
#include <nvector/nvector_serial.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/integrators/cvodes_augmented.h"
#include "core/integrators/cvodes_failure_text.h"
#include "core/integrators/sparse_lu.h"
#include "core/integrators/sundials_linear_system.h"
#include "core/integrators/sundials_solver.h"

namespace sensode::integrators {

using detail::block;
using detail::BlockLengthScope;
using detail::installAugmentedOps;
using detail::newBlockMatrix;

namespace cvodes_detail {

using Api = sundials::CvodeApi;

inline std::string num(double v, int precision = 6) { return preciseNumber(v, precision); }

// Iterates with a non-finite state one step may hand the callbacks before the step is given up:
// CVODES gives up after 10 recoverable failures in a row, each seeing one or two such iterates.
constexpr long kMaxNonFiniteIteratesPerStep = 50;

}  // namespace cvodes_detail
using namespace cvodes_detail;

struct CvodesIntegrator::Impl {
  std::shared_ptr<const symbolic::CompiledModel> model;
  IntegratorOptions options;
  std::vector<double> p;
  int nx = 0;
  double t = 0;                // time of the last output (or t0)
  std::vector<double> xLast;   // x(t)
  bool sparse = false;
  bool initialized = false;
  IntegratorStats stats;

  // Jacobian: values in the CompiledModel's CSC order, scattered into the model's pattern plus
  // the diagonal for KLU and the augmented mode (sundials_linear_system.h).
  std::vector<double> jacValues;
  sundials::MergedPattern pattern;

  // Forward sensitivities (enableSensitivities): CVodeSensInit with the analytic right-hand
  // side Ṡ = J·S + ∂f/∂p for the selected parameters, all columns per call.
  bool advanced = false;       // advanceTo() has integrated (sensitivities must come first)
  bool sensEnabled = false;
  int sensMethod = CV_STAGGERED;  // from IntegratorOptions::sensitivityCorrector
  std::vector<int> sensParams;    // model parameter index of each sensitivity column
  std::vector<double> sLast;      // S at t, column-major nx × ns
  std::vector<double> pbar;       // |p_k| (1 when p_k = 0): scales the sensitivity tolerances
  // J and ∂f/∂p at (sensT, sensX): CVODES calls the sensitivity right-hand side repeatedly at
  // the same state (every staggered corrector iteration), so the values are cached.
  std::vector<double> sensJac, sensFp, sensX;
  double sensT = 0;
  bool sensCacheValid = false;

  // Augmented mode (SensitivityCorrector::Augmented): plain CVODE on y = [x; vec(S)] (y and
  // yOut have length nx·(1 + ns)), Newton matrix = the BlockMatrix above, factorised by blockLu
  // (dense LU or KLU by the same rule as the states' solver) and applied to all 1 + ns blocks
  // in one multi-right-hand-side solve.
  bool augmented = false;
  long augmentedRhsEvals = 0;
  symbolic::SparsePattern blockPattern;  // the merged pattern, for blockLu
  detail::SparseLu blockLu;              // outlives the linear solver that uses it
  std::vector<double> atol;              // per state (absolute_tolerances.h)
  std::vector<double> augmentedAtol;     // per component (+∞: not in the error test)

  StepCallback stepCallback;  // setStepCallback
  // CVodeGetDky on the last step, for the step callback.
  struct Dense final : StepDenseOutput {
    Impl* impl = nullptr;
    void state(double tq, double* out) override {
      const int flag = CVodeGetDky(impl->mem.get(), tq, 0, impl->yOut.get());
      if (flag < 0) impl->throwCvodeFailure(flag);
      const double* v = N_VGetArrayPointer(impl->yOut.get());
      std::copy(v, v + impl->nx, out);
    }
    bool sensitivities(double tq, double* s) override {
      if (!impl->sensEnabled || impl->sensParams.empty()) return false;
      const auto n = static_cast<std::size_t>(impl->nx);
      if (impl->augmented) {  // y = [x; vec(S)]
        const int flag = CVodeGetDky(impl->mem.get(), tq, 0, impl->yOut.get());
        if (flag < 0) impl->throwCvodeFailure(flag);
        const double* v = N_VGetArrayPointer(impl->yOut.get());
        std::copy(v + n, v + N_VGetLength(impl->yOut.get()), s);
        return true;
      }
      const int flag = CVodeGetSensDky(impl->mem.get(), tq, 0, impl->ySOut.data());
      if (flag < 0) impl->throwCvodeFailure(flag);
      sundials::copySensitivities(impl->ySOut, impl->nx, s);
      return true;
    }
  };

  // The step guard (guardInputs): the caller's monitor during advanceTo() (Cancel inside a
  // step), and what the callbacks saw in the current CVode() call.
  const ProgressMonitor* monitor = nullptr;
  long callsThisStep = 0;
  long nonFiniteIteratesThisStep = 0;

  CallbackRecord record;     // the current CVode() call's first callback problem
  CallbackRecord recovered;  // the latest problem CVODES recovered from in this advanceTo()
  std::string cvodeMessage;  // last error message CVODES reported (never printed)

  // Declaration order = construction order; destroyed in reverse (see sundials_handles.h).
  sundials::ContextPtr ctx;
  sundials::VectorPtr atolVector;  // `atol` for CVodeSVtolerances (CVODES keeps its own copy)
  sundials::VectorPtr y, yOut;
  sundials::VectorArray yS, ySOut;  // sensitivity vectors (ns each)
  sundials::MatrixPtr A;
  sundials::LinearSolverPtr ls;
  sundials::CvodeMemPtr mem;

  void reset() {
    mem.reset();
    ls.reset();
    A.reset();
    yS.clear();
    ySOut.clear();
    yOut.reset();
    y.reset();
    atolVector.reset();
    ctx.reset();
    stats = {};
    record = {};
    cvodeMessage.clear();
    initialized = false;
    advanced = false;
    sensEnabled = false;
    sensParams.clear();
    sLast.clear();
    sensCacheValid = false;
    augmented = false;
    augmentedRhsEvals = 0;
  }

  // CVODE BDF memory starting from (t, y) with the options' step settings; the caller sets the
  // tolerances and the linear solver.
  void createCvode(CVRhsFn f) {
    mem.reset(sundials::checkCreated(CVodeCreate(CV_BDF, ctx.get()), "CVodeCreate"));
    void* m = mem.get();
    sundials::installMessageSink<Api>(m, &cvodeMessage);
    sundials::check<Api>(CVodeInit(m, f, t, y.get()), "CVodeInit");
    sundials::call<Api>(Api::setUserData, m, this);
    sundials::setStepLimits<Api>(m, options);
  }

  void refreshStats() {
    if (!mem) return;
    void* m = mem.get();
    const bool forwardModule = !augmented && sensEnabled && !sensParams.empty();
    sundials::collectStats<Api>(m, stats, forwardModule);
    long v = 0;
    // f evaluations for difference-quotient Jacobians (none: J is analytic)
    if (CVodeGetNumLinRhsEvals(m, &v) == CV_SUCCESS) stats.rhsEvals += v;
    if (augmented) {
      // One augmented right-hand side evaluates f and Ṡ together (rhsEvals counts the same
      // calls); S shares the states' error test, so there is no separate failure count.
      stats.sensitivityRhsEvals = augmentedRhsEvals;
    } else if (forwardModule) {
      // f evaluations CVODES makes for the sensitivities (difference quotients; none here).
      if (CVodeGetNumRhsEvalsSens(m, &v) == CV_SUCCESS) stats.rhsEvals += v;
      // Staggered: the sensitivity corrector's own Newton matrix set-ups and iterations.
      if (CVodeGetSensNumLinSolvSetups(m, &v) == CV_SUCCESS) stats.luFactorizations += v;
      if (CVodeGetSensNumNonlinSolvIters(m, &v) == CV_SUCCESS) stats.newtonIterations += v;
      if (CVodeGetSensNumNonlinSolvConvFails(m, &v) == CV_SUCCESS) stats.newtonFailures += v;
    }
  }

  std::string paramName(int k) const { return parameterLabel(*model, k); }
  std::string stateName(int i) const { return stateLabel(*model, i); }

  // "; last recovered error: ..." when CVODES recovered from callback problems in this call.
  std::string recoveredNote() const {
    if (recovered.kind == CallbackRecord::Kind::None) return {};
    return "; last recovered error: " + plain(recovered, *model);
  }
  std::string recoveredDetails() const {
    if (recovered.kind == CallbackRecord::Kind::None) return {};
    return "last recovered error: " + describe(recovered, *model);
  }

  // "CVODES failed at t = … (step size …): <cause in plain words>" (sundials::throwFailure).
  [[noreturn]] void throwFailure(const std::string& cause, const std::string& details = {}) const {
    sundials::throwFailure<Api>(mem.get(), t, cause, details);
  }

  // After CVode() accepted a step from tFrom to tn: the time, the step size and every state
  // must be finite (and the step longer than 0), else the run stops here with the state and the
  // time named. CVODES itself never looks: its initial step size underflows to 0 when a rate is
  // near the largest double (|f|/|x| overflows in cvHin), after which the next step's
  // coefficients are 0/0 and the step size NaN.
  void checkAcceptedStep(double tFrom, double tn) const {
    double h = 0;
    CVodeGetLastStep(mem.get(), &h);
    const double* state = N_VGetArrayPointer(y.get());
    for (int i = 0; i < nx; ++i) {
      if (!std::isfinite(state[i])) {
        throwFailure("state " + stateName(i) + " became non-finite (" + num(state[i]) +
                     ") at t = " + num(tn) + " (in a step from t = " + num(tFrom) + ")");
      }
    }
    if (!std::isfinite(tn) || !std::isfinite(h) || h == 0) {
      throwFailure("the step size became " + num(h) + " at t = " + num(tFrom) + ": " +
                   fastestRate(tFrom));
    }
  }

  // "the rate of change of 'B' is -1e+308 where 'B' = 1": the state whose rate is largest
  // against its own size, for a step size that collapsed.
  std::string fastestRate(double tt) const {
    const double* state = N_VGetArrayPointer(y.get());
    std::vector<double> f(static_cast<std::size_t>(nx));
    model->rhs(tt, state, p.data(), f.data());
    int worst = -1;
    double ratio = -1;
    for (int i = 0; i < nx; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double r = std::abs(f[k]) / (std::abs(state[i]) + atol[k]);
      if (!(r <= ratio)) worst = i, ratio = r;
    }
    if (worst < 0) return "no state changes";
    return "the rate of change of " + stateName(worst) + " is " +
           num(f[static_cast<std::size_t>(worst)]) + " where " + stateName(worst) + " = " +
           num(state[worst]) + ", too fast for any step a double can resolve";
  }

  [[noreturn]] void throwCvodeFailure(int flag) const {
    if (record.kind == CallbackRecord::Kind::Cancelled) throw Cancelled(record.t);
    const std::string details = sundials::flagDetails<Api>(flag, cvodeMessage);
    if (record.kind != CallbackRecord::Kind::None) {
      throwFailure(plain(record, *model), describe(record, *model) + " (" + details + ")");
    }
    throwFailure(sundials::describeCvodeFlag(flag), details);
  }

  // ---- C trampolines (sundials::guarded): never throw; 0 ok, > 0 recoverable, < 0 fatal ----

  static int rhs(sunrealtype tt, N_Vector yy, N_Vector ydot, void* userData) {
    auto* self = static_cast<Impl*>(userData);
    return sundials::guarded(self, tt, [&] {
      const double* x = N_VGetArrayPointer(yy);
      if (const int problem = self->guardInputs(tt, x); problem != 0) return problem;
      return self->stateRhs(tt, x, N_VGetArrayPointer(ydot));
    });
  }

  static int jac(sunrealtype tt, N_Vector yy, N_Vector /*fy*/, SUNMatrix J, void* userData,
                 N_Vector /*tmp1*/, N_Vector /*tmp2*/, N_Vector /*tmp3*/) {
    auto* self = static_cast<Impl*>(userData);
    return sundials::guarded(self, tt, [&] {
      const double* x = N_VGetArrayPointer(yy);
      if (const int problem = self->guardInputs(tt, x); problem != 0) return problem;
      if (self->augmented) {
        // CVODE evaluates f at the predicted state just before the set-up, so J usually comes
        // from the augmented right-hand side's cache.
        const int problem = self->evaluateSensitivityJacobians(tt, x);
        if (problem != 0) return problem;
        self->fillBlock(J);
        return 0;
      }
      self->model->jacobian(tt, x, self->p.data(), self->jacValues.data());
      const auto& jv = self->jacValues;
      for (std::size_t k = 0; k < jv.size(); ++k) {
        if (!std::isfinite(jv[k])) {
          self->recordJacobianEntry(tt, k);
          return 1;
        }
      }
      sundials::scatterJacobian(J, self->sparse, self->pattern, self->model->jacobianPattern(),
                                jv, 1.0);
      return 0;
    });
  }

  // Ṡ_j = J·S_j + ∂f/∂p_j for every sensitivity column j (CVSensRhsFn: all columns per call).
  static int sensRhs(int ns, sunrealtype tt, N_Vector yy, N_Vector /*ydot*/, N_Vector* ySv,
                     N_Vector* ySdot, void* userData, N_Vector /*tmp1*/, N_Vector /*tmp2*/) {
    auto* self = static_cast<Impl*>(userData);
    return sundials::guarded(self, tt, [&] {
      const double* x = N_VGetArrayPointer(yy);
      if (const int guard = self->guardInputs(tt, x); guard != 0) return guard;
      const int problem = self->evaluateSensitivityJacobians(tt, x);
      if (problem != 0) return problem;
      for (int j = 0; j < ns; ++j) {
        const int columnProblem = self->sensitivityColumn(
            tt, static_cast<std::size_t>(j), N_VGetArrayPointer(ySv[j]),
            N_VGetArrayPointer(ySdot[j]));
        if (columnProblem != 0) return columnProblem;
      }
      return 0;
    });
  }

  // Augmented mode: d/dt [x; S_1; …; S_ns] = [f; J·S_1 + ∂f/∂p_1; …] with the same evaluators
  // as rhs() and sensRhs().
  static int augmentedRhs(sunrealtype tt, N_Vector yy, N_Vector ydot, void* userData) {
    auto* self = static_cast<Impl*>(userData);
    return sundials::guarded(self, tt, [&] {
      ++self->augmentedRhsEvals;
      const double* y = N_VGetArrayPointer(yy);
      if (const int guard = self->guardInputs(tt, y); guard != 0) return guard;
      double* out = N_VGetArrayPointer(ydot);
      const int problem = self->stateRhs(tt, y, out);
      if (problem != 0) return problem;
      const int jacProblem = self->evaluateSensitivityJacobians(tt, y);
      if (jacProblem != 0) return jacProblem;
      const auto n = static_cast<std::size_t>(self->nx);
      for (std::size_t j = 0; j < self->sensParams.size(); ++j) {
        const int columnProblem =
            self->sensitivityColumn(tt, j, y + n * (j + 1), out + n * (j + 1));
        if (columnProblem != 0) return columnProblem;
      }
      return 0;
    });
  }

  // The augmented mode's linear solver (SUNLINEARSOLVER_DIRECT, so CVODE drives it like its
  // dense/KLU solvers): set-up factorises the n×n block M = I − γJ once, solve applies M⁻¹ to
  // the 1 + ns blocks of the right-hand side (column-major nx × (1 + ns)) in one call.
  static SUNLinearSolver_Type blockSolverType(SUNLinearSolver /*S*/) {
    return SUNLINEARSOLVER_DIRECT;
  }
  static SUNLinearSolver_ID blockSolverId(SUNLinearSolver /*S*/) { return SUNLINEARSOLVER_CUSTOM; }
  static int blockSolverSetup(SUNLinearSolver S, SUNMatrix A) {
    auto* self = static_cast<Impl*>(S->content);
    try {
      const std::vector<double>& v = block(A).values;
      std::copy(v.begin(), v.end(), self->blockLu.values());
      return self->blockLu.factorize() ? SUNLS_SUCCESS : SUNLS_LUFACT_FAIL;
    } catch (...) {
      return SUNLS_PACKAGE_FAIL_UNREC;
    }
  }
  static int blockSolverSolve(SUNLinearSolver S, SUNMatrix /*A*/, N_Vector x, N_Vector b,
                              sunrealtype /*tol*/) {
    auto* self = static_cast<Impl*>(S->content);
    try {
      const double* in = N_VGetArrayPointer(b);
      double* out = N_VGetArrayPointer(x);
      std::copy(in, in + N_VGetLength(b), out);
      self->blockLu.solve(out, 1 + static_cast<int>(self->sensParams.size()));
      return SUNLS_SUCCESS;
    } catch (...) {
      return SUNLS_PACKAGE_FAIL_UNREC;
    }
  }
  static int blockSolverFree(SUNLinearSolver S) {
    S->content = nullptr;  // the Impl, not owned
    SUNLinSolFreeEmpty(S);
    return SUNLS_SUCCESS;
  }

  // Before a callback evaluates the model at (tt, x): 0 to go on; 1 (recoverable: CVODES cuts
  // the step) for a non-finite state in the iterate, as for a non-finite f; -1 (fatal, recorded)
  // when the token is set, when tt is not a number (the step size is NaN: no smaller step can
  // follow), or when this CVode() call exceeds the bounds above — so that no retry loop inside
  // CVODES runs without end, and Cancel stops even a step that never ends.
  int guardInputs(double tt, const double* x) {
    if (monitor != nullptr && monitor->token.cancelled()) return recordFatal(CallbackRecord::Kind::Cancelled, tt);
    if (++callsThisStep > kMaxCallbacksPerStep) return recordFatal(CallbackRecord::Kind::NoProgress, tt);
    if (!std::isfinite(tt)) return recordFatal(CallbackRecord::Kind::NonFiniteTime, tt);
    for (int i = 0; i < nx; ++i) {
      if (std::isfinite(x[i])) continue;
      if (record.kind == CallbackRecord::Kind::None) {
        record.kind = CallbackRecord::Kind::NonFiniteState;
        record.row = i;
        record.value = x[i];
        record.t = tt;
      }
      return ++nonFiniteIteratesThisStep > kMaxNonFiniteIteratesPerStep ? -1 : 1;
    }
    return 0;
  }

  // A fatal guard problem outranks a recoverable one recorded before; an exception outranks it.
  int recordFatal(CallbackRecord::Kind kind, double tt) noexcept {
    if (record.kind == CallbackRecord::Kind::Exception) return -1;
    if (record.kind != CallbackRecord::Kind::NonFiniteState || kind != CallbackRecord::Kind::NoProgress) {
      record = {};
      record.kind = kind;
      record.t = tt;
    }
    return -1;
  }

  // f(t, x) into f; 1 (recorded) when an entry is not finite.
  int stateRhs(double tt, const double* x, double* f) {
    model->rhs(tt, x, p.data(), f);
    for (int i = 0; i < nx; ++i) {
      if (!std::isfinite(f[i])) {
        if (record.kind == CallbackRecord::Kind::None) {
          record.kind = CallbackRecord::Kind::NonFiniteRhs;
          record.row = i;
          record.t = tt;
        }
        return 1;
      }
    }
    return 0;
  }

  // Ṡ_j = J·S_j + ∂f/∂p_j for sensitivity column j from s = S_j into out, with J and ∂f/∂p
  // from the last evaluateSensitivityJacobians(); 1 (recorded) when an entry is not finite.
  int sensitivityColumn(double tt, std::size_t j, const double* s, double* out) {
    const symbolic::SparsePattern& jp = model->jacobianPattern();
    const symbolic::SparsePattern& fpp = model->paramJacobianPattern();
    const auto n = static_cast<std::size_t>(nx);
    std::fill(out, out + n, 0.0);
    for (std::size_t c = 0; c < n; ++c) {
      const double sc = s[c];
      if (sc == 0) continue;
      for (int k = jp.colPtr[c]; k < jp.colPtr[c + 1]; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        out[jp.rowIdx[kk]] += sensJac[kk] * sc;
      }
    }
    const auto col = static_cast<std::size_t>(sensParams[j]);
    for (int k = fpp.colPtr[col]; k < fpp.colPtr[col + 1]; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      out[fpp.rowIdx[kk]] += sensFp[kk];
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(out[i])) {
        if (record.kind == CallbackRecord::Kind::None) {
          record.kind = CallbackRecord::Kind::NonFiniteSensitivityRhs;
          record.row = static_cast<int>(i);
          record.col = static_cast<int>(col);
          record.t = tt;
        }
        return 1;
      }
    }
    return 0;
  }

  // Augmented mode's error weights (CVEwtFn): 1 / (rtol·|y_i| + atol_i).
  static int augmentedWeights(N_Vector yy, N_Vector ewt, void* userData) {
    auto* self = static_cast<Impl*>(userData);
    const double* y = N_VGetArrayPointer(yy);
    double* w = N_VGetArrayPointer(ewt);
    const std::size_t len = self->augmentedAtol.size();
    const double rtol = self->options.rtol;
    for (std::size_t i = 0; i < len; ++i) {
      w[i] = 1.0 / (rtol * std::abs(y[i]) + self->augmentedAtol[i]);
    }
    return 0;
  }

  // J and ∂f/∂p at (t, x) into sensJac / sensFp unless cached; 0, or 1 (recorded) when a value
  // the sensitivities use is not finite.
  int evaluateSensitivityJacobians(double tt, const double* x) {
    const auto n = static_cast<std::size_t>(nx);
    if (sensCacheValid && tt == sensT && std::equal(x, x + n, sensX.begin())) return 0;
    sensCacheValid = false;
    model->jacobian(tt, x, p.data(), sensJac.data());
    model->paramJacobian(tt, x, p.data(), sensFp.data());
    for (std::size_t k = 0; k < sensJac.size(); ++k) {
      if (!std::isfinite(sensJac[k])) {
        recordJacobianEntry(tt, k);
        return 1;
      }
    }
    const symbolic::SparsePattern& fpp = model->paramJacobianPattern();
    for (const int col : sensParams) {
      const auto c = static_cast<std::size_t>(col);
      for (int k = fpp.colPtr[c]; k < fpp.colPtr[c + 1]; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        if (!std::isfinite(sensFp[kk])) {
          if (record.kind == CallbackRecord::Kind::None) {
            record.kind = CallbackRecord::Kind::NonFiniteParamJacobian;
            record.row = fpp.rowIdx[kk];
            record.col = col;
            record.t = tt;
          }
          return 1;
        }
      }
    }
    std::copy(x, x + n, sensX.begin());
    sensT = tt;
    sensCacheValid = true;
    return 0;
  }

  // An exception outranks a non-finite value recorded earlier in the same step; the first
  // exception wins.
  void recordException(double tt, const char* what) noexcept {
    if (record.kind == CallbackRecord::Kind::Exception) return;
    try {
      record = {};
      record.kind = CallbackRecord::Kind::Exception;
      record.t = tt;
      record.what = what;
    } catch (...) {
    }
  }

  void recordJacobianEntry(double tt, std::size_t k) noexcept {
    if (record.kind != CallbackRecord::Kind::None) return;
    const symbolic::SparsePattern& jp = model->jacobianPattern();
    int col = 0;
    while (col < nx && static_cast<std::size_t>(jp.colPtr[static_cast<std::size_t>(col) + 1]) <= k) {
      ++col;
    }
    record.kind = CallbackRecord::Kind::NonFiniteJacobian;
    record.row = jp.rowIdx[k];
    record.col = col;
    record.t = tt;
  }

  // Augmented mode (enableSensitivities): replaces the states-only CVODE memory by one on
  // y = [x; vec(S)] from (t, xLast, s0). Tolerances: rtol, and per component atol for x and
  // atol/p̄_k for S_k (what CVodeSensEEtolerances gives the forward module), so the error test
  // sees S as with CVodeSetSensErrCon(SUNTRUE); without error control S gets weight 0
  // (stateOnlyWeights).
  void enableAugmented(const std::vector<double>& s0, bool errorControl) {
    const auto n = static_cast<std::size_t>(nx);
    const std::size_t ns = sensParams.size();
    const auto len = static_cast<sunindextype>(n * (1 + ns));
    mem.reset();
    ls.reset();
    A.reset();
    augmented = true;
    y = sundials::newVector(len, ctx.get());
    yOut = sundials::newVector(len, ctx.get());
    installAugmentedOps(y.get());
    double* y0 = N_VGetArrayPointer(y.get());
    std::copy(xLast.begin(), xLast.end(), y0);
    std::copy(s0.begin(), s0.end(), y0 + n);

    createCvode(&Impl::augmentedRhs);
    void* m = mem.get();
    augmentedAtol.assign(n * (1 + ns), 0.0);
    std::copy(atol.begin(), atol.end(), augmentedAtol.begin());
    for (std::size_t j = 0; j < ns; ++j) {
      for (std::size_t i = 0; i < n; ++i)
        augmentedAtol[n * (j + 1) + i] =
            errorControl ? atol[i] / pbar[j] : std::numeric_limits<double>::infinity();
    }
    sundials::check<Api>(CVodeWFtolerances(m, &Impl::augmentedWeights), "CVodeWFtolerances");

    jacValues.assign(static_cast<std::size_t>(model->jacobianPattern().nnz()), 0.0);
    pattern.build(model->jacobianPattern(), nx);
    blockPattern.rows = blockPattern.cols = nx;
    blockPattern.colPtr.assign(pattern.colPtr.begin(), pattern.colPtr.end());
    blockPattern.rowIdx.assign(pattern.rowIdx.begin(), pattern.rowIdx.end());
    blockLu.analyze(blockPattern,
                    sparse ? detail::SparseLu::Backend::Klu : detail::SparseLu::Backend::Dense);
    blockLu.reserveRightHandSides(1 + static_cast<int>(ns));
    A.reset(sundials::checkCreated(newBlockMatrix(ctx.get(), pattern.rowIdx.size(), &pattern.diagonal),
                                   "SUNMatNewEmpty"));
    SUNLinearSolver s = sundials::checkCreated(SUNLinSolNewEmpty(ctx.get()), "SUNLinSolNewEmpty");
    s->content = this;
    s->ops->gettype = &Impl::blockSolverType;
    s->ops->getid = &Impl::blockSolverId;
    s->ops->setup = &Impl::blockSolverSetup;
    s->ops->solve = &Impl::blockSolverSolve;
    s->ops->free = &Impl::blockSolverFree;
    ls.reset(s);
    sundials::attachLinearSolver<Api>(m, ls.get(), A.get(), &Impl::jac);
  }

  void fillBlock(SUNMatrix J) {
    std::vector<double>& v = block(J).values;
    std::fill(v.begin(), v.end(), 0.0);
    for (std::size_t k = 0; k < sensJac.size(); ++k) v[pattern.target[k]] = sensJac[k];
  }
};

}  // namespace sensode::integrators
