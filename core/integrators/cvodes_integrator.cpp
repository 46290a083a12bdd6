// SPDX-License-Identifier: MIT
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/absolute_tolerances.h"
#include "core/integrators/cvodes_integrator_impl.h"
#include "core/integrators/integrator_arguments.h"

namespace sensode::integrators {

namespace {

// Foresees "too much work" when the step size has stopped growing far short of what tout needs:
// BDF's step at a steady state ends where h·‖J‖ nears 1/ε and Newton fails (Brannmark's at
// h ≈ 3e8), so a measurement time of 1e308 would otherwise cost all of maxSteps (27 s of CPU
// with forward sensitivities) for the same failure. It fires only when the largest step of the
// last kWindow steps is no larger than that of the kWindow before, and even at that step the
// remaining time would take more than kMargin times the steps left.
class StepGrowthWatch {
 public:
  static constexpr long kWindow = 5000;
  static constexpr double kMargin = 1000;

  // After each accepted step of size h; true when tout is out of reach.
  bool hopeless(double h, double tn, double tout, long stepsLeft) {
    current_ = std::max(current_, std::abs(h));
    if (++inWindow_ < kWindow) return false;
    const bool grew = previous_ == 0 || current_ > previous_;  // the first window never fires
    const double needed = (tout - tn) / current_;
    previous_ = current_;
    largest_ = current_;
    current_ = 0;
    inWindow_ = 0;
    return !grew && needed > kMargin * static_cast<double>(stepsLeft);
  }
  double largestStep() const { return largest_; }

 private:
  double previous_ = 0, current_ = 0, largest_ = 0;  // largest steps of the windows
  long inWindow_ = 0;
};

}  // namespace


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
  checkInitialValues("CvodesIntegrator", *model, options, t0, x0, p);
  const int nx = model->nx();
  d.model = std::move(model);
  d.options = options;
  d.p = p;
  d.nx = nx;
  d.t = t0;
  d.xLast = x0;
  d.initialized = true;
  if (nx == 0) return;  // nothing to integrate; advanceTo only moves the clock

  const auto n = static_cast<sunindextype>(nx);
  d.ctx = sundials::newContext();
  SUNContext ctx = d.ctx.get();
  d.y = sundials::newVector(x0, ctx);
  d.yOut = sundials::newVector(n, ctx);

  d.createCvode(&Impl::rhs);
  void* mem = d.mem.get();
  // atol per state (absolute_tolerances.h): a species read in concentration gets atol × size.
  d.atol = absoluteTolerances(*d.model, options.atol, t0, x0, p);
  d.atolVector = sundials::newVector(d.atol, ctx);
  sundials::call<Api>(Api::svTolerances, mem, options.rtol, d.atolVector.get());

  d.sparse = sundials::usesSparseSolver(options, nx);
  const symbolic::SparsePattern& jp = d.model->jacobianPattern();
  d.jacValues.assign(static_cast<std::size_t>(jp.nnz()), 0.0);
  if (d.sparse) d.pattern.build(jp, nx);
  sundials::createLinearSystem(d.sparse, nx, d.pattern, d.y.get(), ctx, d.A, d.ls);
  sundials::attachLinearSolver<Api>(mem, d.ls.get(), d.A.get(), &Impl::jac);
}

void CvodesIntegrator::advanceTo(double tout, std::vector<double>& x,
                                 const ProgressMonitor& monitor) {
  if (dae_) return dae_->advanceTo(tout, x, monitor);
  Impl& d = *impl_;
  if (!d.initialized) throw Error("CvodesIntegrator::advanceTo called before initialize");
  checkOutputTime("CvodesIntegrator", tout, d.t);
  if (advanceWithoutSteps(tout, d.nx, d.t, d.xLast, x, monitor)) return;

  void* mem = d.mem.get();
  d.advanced = true;
  // The callbacks see the monitor while CVode() runs (Cancel within a step); never afterwards.
  struct MonitorScope {
    Impl& d;
    ~MonitorScope() { d.monitor = nullptr; }
  } scope{d};
  d.monitor = &monitor;
  try {
    double tn = d.t;
    sundials::check<Api>(CVodeGetCurrentTime(mem, &tn), "CVodeGetCurrentTime");
    d.recovered = {};
    long stepsHere = 0, stalledSteps = 0;
    StepGrowthWatch growth;
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
      d.callsThisStep = 0;
      d.nonFiniteIteratesThisStep = 0;
      int flag = 0;
      {
        const BlockLengthScope blocks(d.augmented ? d.nx : 0);
        flag = CVode(mem, tout, d.y.get(), &tn, CV_ONE_STEP);
      }
      if (flag < 0) d.throwCvodeFailure(flag);
      if (d.record.kind != CallbackRecord::Kind::None) d.recovered = d.record;
      d.checkAcceptedStep(tPrevious, tn);
      ++stepsHere;
      if (double h = 0; CVodeGetLastStep(mem, &h) == CV_SUCCESS &&
                        growth.hopeless(h, tn, tout, d.options.maxSteps - stepsHere)) {
        d.throwFailure("too much work: after " + std::to_string(stepsHere) +
                       " steps the step size no longer grows (largest of the last " +
                       std::to_string(StepGrowthWatch::kWindow) + ": " +
                       num(growth.largestStep(), 3) + "), and reaching t = " + num(tout) +
                       " would take about " + num((tout - tn) / growth.largestStep(), 2) +
                       " more, beyond maxSteps = " + std::to_string(d.options.maxSteps));
      }
      // Steps below the resolution of t (CVODES only warns "t + h = t") leave t where it is
      // while x keeps moving: typically a blow-up. Stop instead of burning maxSteps.
      stalledSteps = tn == tPrevious ? stalledSteps + 1 : 0;
      if (d.stepCallback) {
        Impl::Dense dense;
        dense.impl = &d;
        d.stepCallback(tPrevious, tn, dense);
      }
      tPrevious = tn;
      if (stalledSteps >= sundials::kMaxStalledSteps) {
        const std::string stall =
            "t + h = t for " + std::to_string(stalledSteps) + " consecutive steps";
        d.throwFailure(d.recovered.kind != CallbackRecord::Kind::None
                           ? plain(d.recovered, *d.model) + "; CVODES cut the step size until " +
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
    sundials::copySensitivities(d.ySOut, d.nx, d.sLast.data());
  }
  d.t = tout;
  x = d.xLast;
}

void CvodesIntegrator::setStopTime(double tStop) {
  if (dae_) return dae_->setStopTime(tStop);
  Impl& d = *impl_;
  if (!d.initialized) throw Error("CvodesIntegrator::setStopTime called before initialize");
  checkStopTime("CvodesIntegrator", tStop, d.t);
  if (d.mem) sundials::call<Api>(Api::setStopTime, d.mem.get(), tStop);
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
  checkSensitivityRequest("CvodesIntegrator", d.model->np(), d.nx, paramIndices, s0);
  const auto n = static_cast<std::size_t>(d.nx);
  const std::size_t ns = paramIndices.size();
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
  d.pbar = sensitivityScales(d.p, paramIndices);
  if (d.options.sensitivityCorrector == SensitivityCorrector::Augmented) {
    d.enableAugmented(s0, errorControl);
    return;
  }

  SUNContext ctx = d.ctx.get();
  d.yS.create(ns, static_cast<sunindextype>(n), ctx);
  d.ySOut.create(ns, static_cast<sunindextype>(n), ctx);
  for (std::size_t j = 0; j < ns; ++j) {
    std::copy(s0.begin() + static_cast<std::ptrdiff_t>(j * n),
              s0.begin() + static_cast<std::ptrdiff_t>((j + 1) * n), d.yS.values(j));
  }
  d.sensMethod =
      d.options.sensitivityCorrector == SensitivityCorrector::Simultaneous ? CV_SIMULTANEOUS
                                                                           : CV_STAGGERED;
  void* mem = d.mem.get();
  sundials::check<Api>(
      CVodeSensInit(mem, static_cast<int>(ns), d.sensMethod, &Impl::sensRhs, d.yS.data()),
      "CVodeSensInit");
  sundials::setSensitivityTolerances<Api>(mem, d.pbar.data(), errorControl);
}

void CvodesIntegrator::sensitivities(std::vector<double>& s) const {
  if (dae_) return dae_->sensitivities(s);
  if (!impl_->sensEnabled) {
    throw Error("CvodesIntegrator::sensitivities called without enableSensitivities");
  }
  s = impl_->sLast;
}

}  // namespace sensode::integrators
