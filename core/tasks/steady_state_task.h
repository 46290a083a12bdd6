// SPDX-License-Identifier: MIT
// The Steady state task: Problem (model, parameter overrides, outputs), Options (the solver's,
// core/steadystate/steady_state_solver.h) and Result (the steady state with its diagnostics:
// which path found it and why a fallback happened, iterations and steps, the conservation laws,
// cond(J_r), eigenvalues/stability, dx*/dθ and output sensitivities, or the plain-language reason
// when there is no steady state).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/common/progress.h"
#include "core/steadystate/steady_state_solver.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/time_course_task.h"

namespace sensode::tasks {

struct SteadyStateProblem {
  std::shared_ptr<const symbolic::CompiledModel> model;
  // Parameter overrides by id, as TimeCourseProblem::overrides.
  std::vector<std::pair<std::string, double>> overrides;
  // Output ids to report (empty = every species, then every non-constant quantity).
  std::vector<std::string> outputs;
};

using SteadyStateOptions = steadystate::SteadyStateOptions;

struct SteadyStateResult {
  // Success when a steady state was found. NoSteadyState when there is none (solution.reason
  // says why); InvalidInput / UserAbort / IntegrationFailure as for the other tasks.
  enum class Status { Success, NoSteadyState, InvalidInput, UserAbort, Failure };
  Status status = Status::Success;
  std::string message;  // empty on success; one line otherwise

  steadystate::SteadyStateSolution solution;
  std::vector<std::string> stateIds;       // nx full-state ids (rows of solution.state)
  std::vector<std::string> parameterIds;   // np parameter ids (columns of the sensitivities)
  std::vector<double> parameters;          // θ used (np)
  std::vector<std::string> columns;        // ny output ids
  std::vector<double> values;              // ny output values at x*
  // d(output)/dθ at x* (ny × np, row-major), empty when the state sensitivities are.
  std::vector<double> outputSensitivities;
  double wallSeconds = 0;
};
const char* toString(SteadyStateResult::Status s);

SteadyStateResult runSteadyState(const SteadyStateProblem& problem,
                                 const SteadyStateOptions& options,
                                 const ProgressMonitor& monitor = {});

}  // namespace sensode::tasks
