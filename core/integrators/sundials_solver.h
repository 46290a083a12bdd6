// SPDX-License-Identifier: MIT
// The SUNDIALS layer CVODES and IDAS share: one table per solver (CvodeApi, IdaApi) names the
// solver's functions, and the templates below drive either through it: the options every run
// sets (step limits, per-state tolerances, stop time), the linear solver and Jacobian, the error
// handler that captures SUNDIALS's messages (never printed), where the solver stands for a
// failure message ("CVODES failed at t = … (step size …): cause"), and the statistics common to
// both. Each template makes the SUNDIALS calls the integrators made before, in the same order,
// so the numbers do not change.
//
// Internal to core/integrators (it includes the SUNDIALS headers).
#pragma once

#include <cmath>
#include <string>
#include <utility>

#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/integrators/integrator.h"
#include "core/integrators/sundials_handles.h"

namespace sensode::integrators::sundials {

// A SUNDIALS function and its name (for the set-up failure message).
template <class Fn>
struct Named {
  Fn fn;
  const char* name;
};

// Consecutive steps that leave t unchanged (t + h = t) before an integrator gives up: the
// solution is typically blowing up, and SUNDIALS only warns. Ten, as CVODES's own count of
// such warnings (mxhnil); odeSD stops at the first. A smooth solution gets its step back within
// a step or two (CVODES may grow h tenfold a step), and a transient too fast for t's resolution
// cannot be followed anyway. It was 100: in Crauste's fits some 770 LM trial points of 20
// starts blow the solution up just before t = 28 (quadratic terms), odeSD, its CVODES takeover
// and the CVODES run from t0 all fail there, and these failures cost twice the time of the
// ~3900 evaluations that succeed; with 10 they cost 17 % less, the same fits.
constexpr long kMaxStalledSteps = 10;

// One-line cause for a failed CVode() / IDASolve() / IDACalcIC() flag, in a modeller's words.
const char* describeCvodeFlag(int flag);
const char* describeIdaFlag(int flag);

struct CvodeApi {
  static constexpr const char* solver = "CVODES";
  static constexpr int success = CV_SUCCESS;
  static constexpr int warning = CV_WARNING;
  static constexpr auto returnFlagName = &CVodeGetReturnFlagName;
  static constexpr auto describe = &describeCvodeFlag;
  static constexpr Named setErrHandlerFn{&CVodeSetErrHandlerFn, "CVodeSetErrHandlerFn"};
  static constexpr Named setUserData{&CVodeSetUserData, "CVodeSetUserData"};
  static constexpr Named setMaxNumSteps{&CVodeSetMaxNumSteps, "CVodeSetMaxNumSteps"};
  static constexpr Named setMaxStep{&CVodeSetMaxStep, "CVodeSetMaxStep"};
  static constexpr Named setInitStep{&CVodeSetInitStep, "CVodeSetInitStep"};
  static constexpr Named setStopTime{&CVodeSetStopTime, "CVodeSetStopTime"};
  static constexpr Named svTolerances{&CVodeSVtolerances, "CVodeSVtolerances"};
  static constexpr Named setLinearSolver{&CVodeSetLinearSolver, "CVodeSetLinearSolver"};
  static constexpr Named setJacFn{&CVodeSetJacFn, "CVodeSetJacFn"};
  static constexpr Named setSensParams{&CVodeSetSensParams, "CVodeSetSensParams"};
  static constexpr Named sensEEtolerances{&CVodeSensEEtolerances, "CVodeSensEEtolerances"};
  static constexpr Named setSensErrCon{&CVodeSetSensErrCon, "CVodeSetSensErrCon"};
  static constexpr auto getCurrentTime = &CVodeGetCurrentTime;
  static constexpr auto getCurrentStep = &CVodeGetCurrentStep;
  static constexpr auto getLastStep = &CVodeGetLastStep;
  static constexpr auto getNumSteps = &CVodeGetNumSteps;
  static constexpr auto getNumRhsEvals = &CVodeGetNumRhsEvals;  // f evaluations
  static constexpr auto getNumJacEvals = &CVodeGetNumJacEvals;
  static constexpr auto getNumLinSolvSetups = &CVodeGetNumLinSolvSetups;
  static constexpr auto getNumNonlinSolvIters = &CVodeGetNumNonlinSolvIters;
  static constexpr auto getNumNonlinSolvConvFails = &CVodeGetNumNonlinSolvConvFails;
  static constexpr auto getNumErrTestFails = &CVodeGetNumErrTestFails;
  static constexpr auto getSensNumRhsEvals = &CVodeGetSensNumRhsEvals;
  static constexpr auto getSensNumErrTestFails = &CVodeGetSensNumErrTestFails;
};

struct IdaApi {
  static constexpr const char* solver = "IDAS";
  static constexpr int success = IDA_SUCCESS;
  static constexpr int warning = IDA_WARNING;
  static constexpr auto returnFlagName = &IDAGetReturnFlagName;
  static constexpr auto describe = &describeIdaFlag;
  static constexpr Named setErrHandlerFn{&IDASetErrHandlerFn, "IDASetErrHandlerFn"};
  static constexpr Named setUserData{&IDASetUserData, "IDASetUserData"};
  static constexpr Named setMaxNumSteps{&IDASetMaxNumSteps, "IDASetMaxNumSteps"};
  static constexpr Named setMaxStep{&IDASetMaxStep, "IDASetMaxStep"};
  static constexpr Named setInitStep{&IDASetInitStep, "IDASetInitStep"};
  static constexpr Named setStopTime{&IDASetStopTime, "IDASetStopTime"};
  static constexpr Named svTolerances{&IDASVtolerances, "IDASVtolerances"};
  static constexpr Named setLinearSolver{&IDASetLinearSolver, "IDASetLinearSolver"};
  static constexpr Named setJacFn{&IDASetJacFn, "IDASetJacFn"};
  static constexpr Named setSensParams{&IDASetSensParams, "IDASetSensParams"};
  static constexpr Named sensEEtolerances{&IDASensEEtolerances, "IDASensEEtolerances"};
  static constexpr Named setSensErrCon{&IDASetSensErrCon, "IDASetSensErrCon"};
  static constexpr auto getCurrentTime = &IDAGetCurrentTime;
  static constexpr auto getCurrentStep = &IDAGetCurrentStep;
  static constexpr auto getLastStep = &IDAGetLastStep;
  static constexpr auto getNumSteps = &IDAGetNumSteps;
  static constexpr auto getNumRhsEvals = &IDAGetNumResEvals;  // residual evaluations
  static constexpr auto getNumJacEvals = &IDAGetNumJacEvals;
  static constexpr auto getNumLinSolvSetups = &IDAGetNumLinSolvSetups;
  static constexpr auto getNumNonlinSolvIters = &IDAGetNumNonlinSolvIters;
  static constexpr auto getNumNonlinSolvConvFails = &IDAGetNumNonlinSolvConvFails;
  static constexpr auto getNumErrTestFails = &IDAGetNumErrTestFails;
  static constexpr auto getSensNumRhsEvals = &IDAGetSensNumResEvals;
  static constexpr auto getSensNumErrTestFails = &IDAGetSensNumErrTestFails;
};

// The solver's name of a return flag ("CV_CONV_FAILURE", "IDA_ERR_FAIL"); SUNDIALS returns a
// malloc'ed string, copied and freed here.
template <class Api>
std::string flagName(int flag) {
  char* name = Api::returnFlagName(flag);
  if (name == nullptr) return "flag " + std::to_string(flag);
  std::string s(name);
  std::free(name);
  return s;
}

// Throws sensode::Error naming the SUNDIALS function and the flag when flag < 0: for set-up
// calls; failures of the integration itself become IntegrationFailure (throwFailure).
template <class Api>
void check(int flag, const char* function) {
  if (flag < 0) {
    throw Error(std::string("SUNDIALS call ") + function + " failed: " + flagName<Api>(flag));
  }
}

// Calls a named SUNDIALS set-up function and checks its flag.
template <class Api, class Fn, class... Args>
void call(const Named<Fn>& f, Args&&... args) {
  check<Api>(f.fn(std::forward<Args>(args)...), f.name);
}

// The error handler's target: SUNDIALS's last error message (warnings such as "t + h = t" are
// not errors by themselves and are dropped). Installed first on every solver memory, so no
// message is printed.
template <class Api>
void captureMessage(int errorCode, const char* /*module*/, const char* /*function*/, char* msg,
                    void* sink) {
  if (errorCode == Api::warning) return;
  try {
    *static_cast<std::string*>(sink) = msg != nullptr ? msg : "";
  } catch (...) {
    // out of memory while copying a message: nothing sensible left to do
  }
}
template <class Api>
void installMessageSink(void* mem, std::string* sink) {
  call<Api>(Api::setErrHandlerFn, mem, &captureMessage<Api>, sink);
}

// Step limits from the options: maxSteps, and the maximum and initial step size when set.
template <class Api>
void setStepLimits(void* mem, const IntegratorOptions& options) {
  call<Api>(Api::setMaxNumSteps, mem, options.maxSteps);
  if (std::isfinite(options.maxStepSize)) call<Api>(Api::setMaxStep, mem, options.maxStepSize);
  if (options.initialStepSize > 0) call<Api>(Api::setInitStep, mem, options.initialStepSize);
}

// The linear solver (dense or KLU, sundials_linear_system.h) and the analytic Jacobian.
template <class Api, class JacFn>
void attachLinearSolver(void* mem, SUNLinearSolver ls, SUNMatrix A, JacFn jac) {
  call<Api>(Api::setLinearSolver, mem, ls, A);
  call<Api>(Api::setJacFn, mem, jac);
}

// Forward sensitivity tolerances: SUNDIALS's estimated ones with p̄_k (rtol and atol/p̄_k), and
// S in the local error test when errorControl.
template <class Api>
void setSensitivityTolerances(void* mem, double* pbar, bool errorControl) {
  call<Api>(Api::setSensParams, mem, nullptr, pbar, nullptr);
  call<Api>(Api::sensEEtolerances, mem);
  call<Api>(Api::setSensErrCon, mem, errorControl ? SUNTRUE : SUNFALSE);
}

// Time and step size where the solver stands now (for failure messages); (tFallback, 0) without
// memory.
template <class Api>
std::pair<double, double> where(void* mem, double tFallback) {
  double tn = tFallback, h = 0;
  if (mem != nullptr) {
    Api::getCurrentTime(mem, &tn);
    Api::getCurrentStep(mem, &h);
    if (h == 0) Api::getLastStep(mem, &h);
  }
  return {tn, h};
}

// "CVODES failed at t = … (step size …): <cause in plain words>", the technical detail (the
// callback's evaluator entry, SUNDIALS's flag and message) in details().
template <class Api>
[[noreturn]] void throwFailure(void* mem, double tFallback, const std::string& cause,
                               const std::string& details = {}) {
  const auto [tn, h] = where<Api>(mem, tFallback);
  throw IntegrationFailure(std::string(Api::solver) + " failed at t = " + preciseNumber(tn) +
                               " (step size " + preciseNumber(h, 3) + "): " + cause,
                           tn, h, details);
}

// "CV_CONV_FAILURE: <SUNDIALS's message>" for IntegrationFailure::details().
template <class Api>
std::string flagDetails(int flag, const std::string& message) {
  std::string details = flagName<Api>(flag);
  if (!message.empty()) details += ": " + message;
  return details;
}

// Steps, f (IDAS: residual) evaluations, Jacobian evaluations, LU set-ups, Newton iterations,
// convergence and error-test failures into `stats`; the sensitivities' evaluations and error-test
// failures too when `sensitivities`. Counters the solver cannot give keep their value.
template <class Api>
void collectStats(void* mem, IntegratorStats& stats, bool sensitivities) {
  long v = 0;
  if (Api::getNumSteps(mem, &v) == Api::success) stats.steps = v;
  if (Api::getNumRhsEvals(mem, &v) == Api::success) stats.rhsEvals = v;
  if (Api::getNumJacEvals(mem, &v) == Api::success) stats.jacEvals = v;
  if (Api::getNumLinSolvSetups(mem, &v) == Api::success) stats.luFactorizations = v;
  if (Api::getNumNonlinSolvIters(mem, &v) == Api::success) stats.newtonIterations = v;
  if (Api::getNumNonlinSolvConvFails(mem, &v) == Api::success) stats.newtonFailures = v;
  if (Api::getNumErrTestFails(mem, &v) == Api::success) stats.errorTestFailures = v;
  if (!sensitivities) return;
  if (Api::getSensNumRhsEvals(mem, &v) == Api::success) stats.sensitivityRhsEvals = v;
  if (Api::getSensNumErrTestFails(mem, &v) == Api::success) stats.sensitivityErrorTestFailures = v;
}

// A new SUNContext (no MPI communicator).
inline ContextPtr newContext() {
  SUNContext ctx = nullptr;
  check<CvodeApi>(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  return ContextPtr(ctx);
}

// Runs `body` for a C callback: an exception becomes the owner's recorded cause
// (self->recordException) and the fatal -1, since C code must not see it.
template <class Self, class Body>
int guarded(Self* self, double tt, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    self->recordException(tt, e.what());
  } catch (...) {
    self->recordException(tt, "unknown exception");
  }
  return -1;
}

}  // namespace sensode::integrators::sundials
