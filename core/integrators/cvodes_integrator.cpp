// SPDX-License-Identifier: MIT
#include "core/integrators/cvodes_integrator.h"

#include <cvodes/cvodes.h>
#include <cvodes/cvodes_ls.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#include "core/common/errors.h"
#include "core/integrators/cvodes_augmented.h"
#include "core/integrators/sparse_lu.h"
#include "core/integrators/sundials_handles.h"

namespace sensode::integrators {

using detail::block;
using detail::BlockLengthScope;
using detail::installAugmentedOps;
using detail::newBlockMatrix;

namespace {

std::string num(double v, int precision = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

// What went wrong inside a callback, recorded for the exception thrown after CVode() returns.
struct CallbackRecord {
  enum class Kind {
    None,
    NonFiniteRhs,
    NonFiniteJacobian,
    NonFiniteParamJacobian,  // ∂f/∂p entry (row = state, col = model parameter index)
    NonFiniteSensitivityRhs,  // Ṡ entry (row = state, col = model parameter index)
    Exception
  };
  Kind kind = Kind::None;
  int row = -1, col = -1;  // state index (f), Jacobian entry (row, col), or (state, parameter)
  double t = 0;
  std::string what;  // Exception: what()
};

// One-line cause for a CVode() return flag.
const char* describeFlag(int flag) {
  switch (flag) {
    case CV_TOO_MUCH_ACC: return "requested accuracy too high for machine precision";
    case CV_ERR_FAILURE: return "error test failed repeatedly (step size too small)";
    case CV_CONV_FAILURE: return "Newton iteration failed to converge repeatedly (step size too small)";
    case CV_LSETUP_FAIL: return "linear solver setup failed (singular iteration matrix?)";
    case CV_LSOLVE_FAIL: return "linear solve failed";
    case CV_RHSFUNC_FAIL: return "right-hand side evaluation failed";
    case CV_FIRST_RHSFUNC_ERR: return "right-hand side evaluation failed at the first call";
    case CV_REPTD_RHSFUNC_ERR: return "repeated recoverable right-hand side errors";
    case CV_UNREC_RHSFUNC_ERR: return "unrecoverable right-hand side error";
    case CV_NLS_FAIL: return "nonlinear solver failed";
    case CV_TOO_CLOSE: return "output time too close to the start time";
    case CV_ILL_INPUT: return "illegal input";
    default: return "CVODES error";
  }
}

// Consecutive steps that leave t unchanged before advanceTo gives up.
constexpr long kMaxStalledSteps = 100;

}  // namespace

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

  // Jacobian: values in the CompiledModel's CSC order, scattered into a pattern that is the
  // model's pattern plus the diagonal (so CVODES's M = I − γJ never has to grow the matrix and
  // KLU's symbolic factorisation stays valid).
  std::vector<double> jacValues;
  std::vector<sunindextype> colPtr, rowIdx;  // merged pattern
  std::vector<sunindextype> target;          // model entry k → position in merged pattern

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
  std::vector<sunindextype> diagonal;    // diagonal positions in the merged pattern
  detail::SparseLu blockLu;              // outlives the linear solver that uses it
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
      for (std::size_t j = 0; j < impl->ySOut.size(); ++j) {
        const double* v = N_VGetArrayPointer(impl->ySOut[j]);
        std::copy(v, v + n, s + j * n);
      }
      return true;
    }
  };

  CallbackRecord record;     // the current CVode() call's first callback problem
  CallbackRecord recovered;  // the latest problem CVODES recovered from in this advanceTo()
  std::string cvodeMessage;  // last error message CVODES reported (never printed)

  // Declaration order = construction order; destroyed in reverse (see sundials_handles.h).
  sundials::ContextPtr ctx;
  sundials::VectorPtr y, yOut;
  std::vector<sundials::VectorPtr> ySOwned, ySOutOwned;  // sensitivity vectors (ns each)
  std::vector<N_Vector> yS, ySOut;                      // the same, as CVODES wants them
  sundials::MatrixPtr A;
  sundials::LinearSolverPtr ls;
  sundials::CvodeMemPtr mem;

  void reset() {
    mem.reset();
    ls.reset();
    A.reset();
    yS.clear();
    ySOut.clear();
    ySOwned.clear();
    ySOutOwned.clear();
    yOut.reset();
    y.reset();
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
    sundials::checkCvode(CVodeSetErrHandlerFn(m, &Impl::errorHandler, this),
                         "CVodeSetErrHandlerFn");
    sundials::checkCvode(CVodeInit(m, f, t, y.get()), "CVodeInit");
    sundials::checkCvode(CVodeSetUserData(m, this), "CVodeSetUserData");
    sundials::checkCvode(CVodeSetMaxNumSteps(m, options.maxSteps), "CVodeSetMaxNumSteps");
    if (std::isfinite(options.maxStepSize)) {
      sundials::checkCvode(CVodeSetMaxStep(m, options.maxStepSize), "CVodeSetMaxStep");
    }
    if (options.initialStepSize > 0) {
      sundials::checkCvode(CVodeSetInitStep(m, options.initialStepSize), "CVodeSetInitStep");
    }
  }

  void buildMergedPattern() {
    const symbolic::SparsePattern& jp = model->jacobianPattern();
    jacValues.assign(static_cast<std::size_t>(jp.nnz()), 0.0);
    colPtr.assign(static_cast<std::size_t>(nx) + 1, 0);
    rowIdx.clear();
    diagonal.assign(static_cast<std::size_t>(nx), 0);
    target.assign(static_cast<std::size_t>(jp.nnz()), 0);
    for (int j = 0; j < nx; ++j) {
      bool diagonalDone = false;
      const auto jj = static_cast<std::size_t>(j);
      for (int k = jp.colPtr[jj]; k < jp.colPtr[jj + 1]; ++k) {
        const int i = jp.rowIdx[static_cast<std::size_t>(k)];
        if (!diagonalDone && i > j) {
          diagonal[jj] = static_cast<sunindextype>(rowIdx.size());
          rowIdx.push_back(j);
          diagonalDone = true;
        }
        if (i == j) {
          diagonal[jj] = static_cast<sunindextype>(rowIdx.size());
          diagonalDone = true;
        }
        target[static_cast<std::size_t>(k)] = static_cast<sunindextype>(rowIdx.size());
        rowIdx.push_back(i);
      }
      if (!diagonalDone) {
        diagonal[jj] = static_cast<sunindextype>(rowIdx.size());
        rowIdx.push_back(j);
      }
      colPtr[jj + 1] = static_cast<sunindextype>(rowIdx.size());
    }
  }

  void refreshStats() {
    if (!mem) return;
    void* m = mem.get();
    long v = 0;
    if (CVodeGetNumSteps(m, &v) == CV_SUCCESS) stats.steps = v;
    if (CVodeGetNumRhsEvals(m, &v) == CV_SUCCESS) stats.rhsEvals = v;
    long lsRhs = 0;  // f evaluations for difference-quotient Jacobians (none: J is analytic)
    if (CVodeGetNumLinRhsEvals(m, &lsRhs) == CV_SUCCESS) stats.rhsEvals += lsRhs;
    if (CVodeGetNumJacEvals(m, &v) == CV_SUCCESS) stats.jacEvals = v;
    if (CVodeGetNumLinSolvSetups(m, &v) == CV_SUCCESS) stats.luFactorizations = v;
    if (CVodeGetNumNonlinSolvIters(m, &v) == CV_SUCCESS) stats.newtonIterations = v;
    if (CVodeGetNumNonlinSolvConvFails(m, &v) == CV_SUCCESS) stats.newtonFailures = v;
    if (CVodeGetNumErrTestFails(m, &v) == CV_SUCCESS) stats.errorTestFailures = v;
    if (augmented) {
      // One augmented right-hand side evaluates f and Ṡ together (rhsEvals counts the same
      // calls); S shares the states' error test, so there is no separate failure count.
      stats.sensitivityRhsEvals = augmentedRhsEvals;
    } else if (sensEnabled && !sensParams.empty()) {
      if (CVodeGetSensNumRhsEvals(m, &v) == CV_SUCCESS) stats.sensitivityRhsEvals = v;
      if (CVodeGetSensNumErrTestFails(m, &v) == CV_SUCCESS) {
        stats.sensitivityErrorTestFailures = v;
      }
      // f evaluations CVODES makes for the sensitivities (difference quotients; none here).
      if (CVodeGetNumRhsEvalsSens(m, &v) == CV_SUCCESS) stats.rhsEvals += v;
      // Staggered: the sensitivity corrector's own Newton matrix set-ups and iterations.
      if (CVodeGetSensNumLinSolvSetups(m, &v) == CV_SUCCESS) stats.luFactorizations += v;
      if (CVodeGetSensNumNonlinSolvIters(m, &v) == CV_SUCCESS) stats.newtonIterations += v;
      if (CVodeGetSensNumNonlinSolvConvFails(m, &v) == CV_SUCCESS) stats.newtonFailures += v;
    }
  }

  std::string paramName(int k) const {
    const auto& params = model->system().params;
    if (k >= 0 && k < static_cast<int>(params.size())) {
      return "'" + params[static_cast<std::size_t>(k)].id + "'";
    }
    return "#" + std::to_string(k);
  }

  std::string stateName(int i) const {
    const auto& states = model->system().states;
    if (i >= 0 && i < static_cast<int>(states.size())) {
      return "'" + states[static_cast<std::size_t>(i)].id + "'";
    }
    return "#" + std::to_string(i);
  }

  static std::string describe(const CallbackRecord& record, const Impl& self) {
    switch (record.kind) {
      case CallbackRecord::Kind::NonFiniteRhs:
        return "non-finite value in f for state " + self.stateName(record.row) + " at t = " +
               num(record.t);
      case CallbackRecord::Kind::NonFiniteJacobian:
        return "non-finite value in the Jacobian entry d f[" + self.stateName(record.row) +
               "] / d " + self.stateName(record.col) + " at t = " + num(record.t);
      case CallbackRecord::Kind::NonFiniteParamJacobian:
        return "non-finite value in the parameter Jacobian entry d f[" +
               self.stateName(record.row) + "] / d " + self.paramName(record.col) +
               " at t = " + num(record.t);
      case CallbackRecord::Kind::NonFiniteSensitivityRhs:
        return "non-finite sensitivity derivative d/dt (d " + self.stateName(record.row) +
               " / d " + self.paramName(record.col) + ") at t = " + num(record.t);
      case CallbackRecord::Kind::Exception:
        return "error while evaluating the model at t = " + num(record.t) + ": " + record.what;
      case CallbackRecord::Kind::None:
        break;
    }
    return {};
  }

  // The same cause in a modeller's words (IntegrationFailure::what(); describe() goes to
  // details()).
  static std::string plain(const CallbackRecord& record, const Impl& self) {
    const std::string at = " at t = " + num(record.t);
    switch (record.kind) {
      case CallbackRecord::Kind::NonFiniteRhs:
        return "the rate of change of " + self.stateName(record.row) + " is not a finite number" +
               at;
      case CallbackRecord::Kind::NonFiniteJacobian:
        return "the rate of change of " + self.stateName(record.row) +
               " has no finite derivative with respect to " + self.stateName(record.col) + at;
      case CallbackRecord::Kind::NonFiniteParamJacobian:
        return "the rate of change of " + self.stateName(record.row) +
               " has no finite derivative with respect to the parameter " +
               self.paramName(record.col) + at;
      case CallbackRecord::Kind::NonFiniteSensitivityRhs:
        return "the sensitivity of " + self.stateName(record.row) + " to " +
               self.paramName(record.col) + " changes at a rate that is not finite" + at;
      case CallbackRecord::Kind::Exception:
        return "the model could not be evaluated" + at + ": " + record.what;
      case CallbackRecord::Kind::None:
        break;
    }
    return {};
  }

  // "; last recovered error: ..." when CVODES recovered from callback problems in this call.
  std::string recoveredNote() const {
    if (recovered.kind == CallbackRecord::Kind::None) return {};
    return "; last recovered error: " + plain(recovered, *this);
  }
  std::string recoveredDetails() const {
    if (recovered.kind == CallbackRecord::Kind::None) return {};
    return "last recovered error: " + describe(recovered, *this);
  }

  // Time and step size where CVODES stands now (for failure messages).
  std::pair<double, double> where() const {
    double tn = t, h = 0;
    if (mem) {
      CVodeGetCurrentTime(mem.get(), &tn);
      CVodeGetCurrentStep(mem.get(), &h);
      if (h == 0) CVodeGetLastStep(mem.get(), &h);
    }
    return {tn, h};
  }

  // "CVODES failed at t = … (step size …): <cause in plain words>", the technical detail (the
  // callback's evaluator entry, CVODES's flag and message) in details().
  [[noreturn]] void throwFailure(const std::string& cause, const std::string& details = {}) const {
    const auto [tn, h] = where();
    throw IntegrationFailure(
        "CVODES failed at t = " + num(tn) + " (step size " + num(h, 3) + "): " + cause, tn, h,
        details);
  }

  [[noreturn]] void throwCvodeFailure(int flag) const {
    std::string details = std::string(sundials::cvodeFlagName(flag));
    if (!cvodeMessage.empty()) details += ": " + cvodeMessage;
    if (record.kind != CallbackRecord::Kind::None) {
      throwFailure(plain(record, *this), describe(record, *this) + " (" + details + ")");
    }
    throwFailure(describeFlag(flag), details);
  }

  // ---- C trampolines: never throw; 0 ok, > 0 recoverable, < 0 fatal ----

  // Runs `body` for a trampoline: an exception becomes a recorded cause and a fatal -1 (C code
  // must not see it).
  template <class Body>
  static int guarded(Impl* self, sunrealtype tt, Body&& body) noexcept {
    try {
      return body();
    } catch (const std::exception& e) {
      self->recordException(tt, e.what());
    } catch (...) {
      self->recordException(tt, "unknown exception");
    }
    return -1;
  }

  static int rhs(sunrealtype tt, N_Vector yy, N_Vector ydot, void* userData) {
    auto* self = static_cast<Impl*>(userData);
    return guarded(self, tt, [&] {
      return self->stateRhs(tt, N_VGetArrayPointer(yy), N_VGetArrayPointer(ydot));
    });
  }

  static int jac(sunrealtype tt, N_Vector yy, N_Vector /*fy*/, SUNMatrix J, void* userData,
                 N_Vector /*tmp1*/, N_Vector /*tmp2*/, N_Vector /*tmp3*/) {
    auto* self = static_cast<Impl*>(userData);
    return guarded(self, tt, [&] {
      const double* x = N_VGetArrayPointer(yy);
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
      if (self->sparse) {
        self->fillSparse(J);
      } else {
        self->fillDense(J);
      }
      return 0;
    });
  }

  // Ṡ_j = J·S_j + ∂f/∂p_j for every sensitivity column j (CVSensRhsFn: all columns per call).
  static int sensRhs(int ns, sunrealtype tt, N_Vector yy, N_Vector /*ydot*/, N_Vector* ySv,
                     N_Vector* ySdot, void* userData, N_Vector /*tmp1*/, N_Vector /*tmp2*/) {
    auto* self = static_cast<Impl*>(userData);
    return guarded(self, tt, [&] {
      const double* x = N_VGetArrayPointer(yy);
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
    return guarded(self, tt, [&] {
      ++self->augmentedRhsEvals;
      const double* y = N_VGetArrayPointer(yy);
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

  static void errorHandler(int errorCode, const char* /*module*/, const char* /*function*/,
                           char* msg, void* userData) {
    if (errorCode == CV_WARNING) return;  // e.g. "t + h = t": not an error by itself
    auto* self = static_cast<Impl*>(userData);
    try {
      self->cvodeMessage = msg != nullptr ? msg : "";
    } catch (...) {
      // out of memory while copying a message: nothing sensible left to do
    }
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
    y.reset(sundials::checkCreated(N_VNew_Serial(len, ctx.get()), "N_VNew_Serial"));
    yOut.reset(sundials::checkCreated(N_VNew_Serial(len, ctx.get()), "N_VNew_Serial"));
    installAugmentedOps(y.get());
    double* y0 = N_VGetArrayPointer(y.get());
    std::copy(xLast.begin(), xLast.end(), y0);
    std::copy(s0.begin(), s0.end(), y0 + n);

    createCvode(&Impl::augmentedRhs);
    void* m = mem.get();
    augmentedAtol.assign(n * (1 + ns), options.atol);
    for (std::size_t j = 0; j < ns; ++j) {
      std::fill(augmentedAtol.begin() + static_cast<std::ptrdiff_t>(n * (j + 1)),
                augmentedAtol.begin() + static_cast<std::ptrdiff_t>(n * (j + 2)),
                errorControl ? options.atol / pbar[j] : std::numeric_limits<double>::infinity());
    }
    sundials::checkCvode(CVodeWFtolerances(m, &Impl::augmentedWeights), "CVodeWFtolerances");

    buildMergedPattern();
    blockPattern.rows = blockPattern.cols = nx;
    blockPattern.colPtr.assign(colPtr.begin(), colPtr.end());
    blockPattern.rowIdx.assign(rowIdx.begin(), rowIdx.end());
    blockLu.analyze(blockPattern,
                    sparse ? detail::SparseLu::Backend::Klu : detail::SparseLu::Backend::Dense);
    A.reset(sundials::checkCreated(newBlockMatrix(ctx.get(), rowIdx.size(), &diagonal),
                                   "SUNMatNewEmpty"));
    SUNLinearSolver s = sundials::checkCreated(SUNLinSolNewEmpty(ctx.get()), "SUNLinSolNewEmpty");
    s->content = this;
    s->ops->gettype = &Impl::blockSolverType;
    s->ops->getid = &Impl::blockSolverId;
    s->ops->setup = &Impl::blockSolverSetup;
    s->ops->solve = &Impl::blockSolverSolve;
    s->ops->free = &Impl::blockSolverFree;
    ls.reset(s);
    sundials::checkCvode(CVodeSetLinearSolver(m, ls.get(), A.get()), "CVodeSetLinearSolver");
    sundials::checkCvode(CVodeSetJacFn(m, &Impl::jac), "CVodeSetJacFn");
  }

  void fillSparse(SUNMatrix J) {
    // CVODES zeroes the matrix, index arrays included, before every Jacobian call, so the
    // pattern is written each time (it is cheap next to the factorisation).
    if (SUNSparseMatrix_NNZ(J) < static_cast<sunindextype>(rowIdx.size())) {
      SUNSparseMatrix_Reallocate(J, static_cast<sunindextype>(rowIdx.size()));
    }
    sunindextype* cp = SUNSparseMatrix_IndexPointers(J);
    sunindextype* ri = SUNSparseMatrix_IndexValues(J);
    double* data = SUNSparseMatrix_Data(J);
    std::copy(colPtr.begin(), colPtr.end(), cp);
    std::copy(rowIdx.begin(), rowIdx.end(), ri);
    std::fill(data, data + rowIdx.size(), 0.0);
    for (std::size_t k = 0; k < jacValues.size(); ++k) data[target[k]] = jacValues[k];
  }

  void fillBlock(SUNMatrix J) {
    std::vector<double>& v = block(J).values;
    std::fill(v.begin(), v.end(), 0.0);
    for (std::size_t k = 0; k < sensJac.size(); ++k) v[target[k]] = sensJac[k];
  }

  void fillDense(SUNMatrix J) {
    const symbolic::SparsePattern& jp = model->jacobianPattern();
    double* data = SUNDenseMatrix_Data(J);  // column-major, leading dimension nx
    const auto n = static_cast<std::size_t>(nx);
    std::fill(data, data + n * n, 0.0);
    for (std::size_t j = 0; j < n; ++j) {
      for (int k = jp.colPtr[j]; k < jp.colPtr[j + 1]; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        data[j * n + static_cast<std::size_t>(jp.rowIdx[kk])] = jacValues[kk];
      }
    }
  }
};

CvodesIntegrator::CvodesIntegrator() : impl_(std::make_unique<Impl>()) {}
CvodesIntegrator::~CvodesIntegrator() = default;

void CvodesIntegrator::initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                                  const IntegratorOptions& options, double t0,
                                  const std::vector<double>& x0, const std::vector<double>& p) {
  Impl& d = *impl_;
  d.reset();
  if (!model) throw Error("CvodesIntegrator::initialize: no model");
  dae_ = idasInsteadOf(Method::Cvodes, *model);
  if (dae_) {
    dae_->setStepCallback(d.stepCallback);
    dae_->initialize(std::move(model), options, t0, x0, p);
    return;
  }
  if (auto problem = options.validate()) throw InvalidOptions(*problem);
  if (!std::isfinite(t0)) throw InvalidOptions("CvodesIntegrator: t0 = " + num(t0) + " is not finite");
  const int nx = model->nx();
  if (static_cast<int>(x0.size()) != nx || static_cast<int>(p.size()) != model->np()) {
    throw Error("CvodesIntegrator::initialize: x0 has " + std::to_string(x0.size()) +
                " values and p " + std::to_string(p.size()) + ", the model needs " +
                std::to_string(nx) + " and " + std::to_string(model->np()));
  }
  d.model = std::move(model);
  d.options = options;
  d.p = p;
  d.nx = nx;
  d.t = t0;
  d.xLast = x0;
  d.initialized = true;
  if (nx == 0) return;  // nothing to integrate; advanceTo only moves the clock

  const auto n = static_cast<sunindextype>(nx);
  SUNContext ctx = nullptr;
  sundials::checkCvode(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  d.ctx.reset(ctx);

  d.y.reset(sundials::checkCreated(N_VNew_Serial(n, ctx), "N_VNew_Serial"));
  d.yOut.reset(sundials::checkCreated(N_VNew_Serial(n, ctx), "N_VNew_Serial"));
  std::copy(x0.begin(), x0.end(), N_VGetArrayPointer(d.y.get()));

  d.createCvode(&Impl::rhs);
  void* mem = d.mem.get();
  sundials::checkCvode(CVodeSStolerances(mem, options.rtol, options.atol), "CVodeSStolerances");

  d.sparse = options.linearSolver == LinearSolverKind::Sparse ||
             (options.linearSolver == LinearSolverKind::Auto && nx > IntegratorOptions::kDenseLimit);
  const symbolic::SparsePattern& jp = d.model->jacobianPattern();
  d.jacValues.assign(static_cast<std::size_t>(jp.nnz()), 0.0);
  if (d.sparse) {
    d.buildMergedPattern();
    d.A.reset(sundials::checkCreated(
        SUNSparseMatrix(n, n, static_cast<sunindextype>(d.rowIdx.size()), CSC_MAT, ctx),
        "SUNSparseMatrix"));
    d.ls.reset(sundials::checkCreated(SUNLinSol_KLU(d.y.get(), d.A.get(), ctx), "SUNLinSol_KLU"));
  } else {
    d.A.reset(sundials::checkCreated(SUNDenseMatrix(n, n, ctx), "SUNDenseMatrix"));
    d.ls.reset(
        sundials::checkCreated(SUNLinSol_Dense(d.y.get(), d.A.get(), ctx), "SUNLinSol_Dense"));
  }
  sundials::checkCvode(CVodeSetLinearSolver(mem, d.ls.get(), d.A.get()), "CVodeSetLinearSolver");
  sundials::checkCvode(CVodeSetJacFn(mem, &Impl::jac), "CVodeSetJacFn");
}

void CvodesIntegrator::advanceTo(double tout, std::vector<double>& x,
                                 const ProgressMonitor& monitor) {
  if (dae_) return dae_->advanceTo(tout, x, monitor);
  Impl& d = *impl_;
  if (!d.initialized) throw Error("CvodesIntegrator::advanceTo called before initialize");
  if (!(tout >= d.t) || !std::isfinite(tout)) {
    throw InvalidOptions("CvodesIntegrator::advanceTo: tout = " + num(tout, 17) +
                         " is not a finite time after the current time " + num(d.t, 17));
  }
  if (tout == d.t) {
    x = d.xLast;
    return;
  }
  if (d.nx == 0) {
    monitor.check({tout, tout, 0});
    d.t = tout;
    x.clear();
    return;
  }

  void* mem = d.mem.get();
  d.advanced = true;
  try {
    double tn = d.t;
    sundials::checkCvode(CVodeGetCurrentTime(mem, &tn), "CVodeGetCurrentTime");
    d.recovered = {};
    long stepsHere = 0, stalledSteps = 0;
    double tPrevious = tn;
    long stepsBefore = 0;
    CVodeGetNumSteps(mem, &stepsBefore);
    monitor.check({tn, tout, stepsBefore});
    // One internal step at a time until the step passes tout; earlier steps may already have
    // passed it (several outputs inside one step).
    while (tn < tout) {
      if (stepsHere >= d.options.maxSteps) {
        d.throwFailure("too much work: " + std::to_string(stepsHere) + " steps before t = " +
                           num(tout) + d.recoveredNote(),
                       d.recoveredDetails());
      }
      d.record = {};
      d.cvodeMessage.clear();
      int flag = 0;
      {
        const BlockLengthScope blocks(d.augmented ? d.nx : 0);
        flag = CVode(mem, tout, d.y.get(), &tn, CV_ONE_STEP);
      }
      if (flag < 0) d.throwCvodeFailure(flag);
      if (d.record.kind != CallbackRecord::Kind::None) d.recovered = d.record;
      ++stepsHere;
      // Steps below the resolution of t (CVODES only warns "t + h = t") leave t where it is
      // while x keeps moving: typically a blow-up. Stop instead of burning maxSteps.
      stalledSteps = tn == tPrevious ? stalledSteps + 1 : 0;
      if (d.stepCallback) {
        Impl::Dense dense;
        dense.impl = &d;
        d.stepCallback(tPrevious, tn, dense);
      }
      tPrevious = tn;
      if (stalledSteps >= kMaxStalledSteps) {
        const std::string stall =
            "t + h = t for " + std::to_string(stalledSteps) + " consecutive steps";
        d.throwFailure(d.recovered.kind != CallbackRecord::Kind::None
                           ? Impl::plain(d.recovered, d) + "; CVODES cut the step size until " +
                                 stall
                           : "step size too small: " + stall +
                                 " (the solution may be blowing up)",
                       d.recoveredDetails());
      }
      monitor.check({tn, tout, stepsBefore + stepsHere});
    }
    const int flag = CVodeGetDky(mem, tout, 0, d.yOut.get());
    if (flag < 0) d.throwCvodeFailure(flag);
    if (d.sensEnabled && !d.sensParams.empty() && !d.augmented) {
      const int sflag = CVodeGetSensDky(mem, tout, 0, d.ySOut.data());
      if (sflag < 0) d.throwCvodeFailure(sflag);
    }
  } catch (...) {
    d.refreshStats();
    throw;
  }
  d.refreshStats();
  const double* out = N_VGetArrayPointer(d.yOut.get());
  d.xLast.assign(out, out + d.nx);
  if (d.augmented) {
    std::copy(out + d.nx, out + N_VGetLength(d.yOut.get()), d.sLast.begin());
  } else if (d.sensEnabled) {
    const auto n = static_cast<std::size_t>(d.nx);
    for (std::size_t j = 0; j < d.ySOut.size(); ++j) {
      const double* s = N_VGetArrayPointer(d.ySOut[j]);
      std::copy(s, s + n, d.sLast.begin() + static_cast<std::ptrdiff_t>(j * n));
    }
  }
  d.t = tout;
  x = d.xLast;
}

void CvodesIntegrator::setStopTime(double tStop) {
  if (dae_) return dae_->setStopTime(tStop);
  Impl& d = *impl_;
  if (!d.initialized) throw Error("CvodesIntegrator::setStopTime called before initialize");
  if (!(tStop >= d.t)) {
    throw InvalidOptions("CvodesIntegrator: stop time " + num(tStop, 17) +
                         " is before the current time " + num(d.t, 17));
  }
  if (d.mem) sundials::checkCvode(CVodeSetStopTime(d.mem.get(), tStop), "CVodeSetStopTime");
}

void CvodesIntegrator::setStepCallback(StepCallback callback) {
  if (dae_) dae_->setStepCallback(callback);
  impl_->stepCallback = std::move(callback);
}

double CvodesIntegrator::currentTime() const { return dae_ ? dae_->currentTime() : impl_->t; }

const IntegratorStats& CvodesIntegrator::stats() const {
  return dae_ ? dae_->stats() : impl_->stats;
}

bool CvodesIntegrator::usesSparseSolver() const { return impl_->sparse; }

// Forward sensitivities (CVODES guide §5): CVodeSensInit with the analytic right-hand side
// Ṡ_j = J·S_j + ∂f/∂p_j for all columns per call (CVSensRhsFn; J and ∂f/∂p come from the compiled
// model's sparse evaluators and are cached per (t, x), since the staggered corrector calls it
// repeatedly at the same state). CVodeSensInit rather than CVodeSensInit1: one evaluation of J
// and ∂f/∂p serves every column; CVodeSensInit1 is only needed for CV_STAGGERED1. Corrector:
// CV_STAGGERED or CV_SIMULTANEOUS as IntegratorOptions::sensitivityCorrector says (simultaneous:
// one Newton iteration on states and sensitivities together, with the states' Newton matrix
// for every block — CVODES's simplification). Tolerances: CVodeSensEEtolerances with p̄_k = |p_k| (1 for p_k = 0),
// i.e. rtol and atol/p̄_k; errorControl puts S in the local error test (CVodeSetSensErrCon).
// advanceTo() interpolates S(tout) with CVodeGetSensDky like x; sensitivityRhsEvals counts the
// calls of the sensitivity right-hand side, sensitivityErrorTestFailures CVODES's count, and the
// staggered corrector's LU set-ups, iterations and convergence failures are added to
// luFactorizations, newtonIterations and newtonFailures.
//
// SensitivityCorrector::Augmented uses no sensitivity module: CVODE integrates y = [x; vec(S)]
// (Impl::enableAugmented, Impl::augmentedRhs) with the Newton matrix I − γJ on every block,
// CV_SIMULTANEOUS's matrix, but SUNDIALS' vector operations run once over n·(1 + ns) values
// instead of on 1 + ns vectors of n (the forward module's cost on our small systems). The
// linear solver is matrix-based (SUNLINEARSOLVER_DIRECT) on a SUNMatrix holding only the n×n
// block, not the matrix-embedded kind: SUNDIALS 6 never calls set-up for matrix-embedded solvers
// (cvLsInitialize sets lsetup to NULL), so CVODE's J-reuse, refactorisation and γ-rescaling
// heuristics would have to be rebuilt. Stats: rhsEvals and sensitivityRhsEvals both count the
// augmented right-hand sides; sensitivityErrorTestFailures stays 0 (one joint error test).
void CvodesIntegrator::enableSensitivities(const std::vector<int>& paramIndices,
                                           const std::vector<double>& s0, bool errorControl) {
  if (dae_) return dae_->enableSensitivities(paramIndices, s0, errorControl);
  Impl& d = *impl_;
  if (!d.initialized) throw Error("CvodesIntegrator::enableSensitivities called before initialize");
  if (d.advanced) {
    throw Error("CvodesIntegrator::enableSensitivities called after advanceTo (call it right "
                "after initialize)");
  }
  if (d.sensEnabled) {
    throw Error("CvodesIntegrator::enableSensitivities called twice (initialize() starts over)");
  }
  const int np = d.model->np();
  const auto n = static_cast<std::size_t>(d.nx);
  const std::size_t ns = paramIndices.size();
  for (const int k : paramIndices) {
    if (k < 0 || k >= np) {
      throw InvalidOptions("CvodesIntegrator::enableSensitivities: parameter index " +
                           std::to_string(k) + " outside [0, " + std::to_string(np) + ")");
    }
  }
  if (s0.size() != n * ns) {
    throw InvalidOptions("CvodesIntegrator::enableSensitivities: s0 has " +
                         std::to_string(s0.size()) + " values, expected nx × ns = " +
                         std::to_string(n * ns));
  }
  for (std::size_t k = 0; k < s0.size(); ++k) {
    if (!std::isfinite(s0[k])) {
      throw InvalidOptions("CvodesIntegrator::enableSensitivities: initial sensitivity d " +
                           d.stateName(static_cast<int>(k % std::max<std::size_t>(n, 1))) +
                           " / d " + d.paramName(paramIndices[k / std::max<std::size_t>(n, 1)]) +
                           " = " + num(s0[k]) + " is not finite");
    }
  }
  d.sensParams = paramIndices;
  d.sLast = s0;
  d.sensEnabled = true;
  if (ns == 0 || d.nx == 0) return;  // nothing for CVODES to integrate

  d.sensJac.assign(static_cast<std::size_t>(d.model->jacobianPattern().nnz()), 0.0);
  d.sensFp.assign(static_cast<std::size_t>(d.model->paramJacobianPattern().nnz()), 0.0);
  d.sensX.assign(n, 0.0);
  d.sensCacheValid = false;

  // Tolerances of S_k: rtol, and atol / |p̄_k| with p̄_k = |p_k| (1 for p_k = 0): CVODES's
  // estimated tolerances, so that S_k·p̄_k is controlled like the states.
  d.pbar.resize(ns);
  for (std::size_t j = 0; j < ns; ++j) {
    const double pk = std::abs(d.p[static_cast<std::size_t>(paramIndices[j])]);
    d.pbar[j] = pk > 0 && std::isfinite(pk) ? pk : 1.0;
  }
  if (d.options.sensitivityCorrector == SensitivityCorrector::Augmented) {
    d.enableAugmented(s0, errorControl);
    return;
  }

  SUNContext ctx = d.ctx.get();
  d.ySOwned.clear();
  d.ySOutOwned.clear();
  d.yS.clear();
  d.ySOut.clear();
  for (std::size_t j = 0; j < ns; ++j) {
    d.ySOwned.emplace_back(sundials::checkCreated(N_VNew_Serial(static_cast<sunindextype>(n), ctx),
                                                "N_VNew_Serial"));
    d.ySOutOwned.emplace_back(sundials::checkCreated(
        N_VNew_Serial(static_cast<sunindextype>(n), ctx), "N_VNew_Serial"));
    d.yS.push_back(d.ySOwned.back().get());
    d.ySOut.push_back(d.ySOutOwned.back().get());
    std::copy(s0.begin() + static_cast<std::ptrdiff_t>(j * n),
              s0.begin() + static_cast<std::ptrdiff_t>((j + 1) * n), N_VGetArrayPointer(d.yS[j]));
  }
  d.sensMethod =
      d.options.sensitivityCorrector == SensitivityCorrector::Simultaneous ? CV_SIMULTANEOUS
                                                                           : CV_STAGGERED;
  void* mem = d.mem.get();
  sundials::checkCvode(
      CVodeSensInit(mem, static_cast<int>(ns), d.sensMethod, &Impl::sensRhs, d.yS.data()),
      "CVodeSensInit");
  sundials::checkCvode(CVodeSetSensParams(mem, nullptr, d.pbar.data(), nullptr),
                     "CVodeSetSensParams");
  sundials::checkCvode(CVodeSensEEtolerances(mem), "CVodeSensEEtolerances");
  sundials::checkCvode(CVodeSetSensErrCon(mem, errorControl ? SUNTRUE : SUNFALSE),
                     "CVodeSetSensErrCon");
}

void CvodesIntegrator::sensitivities(std::vector<double>& s) const {
  if (dae_) return dae_->sensitivities(s);
  if (!impl_->sensEnabled) {
    throw Error("CvodesIntegrator::sensitivities called without enableSensitivities");
  }
  s = impl_->sLast;
}

}  // namespace sensode::integrators
