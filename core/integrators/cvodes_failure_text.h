// SPDX-License-Identifier: MIT
// What went wrong inside one of CVODES's callbacks (CallbackRecord), and the sentences that say
// it: plain() in a modeller's words for IntegrationFailure::what(), describe() with the
// evaluator's entry for details(). Split out of the CVODES integrator's state
// (cvodes_integrator_impl.h), which records the problems; internal to core/integrators.
#pragma once

#include <string>

#include "core/symbolic/compiled_model.h"

namespace sensode::integrators::cvodes_detail {

// The step guard's bound on model evaluations within one CVode(CV_ONE_STEP) call (see
// CvodesIntegrator::Impl::guardInputs). A step tries at most maxncf + maxnef = 17 times per
// corrector, the staggered sensitivity corrector restarting the states' up to
// 1 + maxncfS + maxnefS = 18 times, with at most 8 evaluations per attempt (3 Newton iterations,
// again with a fresh Jacobian): about 2500 calls. SUNDIALS 6.4's Newton solver loops without end
// once the step size is NaN (SUNNonlinSolSolve_Newton retries while cvLsSetup, comparing a NaN γ
// ratio, never marks the Jacobian current), evaluating f each time.
constexpr long kMaxCallbacksPerStep = 20000;

// What went wrong inside a callback, recorded for the exception thrown after CVode() returns.
struct CallbackRecord {
  enum class Kind {
    None,
    NonFiniteRhs,
    NonFiniteJacobian,
    NonFiniteParamJacobian,   // ∂f/∂p entry (row = state, col = model parameter index)
    NonFiniteSensitivityRhs,  // Ṡ entry (row = state, col = model parameter index)
    NonFiniteState,           // a state CVODES passed in is ±inf or NaN (row = state, value)
    NonFiniteTime,            // CVODES evaluated at a time that is not a number (step size NaN)
    NoProgress,               // kMaxCallbacksPerStep evaluations within one step
    Cancelled,                // the monitor's token was set during a step
    Exception
  };
  Kind kind = Kind::None;
  int row = -1, col = -1;  // state index (f), Jacobian entry (row, col), or (state, parameter)
  double t = 0;
  double value = 0;  // NonFiniteState: the state's value
  std::string what;  // Exception: what()
};

// "'S1'" (a state's id in quotes), "#7" for an index outside the model.
std::string stateLabel(const symbolic::CompiledModel& model, int i);
// "'k1'" (a parameter's id in quotes), "#7" for an index outside the model.
std::string parameterLabel(const symbolic::CompiledModel& model, int k);

// The cause in a modeller's words ("the rate of change of 'S1' is not a finite number at t = 2").
std::string plain(const CallbackRecord& record, const symbolic::CompiledModel& model);
// The cause with the evaluator's entry ("non-finite value in f for state 'S1' at t = 2").
std::string describe(const CallbackRecord& record, const symbolic::CompiledModel& model);

}  // namespace sensode::integrators::cvodes_detail
