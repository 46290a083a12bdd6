// SPDX-License-Identifier: MIT
// The sensitivity methods of the sensitivities task, each on a prepared Setup: direct (odeSD,
// CVODES forward), Peano–Baker (PBSR, Exp), finite differences, and the default method's chain of
// fallbacks. Internal to core/tasks (namespace detail); sensitivities_task.cpp prepares the Setup
// and finishes the result.
#pragma once

#include <memory>
#include <vector>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/task_common.h"

namespace sensode::tasks::detail {

// Everything the methods share: the problem resolved against the model.
struct Setup {
  std::shared_ptr<const symbolic::CompiledModel> model;
  const SensitivityProblem* problem = nullptr;
  const SensitivityOptions* options = nullptr;
  const ProgressMonitor* monitor = nullptr;
  std::vector<OutputColumn> columns;
  std::vector<double> p;
  std::vector<int> params;
  std::vector<double> x0, s0;
  double t0 = 0, tEnd = 0;
};

// odeSD direct or CVODES forward: the integrator computes S with the states (one run; restarts
// at events and at parameter-dependent switches of the right-hand side).
void runDirect(const Setup& s, integrators::Method method, SensitivityResult& result);

// PBSR / Exp: the Peano–Baker propagator along the trajectory of options.trajectory.
void runPeanoBaker(const Setup& s, SensitivityMethod method, SensitivityResult& result);

// Central finite differences of the whole pipeline (sensitivity/finite_differences.h).
void runFiniteDifferences(const Setup& s, SensitivityResult& result);

// The default method: odeSD direct sensitivities, falling back to CVODES forward, the augmented
// system and finite differences; with a step budget on S in the error test
// (error_test_budget.h). Every fallback taken is a sentence in result.stats.fallbacks.
void runWithFallbacks(const Setup& s, SensitivityResult& result);

}  // namespace sensode::tasks::detail
