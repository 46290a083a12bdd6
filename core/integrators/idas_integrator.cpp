// SPDX-License-Identifier: MIT
#include "core/integrators/absolute_tolerances.h"
#include "core/integrators/idas_integrator.h"

#include <idas/idas.h>
#include <idas/idas_ls.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/integrators/integrator_arguments.h"
#include "core/integrators/sundials_linear_system.h"
#include "core/integrators/sundials_solver.h"

namespace sensode::integrators {
namespace {

using Api = sundials::IdaApi;
std::string num(double v, int precision = 6) { return preciseNumber(v, precision); }

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
  sundials::MergedPattern pattern;  // for KLU: the model's pattern plus the diagonal

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
  sundials::VectorArray yS, ypS, ySOut;  // sensitivities, their derivatives, S(tout)
  sundials::MatrixPtr A;
  sundials::LinearSolverPtr ls;
  sundials::IdaMemPtr mem;

  // Frees the SUNDIALS objects in the order sundials_handles.h asks for; initialize() starts
  // from here.
  void reset() {
    mem.reset();
    ls.reset();
    A.reset();
    yS.clear();
    ypS.clear();
    ySOut.clear();
    atol.reset();
    id.reset();
    yOut.reset();
    yp.reset();
    yy.reset();
    ctx.reset();
    stats = {};
    record = {};
    sensEnabled = false;
    advanced = false;
  }

  std::string stateName(int i) const {
    const auto& states = model->system().states;
    if (i < 0 || i >= nx) return "#" + std::to_string(i);
    const auto& s = states[static_cast<std::size_t>(i)];
    return s.algebraic ? "the " + s.constraint + " (for '" + s.id + "')" : "'" + s.id + "'";
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
    sundials::throwFailure<Api>(mem.get(), t, cause, details);
  }
  [[noreturn]] void throwIdaFailure(int flag) const {
    const std::string details = sundials::flagDetails<Api>(flag, idaMessage);
    if (record.kind != Record::Kind::None) throwFailure(recordText(), details);
    throwFailure(sundials::describeIdaFlag(flag), details);
  }

  void refreshStats() {
    if (!mem) return;
    sundials::collectStats<Api>(mem.get(), stats, sensEnabled && !sensParams.empty());
    if (!fallback.empty() && stats.fallbacks.empty()) stats.fallbacks.push_back(fallback);
  }

  // ---- C trampolines (sundials::guarded): never throw; 0 ok, > 0 recoverable, < 0 fatal ----
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
    return sundials::guarded(self, tt, [&] {
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
    return sundials::guarded(self, tt, [&] {
      self->model->jacobian(tt, N_VGetArrayPointer(yyv), self->p.data(),
                            self->jacValues.data());
      for (std::size_t k = 0; k < self->jacValues.size(); ++k)
        if (!std::isfinite(self->jacValues[k])) return self->nonFinite(tt, -1);
      sundials::scatterJacobian(M, self->sparse, self->pattern, self->model->jacobianPattern(),
                                self->jacValues, -1.0);
      sundials::addScaledDiagonal(M, self->sparse, self->pattern, cj, self->differential);
      return 0;
    });
  }

  // F_s = D·ṡ − J·s − ∂f/∂p_k for every sensitivity column.
  static int sensResidual(int ns, double tt, N_Vector yyv, N_Vector /*yp*/, N_Vector /*res*/,
                          N_Vector* yySv, N_Vector* ypSv, N_Vector* resS, void* userData,
                          N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<Impl*>(userData);
    return sundials::guarded(self, tt, [&] {
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
          record.kind != Record::Kind::None ? recordText() : sundials::describeIdaFlag(flag);
      throw IntegrationFailure(
          "IDAS found no consistent values of the algebraic variables at t = " + num(t) +
              " (the algebraic rules or fast-reaction equilibria cannot be satisfied there, or "
              "do not determine their variables): " + cause,
          t, 0, sundials::flagDetails<Api>(flag, idaMessage));
    }
    sundials::check<Api>(IDAGetConsistentIC(mem.get(), yy.get(), yp.get()), "IDAGetConsistentIC");
  }
};

IdasIntegrator::IdasIntegrator() : impl_(std::make_unique<Impl>()) {}
IdasIntegrator::~IdasIntegrator() = default;

void IdasIntegrator::initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                                const IntegratorOptions& options, double t0,
                                const std::vector<double>& x0, const std::vector<double>& p) {
  auto& d = *impl_;
  d.reset();
  if (!model) throw Error("IdasIntegrator::initialize: no model");
  d.fallback =
      daeFallbackSentence(model->system(), requested_ == Method::OdeSd ? "odeSD" : "CVODES");
  checkInitialValues("IdasIntegrator", *model, options, t0, x0, p);
  const int nx = model->nx();
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
  d.ctx = sundials::newContext();
  SUNContext ctx = d.ctx.get();
  d.yy = sundials::newVector(d.xLast, ctx);
  d.yp = sundials::newVector(n, ctx);
  d.yOut = sundials::newVector(n, ctx);
  d.id = sundials::newVector(d.differential, ctx);
  d.derivativeGuess(N_VGetArrayPointer(d.yp.get()));

  d.mem.reset(sundials::checkCreated(IDACreate(ctx), "IDACreate"));
  void* mem = d.mem.get();
  sundials::installMessageSink<Api>(mem, &d.idaMessage);
  sundials::check<Api>(IDAInit(mem, &Impl::residual, t0, d.yy.get(), d.yp.get()), "IDAInit");
  sundials::call<Api>(Api::setUserData, mem, &d);
  // atol per state (absolute_tolerances.h): a species read in concentration gets atol × size.
  d.atol = sundials::newVector(absoluteTolerances(*d.model, options.atol, t0, d.xLast, d.p), ctx);
  sundials::call<Api>(Api::svTolerances, mem, options.rtol, d.atol.get());
  sundials::check<Api>(IDASetId(mem, d.id.get()), "IDASetId");
  sundials::setStepLimits<Api>(mem, options);

  d.sparse = sundials::usesSparseSolver(options, nx);
  d.jacValues.assign(static_cast<std::size_t>(d.model->jacobianPattern().nnz()), 0.0);
  if (d.sparse) d.pattern.build(d.model->jacobianPattern(), nx);
  sundials::createLinearSystem(d.sparse, nx, d.pattern, d.yy.get(), ctx, d.A, d.ls);
  sundials::attachLinearSolver<Api>(mem, d.ls.get(), d.A.get(), &Impl::jac);
  d.icPending = true;
  d.refreshStats();
}

void IdasIntegrator::enableSensitivities(const std::vector<int>& paramIndices,
                                         const std::vector<double>& s0, bool errorControl) {
  auto& d = *impl_;
  if (!d.initialized) throw Error("IdasIntegrator::enableSensitivities called before initialize");
  if (d.advanced) throw Error("IdasIntegrator::enableSensitivities called after advanceTo");
  checkSensitivityRequest("IdasIntegrator", d.model->np(), d.nx, paramIndices, s0);
  const auto n = static_cast<std::size_t>(d.nx);
  const std::size_t ns = paramIndices.size();
  d.sensParams = paramIndices;
  d.sLast = s0;
  d.sensEnabled = true;
  if (ns == 0 || d.nx == 0) return;
  d.sensJac.assign(static_cast<std::size_t>(d.model->jacobianPattern().nnz()), 0.0);
  d.sensFp.assign(static_cast<std::size_t>(d.model->paramJacobianPattern().nnz()), 0.0);
  d.pbar = sensitivityScales(d.p, paramIndices);
  // ṡ guess for the differential rows: J·s + ∂f/∂p (exact for consistent s); IDACalcIC
  // corrects the algebraic rows of s and ṡ.
  d.model->jacobian(d.t, d.xLast.data(), d.p.data(), d.sensJac.data());
  d.model->paramJacobian(d.t, d.xLast.data(), d.p.data(), d.sensFp.data());
  const symbolic::SparsePattern& jp = d.model->jacobianPattern();
  const symbolic::SparsePattern& fpp = d.model->paramJacobianPattern();
  SUNContext ctx = d.ctx.get();
  d.yS.create(ns, static_cast<sunindextype>(n), ctx);
  d.ypS.create(ns, static_cast<sunindextype>(n), ctx);
  d.ySOut.create(ns, static_cast<sunindextype>(n), ctx);
  for (std::size_t j = 0; j < ns; ++j) {
    double* s = d.yS.values(j);
    std::copy(s0.data() + j * n, s0.data() + (j + 1) * n, s);
    for (const auto& pool : d.model->system().fastPools) {  // as for the states (initialize)
      double w = 0;
      for (const auto& [i, l] : pool.coefficients) w += l * s[i];
      s[pool.state] = w;
    }
    double* sd = d.ypS.values(j);
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
  sundials::check<Api>(IDASensInit(mem, static_cast<int>(ns), ism, &Impl::sensResidual,
                                   d.yS.data(), d.ypS.data()),
                       "IDASensInit");
  sundials::setSensitivityTolerances<Api>(mem, d.pbar.data(), errorControl);
}

void IdasIntegrator::advanceTo(double tout, std::vector<double>& x, const ProgressMonitor& monitor) {
  auto& d = *impl_;
  if (!d.initialized) throw Error("IdasIntegrator::advanceTo called before initialize");
  checkOutputTime("IdasIntegrator", tout, d.t);
  if (advanceWithoutSteps(tout, d.nx, d.t, d.xLast, x, monitor)) return;
  void* mem = d.mem.get();
  d.advanced = true;
  try {
    if (d.icPending) d.makeConsistent(tout);
    double tn = d.t;
    sundials::check<Api>(IDAGetCurrentTime(mem, &tn), "IDAGetCurrentTime");
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
      if (stalled >= sundials::kMaxStalledSteps)
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
  if (d.sensEnabled) sundials::copySensitivities(d.ySOut, d.nx, d.sLast.data());
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
  checkStopTime("IdasIntegrator", tStop, d.t);
  if (d.mem) sundials::call<Api>(Api::setStopTime, d.mem.get(), tStop);
}

}  // namespace sensode::integrators
