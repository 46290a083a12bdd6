// SPDX-License-Identifier: MIT
// Pieces the tasks share (time course, sensitivities): the InvalidInput error that becomes
// Termination::InvalidInput, output-column selection, output-time checks, the whole-run progress
// monitor and message formatting. Internal to core/tasks (namespace detail).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/common/progress.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::tasks::detail {

// A problem with the problem itself (unknown ids, bad times, non-finite initial values):
// Termination::InvalidInput.
class InvalidInput : public Error {
 public:
  using Error::Error;
};

// %.17g: reads back to the same double.
std::string exactNumber(double v);

// "a, b, c, d, e, f, g, h, ..." — the first `limit` ids, for "unknown id" messages.
template <class Range, class IdOf>
std::string firstIds(const Range& range, IdOf idOf, std::size_t limit = 8) {
  std::string s;
  std::size_t n = 0;
  for (const auto& item : range) {
    if (n == limit) return s + ", ...";
    if (n > 0) s += ", ";
    s += idOf(item);
    ++n;
  }
  return n == 0 ? std::string("none") : s;
}

// A reported output: which OutputVar, and which block of CompiledModel::outputs() (so its row
// in outputs()/outputStateJacobian()/outputParamJacobian() is block·nOutputs + index).
struct OutputColumn {
  std::string id;
  std::size_t index;  // into OdeSystem::outputs
  int block;          // 0 value (SBML semantics), 1 amount, 2 concentration
  std::size_t row(std::size_t nOutputs) const {
    return static_cast<std::size_t>(block) * nOutputs + index;
  }
};

// The columns for `outputs` (empty = every species, then every other quantity whose value
// changes in time; reaction rates only on request), with species reported as amounts or
// concentrations where forceAmount / forceConcentration say so. Throws InvalidInput naming an
// unknown id.
std::vector<OutputColumn> selectOutputColumns(const symbolic::CompiledModel& model,
                                              const std::vector<std::string>& outputs,
                                              const std::vector<std::string>& forceAmount,
                                              const std::vector<std::string>& forceConcentration);

// t0 finite; times non-empty, finite, ascending (equal neighbours allowed), none before t0.
// Throws InvalidInput naming the offending time.
void checkOutputTimes(double t0, const std::vector<double>& times);

// x0 = x(t0; p), throwing InvalidInput naming the first state with a non-finite value.
std::vector<double> initialState(const symbolic::CompiledModel& model, double t0,
                                 const std::vector<double>& p);

// A monitor that forwards to `monitor` with ProgressInfo::t and tEnd mapped so that the caller
// sees the progress of the whole task: integration number `run` of `runs`, each over
// [t0, tEnd], is reported as the fraction (run + (t − t0)/(tEnd − t0)) / runs of [t0, tEnd].
ProgressMonitor wholeRunMonitor(const ProgressMonitor& monitor, double t0, double tEnd,
                                int run = 0, int runs = 1);

// Models with fast reactions: the sentence for stats.fallbacks when a run failed with the fast
// reactions at rapid equilibrium (`failure`, its message) and succeeded with the stiff surrogate
// (CompiledModel::fastReactionSurrogate), and the clause added to the message when the
// surrogate failed too.
std::string fastReactionFallback(const std::string& failure);
std::string fastReactionRetryFailed(const std::string& failure);

// Runs `run(problem)`; when that fails with an integration failure and the model has a stiff
// surrogate for its fast reactions (which can turn degenerate during a run: a fast rate k·A
// while k = 0), runs the surrogate, which has the same parameters and outputs, and says so in
// stats.fallbacks. Result: a task result (termination, message, wallSeconds, stats.fallbacks).
template <class Problem, class Run>
auto runWithFastReactionFallback(const Problem& problem, Run run) {
  auto result = run(problem);
  using Termination = decltype(result.termination);  // tasks::Termination
  if (!problem.model) return result;
  const auto surrogate = problem.model->fastReactionSurrogate();
  if (result.termination == Termination::IntegrationFailure && surrogate) {
    Problem again = problem;
    again.model = surrogate;
    auto second = run(again);
    if (second.termination == Termination::Success) {
      second.stats.fallbacks.insert(second.stats.fallbacks.begin(),
                                    fastReactionFallback(result.message));
      second.wallSeconds += result.wallSeconds;
      result = std::move(second);
    } else {
      result.message += "; " + fastReactionRetryFailed(second.message);
    }
  }
  return result;
}

}  // namespace sensode::tasks::detail
