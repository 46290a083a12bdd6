// SPDX-License-Identifier: MIT
// CVODES (SUNDIALS 6) behind the Integrator interface: variable-order BDF with Newton iteration,
// the exact sparse Jacobian of the CompiledModel, and KLU sparse LU (or dense LU for systems of
// at most IntegratorOptions::kDenseLimit states). Scalar rtol/atol.
//
// advanceTo() takes single internal steps (CV_ONE_STEP) until the step passes tout, then
// interpolates x(tout) from CVODES's Nordsieck history (CVodeGetDky). Between steps it checks the
// ProgressMonitor, counts steps against IntegratorOptions::maxSteps ("too much work"), and stops
// when sundials::kMaxStalledSteps (10) consecutive steps leave t unchanged (t + h = t: typically
// a blow-up, which CVODES itself only warns about).
//
// The right-hand side and Jacobian callbacks never throw into C: a non-finite value makes them
// return a positive (recoverable) code so CVODES cuts the step, and the first bad entry (state
// id, time) is recorded; any other error returns a negative code. When CVode() fails, the
// recorded cause or CVODES's own message (captured by an error handler, never printed) goes into
// an IntegrationFailure together with time and step size.
//
// Forward sensitivities: the CVODES forward module (staggered or simultaneous corrector), or the
// augmented mode (SensitivityCorrector::Augmented: plain CVODE on [x; S] as one vector with a
// block-diagonal Newton matrix; see enableSensitivities in the .cpp).
//
// SUNDIALS types stay in the .cpp (pimpl), so including this header does not need SUNDIALS.
#pragma once

#include <memory>
#include <vector>

#include "core/integrators/integrator.h"
#include "core/integrators/idas_integrator.h"

namespace sensode::integrators {

class CvodesIntegrator final : public Integrator {
 public:
  CvodesIntegrator();
  ~CvodesIntegrator() override;
  CvodesIntegrator(const CvodesIntegrator&) = delete;
  CvodesIntegrator& operator=(const CvodesIntegrator&) = delete;

  void initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                  const IntegratorOptions& options, double t0, const std::vector<double>& x0,
                  const std::vector<double>& p) override;
  void advanceTo(double tout, std::vector<double>& x, const ProgressMonitor& monitor) override;
  void enableSensitivities(const std::vector<int>& paramIndices, const std::vector<double>& s0,
                           bool errorControl) override;
  void sensitivities(std::vector<double>& s) const override;
  // Called after every CV_ONE_STEP step; its dense output is CVodeGetDky.
  void setStepCallback(StepCallback callback) override;
  double currentTime() const override;
  const IntegratorStats& stats() const override;
  Method method() const override { return Method::Cvodes; }

  // Steps never pass tStop and land exactly on it (CVodeSetStopTime): for a discontinuity of the
  // right-hand side at a known time, which a step must not straddle, and for odeSD's bridges,
  // which stop at an output time. Call after initialize() (and after enableSensitivities, which
  // may rebuild the memory); the integration cannot continue past tStop.
  void setStopTime(double tStop);
  // True when initialize() chose the sparse (KLU) linear solver.
  bool usesSparseSolver() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  // A differential-algebraic model (algebraic rules, fast reactions) is integrated by IDAS,
  // to which every call is forwarded; stats().fallbacks says so. Null for ODE models.
  std::unique_ptr<IdasIntegrator> dae_;
};

}  // namespace sensode::integrators
