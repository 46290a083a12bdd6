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

// An output with no value at some output times although every quantity its formula reads is
// finite there (issue 30: Laske's F_rnp_nuc = 100·RNP_nuc/(RNP_nuc + RNP_cyt) is 0/0 at t = 0,
// where no virus has entered yet). Only a person reads such a value — the right-hand side does
// not, or the integration would have stopped — so the run succeeds with the formula's own value
// (NaN for 0/0) there, and the result lists it so that the CLI warns and the GUI says so.
struct UndefinedOutput {
  std::string id;
  std::vector<double> times;  // the output times where it has no value, ascending
  std::string formula;        // its formula with symbols by SBML id (at most ~300 characters)
  std::string reads;          // what the formula reads at the first of them: "A = 0, B = 0"
  std::string gives;          // what the formula gives there: "NaN", "INF" or "-INF"
  bool operator==(const UndefinedOutput&) const = default;
};
// One line for a warning: "'alpha' has no value at t = 0: its formula gives NaN although every
// quantity it reads is finite (A = 0, B = 0; e.g. 0/0); NaN is written there. Formula: A/(A + B)".
std::string describe(const UndefinedOutput& undefined);

// The outputs a run reports when none are chosen: every species, then every other quantity
// whose value changes in time (reaction rates only on request), by id.
std::vector<std::string> defaultOutputIds(const symbolic::OdeSystem& system);

struct TimeCourseProblem {
  std::shared_ptr<const symbolic::CompiledModel> model;
  double t0 = 0;
  std::vector<double> times;  // output times, ascending, all >= t0 (t0 itself allowed)
  // Parameter overrides by id (global "k1", local "R1.k", species initial "S1", compartment
  // "c"); unknown ids are an InvalidOptions error naming the id.
  std::vector<std::pair<std::string, double>> overrides;
  // Output ids to report, in this order (empty = defaultOutputIds): species, rule variables,
  // parameters, compartments, reactions; an unknown id is an InvalidInput error naming it.
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
  // Outputs with no value at some output times (NaN there, or ±INF for x/0), in column order.
  std::vector<UndefinedOutput> undefinedOutputs;
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
