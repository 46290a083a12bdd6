// SPDX-License-Identifier: MIT
// odeSD's public API and advanceTo's loop; the phases are in the files odesd_impl.h lists.
#include "core/integrators/absolute_tolerances.h"
#include "core/integrators/odesd_integrator.h"

#include "core/integrators/odesd_impl.h"

namespace sensode::integrators {

// =======================================================================================

OdeSdIntegrator::OdeSdIntegrator() : impl_(std::make_unique<Impl>()) {}
OdeSdIntegrator::~OdeSdIntegrator() = default;

void OdeSdIntegrator::setOdeSdOptions(const OdeSdOptions& options) { impl_->sd = options; }
const OdeSdOptions& OdeSdIntegrator::odeSdOptions() const { return impl_->sd; }

void OdeSdIntegrator::setStopTime(double tStop) {
  if (dae_) return dae_->setStopTime(tStop);
  Impl& d = *impl_;
  if (!d.initialized) throw Error("OdeSdIntegrator::setStopTime called before initialize");
  if (!(tStop >= d.t)) {
    throw InvalidOptions("OdeSdIntegrator: stop time " + num(tStop, 17) +
                         " is before the current time " + num(d.t, 17));
  }
  d.stopTime = tStop;
  if (d.bdf) d.bdf->setStopTime(tStop);
}

void OdeSdIntegrator::setLeftLimitAt(double tEnd) {
  impl_->evalTimeLimit = std::nextafter(tEnd, -kInf);
}

void OdeSdIntegrator::setStepObserver(std::function<void(const OdeSdStepInfo&)> observer) {
  impl_->observer = std::move(observer);
}

void OdeSdIntegrator::setStepCallback(StepCallback callback) {
  if (dae_) dae_->setStepCallback(callback);
  impl_->stepCallback = std::move(callback);
  if (impl_->bdf) impl_->bdf->setStepCallback(impl_->cvodesCallback());
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
  dae_ = idasInsteadOf(Method::OdeSd, *model);
  if (dae_) {
    dae_->setStepCallback(d.stepCallback);
    dae_->initialize(std::move(model), options, t0, x0, p);
    return;
  }
  if (auto problem = options.validate()) throw InvalidOptions(*problem);
  if (!(sd.newtonTolerance > 0) || !(sd.sensitivityNewtonTolerance > 0) || !(sd.maxNewtonIterations >= 1) || !(sd.zMax > 0) ||
      sd.handoverAfter < 0 || !(sd.maxNewtonFailures >= 1) || !(sd.maxErrorTestFailures >= 1) ||
      sd.maxBridges < 0 || !(sd.bridgeMinSteps >= 1) || !(sd.jacobianReuseSteps >= 1) ||
      !(sd.luReuseRatio >= 0) || !(sd.denseTolerance >= 0) || !(sd.iterateTolerance >= 0) || !(sd.failureHandoverLoad >= 0) || !(sd.failureLoadDecay > 0 && sd.failureLoadDecay < 1) || sd.stiffPredictorDegree < 2 || sd.stiffPredictorDegree > 4 ||
      !(sd.fixedStepSize >= 0) || !std::isfinite(sd.fixedStepSize)) {
    throw InvalidOptions(
        "OdeSdOptions: newtonTolerance > 0, sensitivityNewtonTolerance > 0, maxNewtonIterations >= 1, zMax > 0, handoverAfter >= "
        "0, maxNewtonFailures >= 1, maxErrorTestFailures >= 1, maxBridges >= 0, "
        "bridgeMinSteps >= 1, jacobianReuseSteps >= 1, luReuseRatio >= 0, denseTolerance >= 0, iterateTolerance >= 0, failureHandoverLoad >= 0, failureLoadDecay in (0, 1), "
        "stiffPredictorDegree in "
        "2..4 and a finite "
        "fixedStepSize >= 0 "
        "are required");
  }
  if (!std::isfinite(t0))
    throw InvalidOptions("OdeSdIntegrator: t0 = " + num(t0) + " is not finite");
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
  d.atol = absoluteTolerances(*d.model, options.atol, t0, x0, p);
  const auto n = static_cast<size_t>(nx);
  for (auto* v : {&d.f, &d.a, &d.xm1, &d.fm1, &d.am1, &d.xm2, &d.xm3, &d.xm4, &d.xPred, &d.y, &d.fy, &d.ay, &d.g,
                  &d.c, &d.w, &d.dvec, &d.f1, &d.a1, &d.gFiltered, &d.wIterate, &d.pcDiff}) {
    v->assign(n, 0.0);
  }
  d.jv.assign(static_cast<size_t>(d.model->jacobianPattern().nnz()), 0.0);
  d.jjv.assign(static_cast<size_t>(d.model->jacobianOfSecondPattern().nnz()), 0.0);
  ++d.jacobianWrites;  // jv zeroed: no ‖J‖₁ cached from an earlier run stays valid
  d.initialized = true;
  ++d.stepGeneration;  // no dense value of an earlier run is reused
  d.subStepMemo.x.assign(Impl::SubStepMemo::kEntries * static_cast<std::size_t>(nx), 0.0);
  if (nx == 0) return;
  d.buildNewtonPattern();
  // Auto: besides tiny systems, a Newton matrix whose sparse LU would save too little
  // arithmetic is factorised densely too (SparseLu::denseIsFaster), as is one at least half
  // full. J_J = (∂J/∂x)·f + J² fills W far beyond J (SalazarCavazos, 75 states: J 27 % full,
  // W 96 %), and there KLU's bookkeeping costs more than the dense LU's n³/3.
  const bool halfFull = 2.0 * d.wPattern.nnz() >= static_cast<double>(nx) * nx;
  const bool sparse =
      options.linearSolver == LinearSolverKind::Sparse ||
      (options.linearSolver == LinearSolverKind::Auto && nx > IntegratorOptions::kDenseLimit &&
       !halfFull && !detail::SparseLu::denseIsFaster(d.wPattern));
  using Backend = detail::SparseLu::Backend;
  const Backend backend = !sparse ? Backend::Dense
                          : sd.sparseBackend == OdeSdOptions::SparseBackend::Klu
                              ? Backend::Klu
                              : Backend::EigenSparse;
  d.lu.analyze(d.wPattern, backend);
  d.luDense.analyze(d.wPattern, backend);
}

void OdeSdIntegrator::enableSensitivities(const std::vector<int>& paramIndices,
                                          const std::vector<double>& s0, bool errorControl) {
  if (dae_) return dae_->enableSensitivities(paramIndices, s0, errorControl);
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
  if (dae_) return dae_->sensitivities(s);
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
  if (dae_) return dae_->advanceTo(tout, xResult, monitor);
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
      d.advanceTakenOver(tout, xResult, monitor);
    } catch (const Impl::CallbackFailure& c) {
      d.mergeStats();
      std::rethrow_exception(c.error);
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
    long stepsHere = 0;
    monitor.check({d.t, tout, d.own.steps});
    while (d.t < tout) {
      if (stepsHere >= d.options.maxSteps) {
        d.fail("too much work: " + std::to_string(stepsHere) + " steps before t = " + num(tout),
               d.t, d.hNext);
      }
      bool handedOver = false;
      try {
        if (!d.started) d.start(tout);
        if (d.step() == Impl::StepResult::Handover) {
          d.handOver();
          handedOver = true;
        }
      } catch (const IntegrationFailure& e) {
        if (d.sd.fixedStepSize > 0 || d.sd.maxBridges == 0) throw;
        handedOver = d.bridge(tout, e, monitor) == Impl::Bridged::HandedOver;
        if (!handedOver) continue;
      }
      if (handedOver) {
        d.advanceTakenOver(tout, xResult, monitor);
        d.mergeStats();
        d.tOut = tout;
        d.xOut = xResult;
        return;
      }
      ++stepsHere;
      monitor.check({d.t, tout, d.own.steps});
    }
    d.dense(tout, d.xOut.data(), d.sens ? d.sOut.data() : nullptr);
  } catch (const Impl::CallbackFailure& c) {
    d.mergeStats();
    std::rethrow_exception(c.error);  // the caller's own exception, untouched
  } catch (...) {
    d.mergeStats();
    throw;
  }
  d.mergeStats();
  d.tOut = tout;
  xResult = d.xOut;
}

double OdeSdIntegrator::currentTime() const { return dae_ ? dae_->currentTime() : impl_->tOut; }

const IntegratorStats& OdeSdIntegrator::stats() const {
  return dae_ ? dae_->stats() : impl_->merged;
}

bool OdeSdIntegrator::usesSparseSolver() const {
  return impl_->lu.backend() != detail::SparseLu::Backend::Dense;
}

bool OdeSdIntegrator::handedOver() const { return impl_->bdf != nullptr; }

}  // namespace sensode::integrators
