// SPDX-License-Identifier: MIT
// The Time course task: Problem (what), Options (how), Result (data + stats + termination).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::tasks {

enum class Termination { Success, IntegrationFailure, UserAbort, InvalidInput };
const char* toString(Termination t);

struct TimeCourseProblem {
  std::shared_ptr<const symbolic::CompiledModel> model;
  double t0 = 0;
  std::vector<double> times;  // output times, ascending, all >= t0 (t0 itself allowed)
  // Parameter overrides by id (global "k1", local "R1.k", species initial "S1", compartment
  // "c"); unknown ids are an InvalidOptions error naming the id.
  std::vector<std::pair<std::string, double>> overrides;
  // Output ids to report (empty = every species, then every non-constant quantity).
  std::vector<std::string> outputs;
  // How species are reported: by SBML semantics (concentration unless hasOnlySubstanceUnits),
  // or forced amounts / concentrations for the listed ids (the test suite's settings).
  std::vector<std::string> forceAmount, forceConcentration;
  // Models with events: also two rows at every time events changed the state, the values just
  // before and just after them (as modellers plot a dose). Off: rows only at `times`.
  bool eventRows = false;
};

struct TimeCourseOptions {
  integrators::Method method = integrators::Method::OdeSd;
  integrators::IntegratorOptions integrator;
  std::optional<std::string> validate() const { return integrator.validate(); }
  bool operator==(const TimeCourseOptions&) const = default;
};

struct TimeCourseResult {
  std::vector<double> times;          // nt
  std::vector<std::string> columns;   // ny output ids
  std::vector<double> values;         // nt × ny, row-major
  integrators::IntegratorStats stats;
  double wallSeconds = 0;
  Termination termination = Termination::Success;
  std::string message;  // empty on success; otherwise one line saying what happened
  // On failure: the technical detail behind `message` (which evaluator entry, which solver
  // flag, what was tried), for a details pane; `message` stays in a modeller's words.
  std::string details;
  // Times at which events changed the state (models with events; each time once), and the ids
  // of the events executed at each ("dose" or "reset, dose").
  std::vector<double> eventTimes;
  std::vector<std::string> eventIds;
  double at(std::size_t row, std::size_t col) const { return values[row * columns.size() + col]; }
};

// Resolves overrides into a parameter vector (throws InvalidOptions naming an unknown id).
std::vector<double> resolveParameters(const symbolic::CompiledModel& model,
                                      const std::vector<std::pair<std::string, double>>& overrides);

// Runs the task. Errors become result.termination/message (details: the technical cause) with
// the partial trajectory kept. When odeSD fails, the run is computed again with CVODES BDF and
// stats.fallbacks says so; only when both fail is the result a failure.
TimeCourseResult runTimeCourse(const TimeCourseProblem& problem, const TimeCourseOptions& options,
                               const ProgressMonitor& monitor = {});

}  // namespace sensode::tasks
