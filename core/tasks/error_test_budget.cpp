// SPDX-License-Identifier: MIT
#include "core/tasks/error_test_budget.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common/format.h"

namespace sensode::tasks::detail {

ErrorTestOverBudget::ErrorTestOverBudget(double t, long steps, long statesOnlySteps,
                                         double tCheck, long recentSteps,
                                         long recentStatesOnlySteps)
    : std::runtime_error(
          "with the sensitivities in the error test the integrator took " +
          std::to_string(steps) + " steps to t = " + shortNumber(t) + " where the states alone " +
          "take " + std::to_string(statesOnlySteps) +
          (recentSteps < steps ? " (from t = " + shortNumber(tCheck) + " on " +
                            std::to_string(recentSteps) + " against " +
                            std::to_string(recentStatesOnlySteps) + ")"
                      : std::string())),
      t_(t),
      steps_(steps),
      statesOnlySteps_(statesOnlySteps) {}

struct ErrorTestBudget::State {
  StatesOnlySteps statesOnlySteps;
  long nextCheck = 0;
  double maxRatio = 0;
  long steps = 0;
  long stepsAtCheck = 0, aloneAtCheck = 0;  // at the last check passed (at tAtCheck)
  double tAtCheck = 0;
  double lastT = -std::numeric_limits<double>::infinity();
  bool watching = true;
};

ErrorTestBudget::ErrorTestBudget(StatesOnlySteps statesOnlySteps, long firstCheck,
                                 double maxRatio)
    : state_(std::make_shared<State>()) {
  state_->statesOnlySteps = std::move(statesOnlySteps);
  state_->nextCheck = firstCheck;
  state_->maxRatio = maxRatio;
}

ProgressMonitor ErrorTestBudget::watch(const ProgressMonitor& inner) const {
  ProgressMonitor watched;
  watched.token = inner.token;
  watched.callback = [state = state_, callback = inner.callback](const ProgressInfo& info) {
    if (info.t > state->lastT) {
      // The first call only marks where the run starts.
      if (std::isfinite(state->lastT)) ++state->steps;
      state->lastT = info.t;
    }
    if (state->watching && state->steps >= state->nextCheck) {
      const long alone = state->statesOnlySteps(info.t);
      if (alone < 0) {
        state->watching = false;
      } else {
        // Over budget in all (the run so far) or since the last check: the ratio in all lags
        // where the states settle and S keeps the steps small (Lang: 2.3x at t = 406, 4.2x at
        // t = 1015, 8.3x at t = 1624, while between the last two checks it was 364x).
        const auto ratio = [](long ofRun, long ofStates) {
          return static_cast<double>(ofRun) / static_cast<double>(std::max(ofStates, 1L));
        };
        if (ratio(state->steps, alone) > state->maxRatio ||
            ratio(state->steps - state->stepsAtCheck, alone - state->aloneAtCheck) >
                2 * state->maxRatio) {
          throw ErrorTestOverBudget(info.t, state->steps, alone, state->tAtCheck,
                                    state->steps - state->stepsAtCheck,
                                    alone - state->aloneAtCheck);
        }
        state->stepsAtCheck = state->steps;
        state->aloneAtCheck = alone;
        state->tAtCheck = info.t;
        state->nextCheck *= 2;
      }
    }
    return callback ? callback(info) : Decision::Continue;
  };
  return watched;
}

double ErrorTestBudget::tightenedRtol(double rtol) {
  return std::min(rtol, std::max(rtol * 1e-3, 1e-12));
}

}  // namespace sensode::tasks::detail
