// SPDX-License-Identifier: MIT
// Outputs with no value at a reported time (issue 30): Laske's F_rnp_nuc =
// 100·RNP_nuc/(RNP_nuc + RNP_cyt) is 0/0 at t = 0, where every species it reads is 0. No method can
// give a number there (the limit along the trajectory is not a property of the formula), and
// COPASI and libRoadRunner show NaN; since only a person reads the value, the run goes on and
// the result lists the output with its times, its formula and the values it reads
// (tasks::UndefinedOutput), for the CLI's warning and --stats and the GUI's status line.
//
// Only a non-finite value computed from finite inputs is listed: a value the model makes
// non-finite on purpose — a parameter set to INF or NaN (SBML Test Suite case 00951), a constant
// formula such as INF or NaN (cases 00950, 01811, 01813) — is reported as it is, without a word.
// A right-hand side that is not finite where an output is undefined (the undefined rule drives a
// reaction) still stops the run, naming the output and the state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/symbolic/compiled_model.h"
#include "core/tasks/task_common.h"
#include "core/tasks/time_course_task.h"

namespace sensode::tasks::detail {

// The undefined outputs of one run, in the order they were first met.
class UndefinedOutputLog {
 public:
  explicit UndefinedOutputLog(const symbolic::CompiledModel& model) : model_(model) {}

  // For a non-finite `value` of output `column` at time t (states x, parameters p): lists
  // (column, t) and returns true when every state and parameter its formula reads is finite;
  // returns false for a value the model states itself. Throws InvalidInput naming the output and
  // the state when the right-hand side is not finite at (t, x) either.
  bool note(const OutputColumn& column, double t, const double* x, const double* p, double value);

  // Every value of a result laid out nt × columns (values) with states nt × nx; `undefined`
  // (when given) gets nt × columns flags, 1 where a value was listed.
  void noteAll(const std::vector<OutputColumn>& columns, const std::vector<double>& times,
               const std::vector<double>& states, const std::vector<double>& p,
               const std::vector<double>& values, std::vector<std::uint8_t>* undefined = nullptr);

  const std::vector<UndefinedOutput>& entries() const { return entries_; }
  std::vector<UndefinedOutput> take() { return std::move(entries_); }

 private:
  const symbolic::CompiledModel& model_;
  std::vector<UndefinedOutput> entries_;
  std::vector<double> f_;  // scratch for the right-hand side
};

}  // namespace sensode::tasks::detail
