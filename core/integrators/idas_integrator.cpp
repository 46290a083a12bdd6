// SPDX-License-Identifier: MIT
#include "core/integrators/absolute_tolerances.h"
#include "core/integrators/idas_integrator.h"

#include <idas/idas.h>
#include <idas/idas_ls.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "core/common/errors.h"
#include "core/integrators/sundials_handles.h"

namespace sensode::integrators {
namespace {

std::string num(double v, int precision = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

struct IdaMemDeleter {
  void operator()(void* mem) const { IDAFree(&mem); }
};
using IdaMemPtr = std::unique_ptr<void, IdaMemDeleter>;

// IDAGetReturnFlagName returns a malloc'ed string.
std::string idaFlagName(int flag) {
  char* name = IDAGetReturnFlagName(flag);
  if (name == nullptr) return "flag " + std::to_string(flag);
  std::string s(name);
  std::free(name);
  return s;
}

void checkIda(int flag, const char* function) {
  if (flag < 0) throw Error(std::string("SUNDIALS call ") + function + " failed: " + idaFlagName(flag));
}

const char* describeFlag(int flag) {
  switch (flag) {
    case IDA_TOO_MUCH_ACC: return "requested accuracy too high for machine precision";
    case IDA_ERR_FAIL: return "error test failed repeatedly (step size too small)";
    case IDA_CONV_FAIL: return "Newton iteration failed to converge repeatedly (step size too small)";
    case IDA_LSETUP_FAIL: return "linear solver setup failed (singular iteration matrix: the "
                                 "algebraic constraints may not determine their variables)";
    case IDA_LSOLVE_FAIL: return "linear solve failed";
    case IDA_RES_FAIL: return "residual evaluation failed";
    case IDA_REP_RES_ERR: return "repeated recoverable residual errors";
    case IDA_CONSTR_FAIL: return "inequality constraints could not be met";
    case IDA_NO_RECOVERY: return "no recovery from a recoverable residual error";
    case IDA_NLS_FAIL: return "nonlinear solver failed";
    case IDA_ILL_INPUT: return "illegal input";
    default: return "IDAS error";
  }
}

constexpr long kMaxStalledSteps = 100;

}  // namespace

std::string daeFallbackSentence(const symbolic::OdeSystem& system, const std::string& method) {
  bool rules = false, fast = false;
  for (const auto& s : system.states) {
    if (!s.algebraic) continue;
    (s.constraint.rfind("algebraic rule", 0) == 0 ? rules : fast) = true;
  }
  const std::string what = rules && fast ? "algebraic rules and fast reactions"
                           : rules       ? "algebraic rules"
                                         : "fast reactions";
  return what + " make the model differential-algebraic, which " + method +
         " cannot integrate; IDAS (SUNDIALS) integrated it instead";
}

std::unique_ptr<IdasIntegrator> idasInsteadOf(Method method, const symbolic::CompiledModel& model) {
  if (!model.system().isDae()) return nullptr;
  auto idas = std::make_unique<IdasIntegrator>();
  idas->setRequestedMethod(method);
  return idas;
}

struct IdasIntegrator::Impl {
  std::shared_ptr<const symbolic::CompiledModel> model;
  IntegratorOptions options;
  std::vector<double> p;
  int nx = 0;
  double t = 0;
  std::vector<double> xLast;
  std::vector<double> differential;  // D: 1 differential, 0 algebraic (IDASetId)
  bool sparse = false;
  bool initialized = false;
  bool icPending = false;  // IDACalcIC before the next step
  bool advanced = false;
  IntegratorStats stats;
  std::string fallback;  // sentence for stats.fallbacks

  std::vector<double> jacValues;
  std::vector<sunindextype> colPtr, rowIdx, target, diagonal;  // model pattern + diagonal

  bool sensEnabled = false;
  std::vector<int> sensParams;
  std::vector<double> sLast, pbar, sensJac, sensFp;

  StepCallback stepCallback;
  struct Dense final : StepDenseOutput {
    Impl* impl = nullptr;
    void state(double tq, double* out) override {
      const int flag = IDAGetDky(impl->mem.get(), tq, 0, impl->yOut.get());
      if (flag < 0) impl->throwIdaFailure(flag);
      const double* v = N_VGetArrayPointer(impl->yOut.get());
      std::copy(v, v + impl->nx, out);
    }
    bool sensitivities(double tq, double* s) override {
      if (!impl->sensEnabled) return false;
      for (std::size_t j = 0; j < impl->sensParams.size(); ++j) {
        const int flag = IDAGetSensDky1(impl->mem.get(), tq, 0, static_cast<int>(j),
                                        impl->yOut.get());
        if (flag < 0) impl->throwIdaFailure(flag);
        const double* v = N_VGetArrayPointer(impl->yOut.get());
        std::copy(v, v + impl->nx, s + j * static_cast<std::size_t>(impl->nx));
      }
      return true;
    }
  };

  struct Record {
    enum class Kind { None, NonFinite, Exception } kind = Kind::None;
    int row = -1;
    double t = 0;
    std::string what;
  } record;
  std::string idaMessage;

  // Declaration order = construction order (sundials_handles.h).
  sundials::ContextPtr ctx;
  sundials::VectorPtr yy, yp, yOut, id;
  sundials::VectorPtr atol;  // per state (absolute_tolerances.h), for IDASVtolerances
  std::vector<sundials::VectorPtr> ySOwned, ypSOwned, ySOutOwned;
  std::vector<N_Vector> yS, ypS, ySOut;
  sundials::MatrixPtr A;
  sundials::LinearSolverPtr ls;
  IdaMemPtr mem;

  std::string stateName(int i) const {
    const auto& states = model->system().states;
    if (i < 0 || i >= nx) return "#" + std::to_string(i);
    const auto& s = states[static_cast<std::size_t>(i)];
    return s.algebraic ? "the " + s.constraint + " (for '" + s.id + "')" : "'" + s.id + "'";
  }

  std::pair<double, double> where() const {
    double tn = t, h = 0;
    if (mem) {
      IDAGetCurrentTime(mem.get(), &tn);
      IDAGetCurrentStep(mem.get(), &h);
      if (h == 0) IDAGetLastStep(mem.get(), &h);
    }
    return {tn, h};
  }

  std::string recordText() const {
    switch (record.kind) {
      case Record::Kind::NonFinite:
        return "the residual of " + stateName(record.row) + " is not a finite number at t = " +
               num(record.t);
      case Record::Kind::Exception:
        return "the model could not be evaluated at t = " + num(record.t) + ": " + record.what;
      case Record::Kind::None: break;
    }
    return {};
  }

  [[noreturn]] void throwFailure(const std::string& cause, const std::string& details) const {
    const auto [tn, h] = where();
    throw IntegrationFailure(
        "IDAS failed at t = " + num(tn) + " (step size " + num(h, 3) + "): " + cause, tn, h,
        details);
  }
  [[noreturn]] void throwIdaFailure(int flag) const {
    std::string details = idaFlagName(flag);
    if (!idaMessage.empty()) details += ": " + idaMessage;
    if (record.kind != Record::Kind::None) throwFailure(recordText(), details);
    throwFailure(describeFlag(flag), details);
  }

  void refreshStats() {
    if (!mem) return;
    void* m = mem.get();
    long v = 0;
    if (IDAGetNumSteps(m, &v) == IDA_SUCCESS) stats.steps = v;
    if (IDAGetNumResEvals(m, &v) == IDA_SUCCESS) stats.rhsEvals = v;
    if (IDAGetNumJacEvals(m, &v) == IDA_SUCCESS) stats.jacEvals = v;
    if (IDAGetNumLinSolvSetups(m, &v) == IDA_SUCCESS) stats.luFactorizations = v;
    if (IDAGetNumNonlinSolvIters(m, &v) == IDA_SUCCESS) stats.newtonIterations = v;
    if (IDAGetNumNonlinSolvConvFails(m, &v) == IDA_SUCCESS) stats.newtonFailures = v;
    if (IDAGetNumErrTestFails(m, &v) == IDA_SUCCESS) stats.errorTestFailures = v;
    if (sensEnabled && !sensParams.empty()) {
      if (IDAGetSensNumResEvals(m, &v) == IDA_SUCCESS) stats.sensitivityRhsEvals = v;
      if (IDAGetSensNumErrTestFails(m, &v) == IDA_SUCCESS) stats.sensitivityErrorTestFailures = v;
    }
    if (!fallback.empty() && stats.fallbacks.empty()) stats.fallbacks.push_back(fallback);
  }

  // ---- C trampolines: never throw; 0 ok, > 0 recoverable, < 0 fatal ----
  template <class Body>
  static int guarded(Impl* self, double tt, Body&& body) noexcept {
    try {
      return body();
    } catch (const std::exception& e) {
      self->recordException(tt, e.what());
    } catch (...) {
      self->recordException(tt, "unknown exception");
    }
    return -1;
  }
  void recordException(double tt, const char* what) noexcept {
    if (record.kind == Record::Kind::Exception) return;
    try {
      record = {};
      record.kind = Record::Kind::Exception;
      record.t = tt;
      record.what = what;
    } catch (...) {
    }
  }
  int nonFinite(double tt, int row) {
    if (record.kind == Record::Kind::None) {
      record.kind = Record::Kind::NonFinite;
      record.row = row;
      record.t = tt;
    }
    return 1;
  }

  // F = D·ẋ − f.
  static int residual(double tt, N_Vector yyv, N_Vector ypv, N_Vector rr, void* userData) {
    auto* self = static_cast<Impl*>(userData);
    return guarded(self, tt, [&] {
      const double* xd = N_VGetArrayPointer(ypv);
      double* r = N_VGetArrayPointer(rr);
      self->model->rhs(tt, N_VGetArrayPointer(yyv), self->p.data(), r);
      for (int i = 0; i < self->nx; ++i) {
        const auto ii = static_cast<std::size_t>(i);
        if (!std::isfinite(r[ii])) return self->nonFinite(tt, i);
        r[ii] = self->differential[ii] * xd[ii] - r[ii];
      }
      return 0;
    });
  }

  // ∂F/∂x + c_j·∂F/∂ẋ = c_j·D − J.
  static int jac(double tt, double cj, N_Vector yyv, N_Vector /*yp*/, N_Vector /*r*/,
                 SUNMatrix M, void* userData, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<Impl*>(userData);
    return guarded(self, tt, [&] {
      self->model->jacobian(tt, N_VGetArrayPointer(yyv), self->p.data(),
                            self->jacValues.data());
      for (std::size_t k = 0; k < self->jacValues.size(); ++k)
        if (!std::isfinite(self->jacValues[k])) return self->nonFinite(tt, -1);
      const auto n = static_cast<std::size_t>(self->nx);
      if (self->sparse) {
        if (SUNSparseMatrix_NNZ(M) < static_cast<sunindextype>(self->rowIdx.size()))
          SUNSparseMatrix_Reallocate(M, static_cast<sunindextype>(self->rowIdx.size()));
        std::copy(self->colPtr.begin(), self->colPtr.end(), SUNSparseMatrix_IndexPointers(M));
        std::copy(self->rowIdx.begin(), self->rowIdx.end(), SUNSparseMatrix_IndexValues(M));
        double* data = SUNSparseMatrix_Data(M);
        std::fill(data, data + self->rowIdx.size(), 0.0);
        for (std::size_t k = 0; k < self->jacValues.size(); ++k)
          data[self->target[k]] = -self->jacValues[k];
        for (std::size_t i = 0; i < n; ++i) data[self->diagonal[i]] += cj * self->differential[i];
      } else {
        const symbolic::SparsePattern& jp = self->model->jacobianPattern();
        double* data = SUNDenseMatrix_Data(M);
        std::fill(data, data + n * n, 0.0);
        for (std::size_t j = 0; j < n; ++j)
          for (int k = jp.colPtr[j]; k < jp.colPtr[j + 1]; ++k)
            data[j * n + static_cast<std::size_t>(jp.rowIdx[static_cast<std::size_t>(k)])] =
                -self->jacValues[static_cast<std::size_t>(k)];
        for (std::size_t i = 0; i < n; ++i) data[i * n + i] += cj * self->differential[i];
      }
      return 0;
    });
  }

  // F_s = D·ṡ − J·s − ∂f/∂p_k for every sensitivity column.
  static int sensResidual(int ns, double tt, N_Vector yyv, N_Vector /*yp*/, N_Vector /*res*/,
                          N_Vector* yySv, N_Vector* ypSv, N_Vector* resS, void* userData,
                          N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<Impl*>(userData);
    return guarded(self, tt, [&] {
      const double* x = N_VGetArrayPointer(yyv);
      self->model->jacobian(tt, x, self->p.data(), self->sensJac.data());
      self->model->paramJacobian(tt, x, self->p.data(), self->sensFp.data());
      const symbolic::SparsePattern& jp = self->model->jacobianPattern();
      const symbolic::SparsePattern& fpp = self->model->paramJacobianPattern();
      const auto n = static_cast<std::size_t>(self->nx);
      for (int j = 0; j < ns; ++j) {
        const double* s = N_VGetArrayPointer(yySv[j]);
        const double* sd = N_VGetArrayPointer(ypSv[j]);
        double* out = N_VGetArrayPointer(resS[j]);
        for (std::size_t i = 0; i < n; ++i) out[i] = self->differential[i] * sd[i];
        for (std::size_t c = 0; c < n; ++c)
          for (int k = jp.colPtr[c]; k < jp.colPtr[c + 1]; ++k)
            out[jp.rowIdx[static_cast<std::size_t>(k)]] -=
                self->sensJac[static_cast<std::size_t>(k)] * s[c];
        const auto col = static_cast<std::size_t>(self->sensParams[static_cast<std::size_t>(j)]);
        for (int k = fpp.colPtr[col]; k < fpp.colPtr[col + 1]; ++k)
          out[fpp.rowIdx[static_cast<std::size_t>(k)]] -= self->sensFp[static_cast<std::size_t>(k)];
        for (std::size_t i = 0; i < n; ++i)
          if (!std::isfinite(out[i])) return self->nonFinite(tt, static_cast<int>(i));
      }
      return 0;
    });
  }

  static void errorHandler(int errorCode, const char*, const char*, char* msg, void* userData) {
    if (errorCode == IDA_WARNING) return;
    auto* self = static_cast<Impl*>(userData);
    try {
      self->idaMessage = msg != nullptr ? msg : "";
    } catch (...) {
    }
  }

  void buildMergedPattern() {
    const symbolic::SparsePattern& jp = model->jacobianPattern();
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

  // ẋ at (t, x) for the first guess IDACalcIC refines: f for the differential states (exact
  // when x is consistent), 0 for the algebraic ones (they have no derivative in F).
  void derivativeGuess(double* xd) {
    model->rhs(t, xLast.data(), p.data(), xd);
    for (int i = 0; i < nx; ++i)
      if (differential[static_cast<std::size_t>(i)] == 0 || !std::isfinite(xd[i])) xd[i] = 0;
  }

  // IDACalcIC towards tout: the algebraic states and the derivatives (and their sensitivities)
  // consistent with F = 0.
  void makeConsistent(double tout) {
    icPending = false;
    record = {};
    idaMessage.clear();
    const int flag = IDACalcIC(mem.get(), IDA_YA_YDP_INIT, tout);
    if (flag < 0) {
      const std::string cause =
          record.kind != Record::Kind::None ? recordText() : describeFlag(flag);
      throw IntegrationFailure(
          "IDAS found no consistent values of the algebraic variables at t = " + num(t) +
              " (the algebraic rules or fast-reaction equilibria cannot be satisfied there, or "
              "do not determine their variables): " + cause,
          t, 0, idaFlagName(flag) + (idaMessage.empty() ? "" : ": " + idaMessage));
    }
    checkIda(IDAGetConsistentIC(mem.get(), yy.get(), yp.get()), "IDAGetConsistentIC");
  }
};

IdasIntegrator::IdasIntegrator() : impl_(std::make_unique<Impl>()) {}
IdasIntegrator::~IdasIntegrator() = default;

void IdasIntegrator::initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                                const IntegratorOptions& options, double t0,
                                const std::vector<double>& x0, const std::vector<double>& p) {
  auto& d = *impl_;
  d.mem.reset();
  d.ls.reset();
  d.A.reset();
  d.yS.clear();
  d.ypS.clear();
  d.ySOut.clear();
  d.ySOwned.clear();
  d.ypSOwned.clear();
  d.ySOutOwned.clear();
  d.id.reset();
  d.yOut.reset();
  d.yp.reset();
  d.yy.reset();
  d.ctx.reset();
  d.stats = {};
  d.record = {};
  d.sensEnabled = false;
  d.advanced = false;
  if (!model) throw Error("IdasIntegrator::initialize: no model");
  d.fallback =
      daeFallbackSentence(model->system(), requested_ == Method::OdeSd ? "odeSD" : "CVODES");
  if (auto problem = options.validate()) throw InvalidOptions(*problem);
  if (!std::isfinite(t0)) throw InvalidOptions("IdasIntegrator: t0 = " + num(t0) + " is not finite");
  const int nx = model->nx();
  if (static_cast<int>(x0.size()) != nx || static_cast<int>(p.size()) != model->np())
    throw Error("IdasIntegrator::initialize: x0 has " + std::to_string(x0.size()) +
                " values and p " + std::to_string(p.size()) + ", the model needs " +
                std::to_string(nx) + " and " + std::to_string(model->np()));
  d.model = std::move(model);
  d.options = options;
  d.p = p;
  d.nx = nx;
  d.t = t0;
  d.xLast = x0;
  // Pools from the species as they are now: the same values at t0, the new ones after an event
  // that changed a species of a fast reaction (the event driver restarts with its state).
  for (const auto& pool : d.model->system().fastPools) {
    double w = 0;
    for (const auto& [i, l] : pool.coefficients) w += l * x0[static_cast<std::size_t>(i)];
    d.xLast[static_cast<std::size_t>(pool.state)] = w;
  }
  d.initialized = true;
  d.differential.assign(static_cast<std::size_t>(nx), 1.0);
  for (int i = 0; i < nx; ++i)
    if (d.model->system().states[static_cast<std::size_t>(i)].algebraic)
      d.differential[static_cast<std::size_t>(i)] = 0.0;
  if (nx == 0) return;

  const auto n = static_cast<sunindextype>(nx);
  SUNContext ctx = nullptr;
  checkIda(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  d.ctx.reset(ctx);
  d.yy.reset(sundials::checkCreated(N_VNew_Serial(n, ctx), "N_VNew_Serial"));
  d.yp.reset(sundials::checkCreated(N_VNew_Serial(n, ctx), "N_VNew_Serial"));
  d.yOut.reset(sundials::checkCreated(N_VNew_Serial(n, ctx), "N_VNew_Serial"));
  d.id.reset(sundials::checkCreated(N_VNew_Serial(n, ctx), "N_VNew_Serial"));
  std::copy(d.xLast.begin(), d.xLast.end(), N_VGetArrayPointer(d.yy.get()));
  d.derivativeGuess(N_VGetArrayPointer(d.yp.get()));
  std::copy(d.differential.begin(), d.differential.end(), N_VGetArrayPointer(d.id.get()));

  d.mem.reset(sundials::checkCreated(IDACreate(ctx), "IDACreate"));
  void* mem = d.mem.get();
  checkIda(IDASetErrHandlerFn(mem, &Impl::errorHandler, &d), "IDASetErrHandlerFn");
  checkIda(IDAInit(mem, &Impl::residual, t0, d.yy.get(), d.yp.get()), "IDAInit");
  checkIda(IDASetUserData(mem, &d), "IDASetUserData");
  // atol per state (absolute_tolerances.h): a species read in concentration gets atol × size.
  {
    const std::vector<double> perState = absoluteTolerances(*d.model, options.atol, t0, d.xLast, d.p);
    d.atol.reset(sundials::checkCreated(N_VNew_Serial(n, ctx), "N_VNew_Serial"));
    std::copy(perState.begin(), perState.end(), N_VGetArrayPointer(d.atol.get()));
  }
  checkIda(IDASVtolerances(mem, options.rtol, d.atol.get()), "IDASVtolerances");
  checkIda(IDASetId(mem, d.id.get()), "IDASetId");
  checkIda(IDASetMaxNumSteps(mem, options.maxSteps), "IDASetMaxNumSteps");
  if (std::isfinite(options.maxStepSize)) checkIda(IDASetMaxStep(mem, options.maxStepSize), "IDASetMaxStep");
  if (options.initialStepSize > 0) checkIda(IDASetInitStep(mem, options.initialStepSize), "IDASetInitStep");

  d.sparse = options.linearSolver == LinearSolverKind::Sparse ||
             (options.linearSolver == LinearSolverKind::Auto && nx > IntegratorOptions::kDenseLimit);
  d.jacValues.assign(static_cast<std::size_t>(d.model->jacobianPattern().nnz()), 0.0);
  if (d.sparse) {
    d.buildMergedPattern();
    d.A.reset(sundials::checkCreated(
        SUNSparseMatrix(n, n, static_cast<sunindextype>(d.rowIdx.size()), CSC_MAT, ctx),
        "SUNSparseMatrix"));
    d.ls.reset(sundials::checkCreated(SUNLinSol_KLU(d.yy.get(), d.A.get(), ctx), "SUNLinSol_KLU"));
  } else {
    d.A.reset(sundials::checkCreated(SUNDenseMatrix(n, n, ctx), "SUNDenseMatrix"));
    d.ls.reset(sundials::checkCreated(SUNLinSol_Dense(d.yy.get(), d.A.get(), ctx), "SUNLinSol_Dense"));
  }
  checkIda(IDASetLinearSolver(mem, d.ls.get(), d.A.get()), "IDASetLinearSolver");
  checkIda(IDASetJacFn(mem, &Impl::jac), "IDASetJacFn");
  d.icPending = true;
  d.refreshStats();
}

void IdasIntegrator::enableSensitivities(const std::vector<int>& paramIndices,
                                         const std::vector<double>& s0, bool errorControl) {
  auto& d = *impl_;
  if (!d.initialized) throw Error("IdasIntegrator::enableSensitivities called before initialize");
  if (d.advanced) throw Error("IdasIntegrator::enableSensitivities called after advanceTo");
  const auto n = static_cast<std::size_t>(d.nx);
  const std::size_t ns = paramIndices.size();
  for (const int k : paramIndices)
    if (k < 0 || k >= d.model->np())
      throw InvalidOptions("IdasIntegrator::enableSensitivities: parameter index " +
                           std::to_string(k) + " outside [0, " + std::to_string(d.model->np()) + ")");
  if (s0.size() != n * ns)
    throw InvalidOptions("IdasIntegrator::enableSensitivities: s0 has " +
                         std::to_string(s0.size()) + " values, expected nx × ns = " +
                         std::to_string(n * ns));
  d.sensParams = paramIndices;
  d.sLast = s0;
  d.sensEnabled = true;
  if (ns == 0 || d.nx == 0) return;
  d.sensJac.assign(static_cast<std::size_t>(d.model->jacobianPattern().nnz()), 0.0);
  d.sensFp.assign(static_cast<std::size_t>(d.model->paramJacobianPattern().nnz()), 0.0);
  d.pbar.resize(ns);
  for (std::size_t j = 0; j < ns; ++j) {
    const double pk = std::abs(d.p[static_cast<std::size_t>(paramIndices[j])]);
    d.pbar[j] = pk > 0 && std::isfinite(pk) ? pk : 1.0;
  }
  // ṡ guess for the differential rows: J·s + ∂f/∂p (exact for consistent s); IDACalcIC
  // corrects the algebraic rows of s and ṡ.
  std::vector<double> xd(n);
  d.model->jacobian(d.t, d.xLast.data(), d.p.data(), d.sensJac.data());
  d.model->paramJacobian(d.t, d.xLast.data(), d.p.data(), d.sensFp.data());
  const symbolic::SparsePattern& jp = d.model->jacobianPattern();
  const symbolic::SparsePattern& fpp = d.model->paramJacobianPattern();
  SUNContext ctx = d.ctx.get();
  for (std::size_t j = 0; j < ns; ++j) {
    d.ySOwned.emplace_back(sundials::checkCreated(N_VNew_Serial(static_cast<sunindextype>(n), ctx), "N_VNew_Serial"));
    d.ypSOwned.emplace_back(sundials::checkCreated(N_VNew_Serial(static_cast<sunindextype>(n), ctx), "N_VNew_Serial"));
    d.ySOutOwned.emplace_back(sundials::checkCreated(N_VNew_Serial(static_cast<sunindextype>(n), ctx), "N_VNew_Serial"));
    d.yS.push_back(d.ySOwned.back().get());
    d.ypS.push_back(d.ypSOwned.back().get());
    d.ySOut.push_back(d.ySOutOwned.back().get());
    double* s = N_VGetArrayPointer(d.yS[j]);
    std::copy(s0.data() + j * n, s0.data() + (j + 1) * n, s);
    for (const auto& pool : d.model->system().fastPools) {  // as for the states (initialize)
      double w = 0;
      for (const auto& [i, l] : pool.coefficients) w += l * s[i];
      s[pool.state] = w;
    }
    double* sd = N_VGetArrayPointer(d.ypS[j]);
    std::fill(sd, sd + n, 0.0);
    for (std::size_t c = 0; c < n; ++c)
      for (int k = jp.colPtr[c]; k < jp.colPtr[c + 1]; ++k)
        sd[jp.rowIdx[static_cast<std::size_t>(k)]] += d.sensJac[static_cast<std::size_t>(k)] * s[c];
    const auto col = static_cast<std::size_t>(paramIndices[j]);
    for (int k = fpp.colPtr[col]; k < fpp.colPtr[col + 1]; ++k)
      sd[fpp.rowIdx[static_cast<std::size_t>(k)]] += d.sensFp[static_cast<std::size_t>(k)];
    for (std::size_t i = 0; i < n; ++i)
      if (d.differential[i] == 0 || !std::isfinite(sd[i])) sd[i] = 0;
  }
  void* mem = d.mem.get();
  const int ism = d.options.sensitivityCorrector == SensitivityCorrector::Staggered
                      ? IDA_STAGGERED
                      : IDA_SIMULTANEOUS;
  checkIda(IDASensInit(mem, static_cast<int>(ns), ism, &Impl::sensResidual, d.yS.data(),
                       d.ypS.data()),
           "IDASensInit");
  checkIda(IDASetSensParams(mem, nullptr, d.pbar.data(), nullptr), "IDASetSensParams");
  checkIda(IDASensEEtolerances(mem), "IDASensEEtolerances");
  checkIda(IDASetSensErrCon(mem, errorControl ? SUNTRUE : SUNFALSE), "IDASetSensErrCon");
}

void IdasIntegrator::advanceTo(double tout, std::vector<double>& x, const ProgressMonitor& monitor) {
  auto& d = *impl_;
  if (!d.initialized) throw Error("IdasIntegrator::advanceTo called before initialize");
  if (!(tout >= d.t) || !std::isfinite(tout))
    throw InvalidOptions("IdasIntegrator::advanceTo: tout = " + num(tout, 17) +
                         " is not a finite time after the current time " + num(d.t, 17));
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
    if (d.icPending) d.makeConsistent(tout);
    double tn = d.t;
    checkIda(IDAGetCurrentTime(mem, &tn), "IDAGetCurrentTime");
    long stepsHere = 0, stalled = 0, stepsBefore = 0;
    IDAGetNumSteps(mem, &stepsBefore);
    double tPrevious = tn;
    monitor.check({tn, tout, stepsBefore});
    while (tn < tout) {
      if (stepsHere >= d.options.maxSteps)
        d.throwFailure("too much work: " + std::to_string(stepsHere) + " steps before t = " +
                           num(tout),
                       {});
      d.record = {};
      d.idaMessage.clear();
      const int flag = IDASolve(mem, tout, &tn, d.yy.get(), d.yp.get(), IDA_ONE_STEP);
      if (flag < 0) d.throwIdaFailure(flag);
      ++stepsHere;
      stalled = tn == tPrevious ? stalled + 1 : 0;
      if (d.stepCallback) {
        Impl::Dense dense;
        dense.impl = &d;
        d.stepCallback(tPrevious, tn, dense);
      }
      tPrevious = tn;
      if (stalled >= kMaxStalledSteps)
        d.throwFailure("step size too small: t + h = t for " + std::to_string(stalled) +
                           " consecutive steps (the solution may be blowing up)",
                       {});
      monitor.check({tn, tout, stepsBefore + stepsHere});
    }
    const int flag = IDAGetDky(mem, tout, 0, d.yOut.get());
    if (flag < 0) d.throwIdaFailure(flag);
    if (d.sensEnabled && !d.sensParams.empty()) {
      const int sflag = IDAGetSensDky(mem, tout, 0, d.ySOut.data());
      if (sflag < 0) d.throwIdaFailure(sflag);
    }
  } catch (...) {
    d.refreshStats();
    throw;
  }
  d.refreshStats();
  const double* out = N_VGetArrayPointer(d.yOut.get());
  d.xLast.assign(out, out + d.nx);
  if (d.sensEnabled) {
    const auto n = static_cast<std::size_t>(d.nx);
    for (std::size_t j = 0; j < d.ySOut.size(); ++j) {
      const double* s = N_VGetArrayPointer(d.ySOut[j]);
      std::copy(s, s + n, d.sLast.begin() + static_cast<std::ptrdiff_t>(j * n));
    }
  }
  d.t = tout;
  x = d.xLast;
}

void IdasIntegrator::sensitivities(std::vector<double>& s) const {
  if (!impl_->sensEnabled) throw Error("IdasIntegrator::sensitivities called without enableSensitivities");
  s = impl_->sLast;
}

void IdasIntegrator::setStepCallback(StepCallback callback) {
  impl_->stepCallback = std::move(callback);
}

double IdasIntegrator::currentTime() const { return impl_->t; }

const IntegratorStats& IdasIntegrator::stats() const { return impl_->stats; }

void IdasIntegrator::setStopTime(double tStop) {
  auto& d = *impl_;
  if (!d.initialized) throw Error("IdasIntegrator::setStopTime called before initialize");
  if (!(tStop >= d.t))
    throw InvalidOptions("IdasIntegrator: stop time " + num(tStop, 17) +
                         " is before the current time " + num(d.t, 17));
  if (d.mem) checkIda(IDASetStopTime(d.mem.get(), tStop), "IDASetStopTime");
}

}  // namespace sensode::integrators
