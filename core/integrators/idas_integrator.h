// SPDX-License-Identifier: MIT
// IDAS (SUNDIALS 6) behind the Integrator interface, for the differential-algebraic systems that
// algebraic rules and fast reactions give (OdeSystem::isDae(), docs/dae.md). The residual is
//
//   F(t, x, ẋ) = D·ẋ − f(t, x, p),   D = diag(1 for differential states, 0 for algebraic ones),
//
// so the rows of an algebraic state are −g, its constraint. The iteration matrix IDAS needs,
// ∂F/∂x + c_j·∂F/∂ẋ = c_j·D − J, comes from the compiled model's exact sparse J (dense LU for
// at most IntegratorOptions::kDenseLimit states, KLU otherwise, as CvodesIntegrator chooses).
//
// Consistent initial values: IDACalcIC (IDA_YA_YDP_INIT: the algebraic states and the
// derivatives of the differential ones, the differential states fixed) at the first advanceTo()
// after initialize(), so also after every restart of the event driver. At t0 the compiled
// model's initial state is consistent already (dae_consistency.h).
//
// Forward sensitivities (IDASensInit, IDA_STAGGERED or IDA_SIMULTANEOUS as
// IntegratorOptions::sensitivityCorrector says; Augmented maps to simultaneous): the exact
// residual F_s = D·ṡ − J·s − ∂f/∂p per column; IDACalcIC makes them consistent too. Tolerances
// as CVODES's: rtol and atol/p̄_k (IDASensEEtolerances).
//
// advanceTo() takes IDA_ONE_STEP steps until it passes tout and interpolates with IDAGetDky
// (IDAGetSensDky for S); the step callback's dense output is IDAGetDky on the step just taken.
// Callbacks never throw into C (positive code for a non-finite value, negative otherwise); the
// failure message names the state or constraint.
#pragma once

#include <memory>
#include <vector>

#include "core/integrators/integrator.h"

namespace sensode::integrators {

class IdasIntegrator final : public Integrator {
 public:
  IdasIntegrator();
  ~IdasIntegrator() override;
  IdasIntegrator(const IdasIntegrator&) = delete;
  IdasIntegrator& operator=(const IdasIntegrator&) = delete;

  void initialize(std::shared_ptr<const symbolic::CompiledModel> model,
                  const IntegratorOptions& options, double t0, const std::vector<double>& x0,
                  const std::vector<double>& p) override;
  void advanceTo(double tout, std::vector<double>& x, const ProgressMonitor& monitor) override;
  void enableSensitivities(const std::vector<int>& paramIndices, const std::vector<double>& s0,
                           bool errorControl) override;
  void sensitivities(std::vector<double>& s) const override;
  void setStepCallback(StepCallback callback) override;
  double currentTime() const override;
  const IntegratorStats& stats() const override;
  // IDAS is not one of the methods a user chooses: it runs when the model needs it, in place of
  // the requested one (which method() reports; stats().fallbacks says IDAS ran).
  Method method() const override { return requested_; }
  void setRequestedMethod(Method m) { requested_ = m; }

  // As CvodesIntegrator::setStopTime (IDASetStopTime).
  void setStopTime(double tStop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Method requested_ = Method::Cvodes;
};

// For Integrator implementations that cannot integrate a differential-algebraic system: an
// IdasIntegrator when `model` is one (with the sentence for stats().fallbacks naming `method`
// and what makes the model a DAE), else null.
std::unique_ptr<IdasIntegrator> idasInsteadOf(Method method,
                                              const symbolic::CompiledModel& model);

// The sentence: "<model construct> make the model differential-algebraic; IDAS integrated it
// instead of <method>".
std::string daeFallbackSentence(const symbolic::OdeSystem& system, const std::string& method);

}  // namespace sensode::integrators
