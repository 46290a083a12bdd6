// SPDX-License-Identifier: MIT
// The default sensitivity method's fallbacks (sensitivity_runs.h).
#include <memory>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/simulation/event_simulation.h"
#include "core/tasks/error_test_budget.h"
#include "core/tasks/sensitivity_runs.h"

namespace sensode::tasks::detail {
namespace {

// The failure's technical detail, or its message when it has none.
std::string detailOf(const IntegrationFailure& e) {
  return e.details().empty() ? std::string(e.what()) : e.details();
}

// A failed attempt's data and statistics go; the sentences of earlier fallbacks stay.
void clearForRetry(SensitivityResult& result) {
  std::vector<std::string> fallbacks = std::move(result.stats.fallbacks);
  result.times.clear();
  result.outputValues.clear();
  result.values.clear();
  result.states.clear();
  result.stateSensitivities.clear();
  result.eventTimes.clear();
  result.eventIds.clear();
  result.stats = {};
  result.stats.fallbacks = std::move(fallbacks);
}

// Steps the states alone take with `method` from the run's start to tUntil, or −1 when they fail
// (the probe of detail::ErrorTestBudget).
long statesOnlySteps(const Setup& s, integrators::Method method, double tUntil) {
  const ProgressMonitor tokenOnly{s.monitor->token, {}};
  try {
    if (simulation::needsSimulationDriver(s.model->system())) {
      simulation::EventSimulation sim(s.model, method, s.options->integrator);
      sim.run(s.t0, s.x0, s.p, {tUntil}, [](double, const double*) {}, tokenOnly);
      return sim.stats().steps;
    }
    std::unique_ptr<integrators::Integrator> integrator = integrators::makeIntegrator(method);
    integrator->initialize(s.model, s.options->integrator, s.t0, s.x0, s.p);
    std::vector<double> x;
    integrator->advanceTo(tUntil, x, tokenOnly);
    return integrator->stats().steps;
  } catch (const IntegrationFailure&) {
    return -1;
  }
}

// runDirect; with S in the error test, under a step budget (detail::ErrorTestBudget), which
// throws detail::ErrorTestOverBudget when S makes the steps many times those of the states alone.
void runWatched(const Setup& s, integrators::Method method, SensitivityResult& result) {
  if (!s.options->errorControl || !s.options->errorTestBudget) {
    runDirect(s, method, result);
    return;
  }
  const detail::ErrorTestBudget budget(
      [&s, method](double t) { return statesOnlySteps(s, method, t); });
  const ProgressMonitor watched = budget.watch(*s.monitor);
  Setup w = s;
  w.monitor = &watched;
  runDirect(w, method, result);
}

// The default method never fails where another succeeds: odeSD direct sensitivities, else CVODES
// forward sensitivities (the same integration by BDF: needs f, J and ∂f/∂p only, not ẍ, J_J and
// ∂ẍ/∂p; the configured corrector, then the augmented system), else central finite differences
// of CVODES time courses (needs no derivative of the model at all: where ∂f/∂p is not finite at
// a single point, both direct methods stop at that point). Every method that failed is one sentence in
// stats.fallbacks; the result (data and statistics) is that of the method that succeeded.
void runChain(const Setup& s, SensitivityResult& result) {
  std::string odeSdFailure, odeSdDetails;
  try {
    runWatched(s, integrators::Method::OdeSd, result);
    return;
  } catch (const IntegrationFailure& e) {
    odeSdFailure = e.what();
    odeSdDetails = detailOf(e);
  }
  clearForRetry(result);
  std::string cvodesFailure, cvodesDetails;
  try {
    runWatched(s, integrators::Method::Cvodes, result);
    result.stats.fallbacks.push_back("odeSD direct sensitivities failed (" + odeSdFailure +
                                     "); computed with CVODES forward sensitivities instead");
    return;
  } catch (const IntegrationFailure& e) {
    cvodesFailure = e.what();
    cvodesDetails = detailOf(e);
  }
  // The staggered and simultaneous correctors test S's error apart from x's, with tolerances
  // atol/|p̄_k|: on BIOMD0000000013 (atol 1e-12) the staggered error test failed repeatedly at
  // t = 0.045 where the augmented system (one error norm over [x; S]) integrates to the end.
  if (s.options->integrator.sensitivityCorrector != integrators::SensitivityCorrector::Augmented) {
    clearForRetry(result);
    SensitivityOptions augmented = *s.options;
    augmented.integrator.sensitivityCorrector = integrators::SensitivityCorrector::Augmented;
    Setup retry = s;
    retry.options = &augmented;
    try {
      runWatched(retry, integrators::Method::Cvodes, result);
      result.stats.fallbacks.push_back(
          "odeSD direct sensitivities failed (" + odeSdFailure + ") and so did CVODES forward "
          "sensitivities (" + cvodesFailure + "); computed by CVODES on the augmented system "
          "[x; S] instead");
      return;
    } catch (const IntegrationFailure& e) {
      cvodesFailure += "; on the augmented system: " + std::string(e.what());
      cvodesDetails += "; augmented: " + detailOf(e);
    }
  }
  clearForRetry(result);
  try {
    runFiniteDifferences(s, result);
  } catch (const IntegrationFailure& e) {
    throw IntegrationFailure(odeSdFailure + "; CVODES forward sensitivities, tried instead, failed "
                                            "too: " + cvodesFailure +
                                 "; and so did finite differences: " + e.what(),
                             e.t(), e.stepSize(),
                             "odeSD: " + odeSdDetails + "; CVODES: " + cvodesDetails +
                                 "; finite differences: " + detailOf(e));
  }
  result.stats.fallbacks.push_back(
      "odeSD direct sensitivities failed (" + odeSdFailure + ") and so did CVODES forward "
      "sensitivities (" + cvodesFailure + "); computed by finite differences instead (" +
      std::to_string(result.stats.simulations) + " simulations at rtol " +
      shortNumber(std::min(s.options->integrator.rtol, s.options->fdRtol)) + ")");
}

}  // namespace

// The chain above, and again with the states' error test alone at a tightened rtol when S in the
// error test costs too many steps (error_test_budget.h says why and when).
void runWithFallbacks(const Setup& s, SensitivityResult& result) {
  try {
    runChain(s, result);
    result.stats.rtolUsed = s.options->integrator.rtol;
    result.stats.errorControlUsed = s.options->errorControl;
    return;
  } catch (const detail::ErrorTestOverBudget& e) {
    clearForRetry(result);
    SensitivityOptions statesOnly = *s.options;
    statesOnly.errorControl = false;
    statesOnly.integrator.rtol = detail::ErrorTestBudget::tightenedRtol(s.options->integrator.rtol);
    Setup retry = s;
    retry.options = &statesOnly;
    runChain(retry, result);
    result.stats.rtolUsed = statesOnly.integrator.rtol;
    result.stats.errorControlUsed = false;
    result.stats.fallbacks.insert(
        result.stats.fallbacks.begin(),
        std::string(e.what()) +
            "; the sensitivities were computed with the states alone in the error test at rtol " +
            shortNumber(statesOnly.integrator.rtol) + " (tighter than the " +
            shortNumber(s.options->integrator.rtol) + " asked for) instead");
  }
}

}  // namespace sensode::tasks::detail
