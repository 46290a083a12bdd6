// SPDX-License-Identifier: MIT
// A step budget for sensitivities in the local error test (internal to core/tasks).
//
// With S in the error test (CVodeSetSensErrCon, AMICI's and our default) the step size is set by
// whichever of x and S is hardest to integrate. On most models that costs 1–5× the steps of the
// states alone (the corpus median is 2.4×). On a few it costs orders of magnitude: Lang (124
// states × 445 parameters) with S in the test was unfinished after 20 min in odeSD and in CVODES
// forward, where the states' test alone at a 1000× tighter rtol integrates the whole span in
// 13097 steps and 48 s; on t = 0–2000 it was 11469 steps against 1002 with the states alone, and
// the tighter run's sensitivities were the more accurate (docs/benchmarks/corpus.md). The
// difference comes from sensitivities w.r.t. compartment sizes and initial amounts.
//
// The budget watches a run with S in the test, counting its steps. At 2000 steps, and at every
// doubling after, it integrates the states alone (same method and tolerances) to the run's
// current time; when the run has taken more than `maxRatio` times those steps, or more than
// 2·maxRatio times them since the last check, it throws ErrorTestOverBudget, and the sensitivity
// task repeats the run with the states' error test at a tightened rtol. Runs under 2000 steps — every corpus model but two — are never probed, so the
// rule costs them nothing and changes none of their results.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/common/progress.h"

namespace sensode::tasks::detail {

// Thrown out of the watched run (through the integrator's progress check) when it is over budget.
class ErrorTestOverBudget : public std::runtime_error {
 public:
  // what() says it in a modeller's words: the counts to t, and since the last check (at tCheck).
  ErrorTestOverBudget(double t, long steps, long statesOnlySteps, double tCheck, long recentSteps,
                      long recentStatesOnlySteps);
  double t() const { return t_; }
  long steps() const { return steps_; }                    // the watched run's, to t
  long statesOnlySteps() const { return statesOnlySteps_; }  // the states alone, to t

 private:
  double t_;
  long steps_, statesOnlySteps_;
};

class ErrorTestBudget {
 public:
  // Steps the states alone take from the run's start to tUntil; a negative answer (the states
  // alone failed) ends the watch: there is nothing to compare with.
  using StatesOnlySteps = std::function<long(double tUntil)>;

  static constexpr long kFirstCheck = 2000;
  // Tightening rtol 1000× costs odeSD 2–3× the steps of the states alone at the requested rtol
  // (Lang: 2039 against 1002 on t = 0–2000; 13097 against 4753 over the whole span): the switch
  // pays from about 3×, and 8× leaves a margin that no corpus model but the two slow ones reaches.
  static constexpr double kMaxRatio = 8;

  explicit ErrorTestBudget(StatesOnlySteps statesOnlySteps, long firstCheck = kFirstCheck,
                           double maxRatio = kMaxRatio);

  // `inner` with the budget's check in front of its callback. Steps are counted as the calls in
  // which t advanced (integrators check once per accepted step).
  ProgressMonitor watch(const ProgressMonitor& inner) const;

  // The rtol the repeated run uses: 1000× tighter, not below 1e-12.
  static double tightenedRtol(double rtol);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace sensode::tasks::detail
