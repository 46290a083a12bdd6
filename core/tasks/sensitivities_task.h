// SPDX-License-Identifier: MIT
// The Parameter sensitivities task: S(t) = ∂x(t)/∂p and the output sensitivities dy/dp at the
// output times, by one of five methods behind one Problem / Options / Result triple, so that
// they can be compared side by side:
//
//   odesd   odeSD's staggered direct sensitivities (NUMERICS.md §3), through
//           Integrator::enableSensitivities of makeIntegrator(Method::OdeSd)
//   cvodes  CVODES forward sensitivities (CVodeSensInit, analytic Ṡ = J·S + ∂f/∂p, staggered
//           or simultaneous corrector, S in the error test unless errorControl is off)
//   pbsr    Peano–Baker series with refinement (NUMERICS.md §7.2) on the state trajectory of
//           the `trajectory` integrator
//   exp     the exponential (Magnus-1, midpoint) formula (§7.3–7.4) on that trajectory
//   fd      central finite differences of the whole pipeline at tight tolerance: the
//           independent check (2 simulations per parameter)
//
// Models with events: every method runs through the simulation driver (core/simulation), S
// jumping at each execution (sensitivity_jumps.h); pbsr/exp restart on each event interval with
// the jumped S.
//
// Parameters are any ParamVars of the model (global and local "<reaction>.<id>" parameters,
// species initial values, compartment sizes, stoichiometries); S starts from
// S0 = ∂x0/∂p (CompiledModel::initialSensitivity, which follows initial assignments). Outputs are
// those of the time course (species in SBML units, forced amounts/concentrations, assignment-rule
// variables, reaction rates on request); their sensitivities follow from the chain rule
// dy/dp = ∂y/∂x·S + ∂y/∂p (FD differentiates y directly).
//
// An output with no value at an output time (0/0 in its own formula, undefined_outputs.h) is NaN
// there with NaN sensitivities, and listed in SensitivityResult::undefinedOutputs.
//
// Scaled sensitivities are COPASI's (p/y)·dy/dp. Where |y| ≤ guard (guard = integrator.atol:
// below it y is not resolved and the ratio is noise or ±inf) the scaled value is reported as 0
// and flagged in SensitivityResult::guarded.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/sensitivity/finite_differences.h"
#include "core/sensitivity/peano_baker.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/time_course_task.h"

namespace sensode::tasks {

enum class SensitivityMethod { OdeSd, Cvodes, Pbsr, Exp, FiniteDifferences };
// "odesd", "cvodes", "pbsr", "exp", "fd"
const char* toString(SensitivityMethod m);
std::optional<SensitivityMethod> sensitivityMethodFromString(const std::string& s);

struct SensitivityProblem {
  std::shared_ptr<const symbolic::CompiledModel> model;
  double t0 = 0;
  std::vector<double> times;  // output times, ascending, all >= t0 (t0 itself allowed)
  // Parameter overrides by id, as in TimeCourseProblem (the point p where S is evaluated).
  std::vector<std::pair<std::string, double>> overrides;
  // Parameter ids to differentiate against, in the order wanted (empty = every parameter of the
  // model). Unknown or repeated ids are an InvalidInput error naming the id.
  std::vector<std::string> parameters;
  // Output ids (empty = the time course's default: every species, then every time-varying
  // quantity) and forced amount / concentration reporting, as in TimeCourseProblem.
  std::vector<std::string> outputs;
  std::vector<std::string> forceAmount, forceConcentration;
};

struct SensitivityOptions {
  SensitivityMethod method = SensitivityMethod::OdeSd;  // the CLI's default too
  // Tolerances etc. of the integration (odesd, cvodes; the state trajectory of pbsr/exp).
  // cvodes: integrator.sensitivityCorrector chooses the staggered (default), simultaneous or
  // augmented corrector; odesd: integrator.handoverCorrector that of its BDF hand-over (default
  // augmented).
  integrators::IntegratorOptions integrator;
  // Report (p/y)·dy/dp instead of dy/dp.
  bool scaled = false;
  // odesd/cvodes: include S in the local error test (CVODES errconS; weights rtol·|S| + atol/|p̄|).
  bool errorControl = true;
  // odesd (the default method) with errorControl: when S in the error test costs over 8× the steps
  // of the states alone, repeat the run with the states' error test at a 1000× tighter rtol and
  // say so in stats.fallbacks (error_test_budget.h). Off: S stays in the test whatever it costs.
  bool errorTestBudget = true;
  // pbsr/exp: the integrator that computes the state trajectory (its grid and dense output).
  integrators::Method trajectory = integrators::Method::Cvodes;
  // pbsr/exp: refinement rule, switch and midpoint (NUMERICS.md §7); `method` is set from
  // SensitivityOptions::method.
  sensitivity::PeanoBakerOptions peanoBaker;
  // fd: the step and formulas of sensitivity/finite_differences.h: δ_k = fdRelativeStep·scale_k
  // with scale_k = |p_k|, or for parameters that set initial values the size their states
  // reach when that is larger; central differences (one-sided where p ± δ would change the sign
  // of p), Richardson-extrapolated unless fdRichardson is off; p = 0 with no scale adapts δ.
  // Why 1e-4 and not cbrt(machine epsilon) = 6e-6: that is optimal only when y is exact to
  // rounding; an integrated y carries noise ~(10…100)·rtol that does not cancel between the runs
  // (their step sequences differ) and that the difference amplifies by 1/δ. Measured (plain
  // central differences): δ = 6e-6 left errors of 1e-5…2e-3 even at fdRtol 1e-12 (suite 00001,
  // Boehm); δ = 1e-3 reached 1e-6 there but 3e-3 on the repressilator (truncation δ²·S''', S
  // growing secularly); δ = 1e-4 at fdRtol 1e-12: 1e-9…1e-7 on the suite cases and PEtab models
  // of tst_sensitivities, 1e-7…3e-7 on MM, Robertson and Chua, 3e-5 on the repressilator.
  // Oscillators need smaller steps (Borghans: 2e-2 at 1e-4) — or the extrapolation, which
  // cancels that δ² term. Where p is the threshold of a piecewise switch, the difference
  // includes the jump that the analytic sensitivities omit (Brannmark's insulin_time_1).
  double fdRelativeStep = 1e-4;
  bool fdRichardson = true;
  // fd: every simulation runs at rtol = min(integrator.rtol, fdRtol), atol = min(integrator.atol,
  // fdAtol) (fdAtol tiny, so that tiny states and parameters are resolved relatively).
  double fdRtol = 1e-12;
  double fdAtol = 1e-20;

  std::optional<std::string> validate() const;
  bool operator==(const SensitivityOptions&) const = default;
};

struct SensitivityStats {
  // odesd/cvodes: the integration with sensitivities; pbsr/exp: the state-trajectory
  // integration (one pass: step grid and dense-output states through its step callback);
  // fd: all simulations summed (1 + 4 per parameter with Richardson, 1 + 2 without).
  integrators::IntegratorStats integrator;
  // odesd/cvodes: sensitivity right-hand-side evaluations (IntegratorStats::sensitivityRhsEvals);
  // pbsr/exp: (J, ∂f/∂p) pair evaluations; fd: right-hand sides of the perturbed simulations.
  long sensitivityEvals = 0;
  sensitivity::PeanoBakerStats peanoBaker;  // pbsr/exp only
  long simulations = 0;                      // integrations run
  // fd: per differentiated parameter, the step used (δ, its scale, the formula).
  std::vector<sensitivity::FiniteDifferenceStep> fdSteps;
  // What the task did instead of failing (another method, another step, ...), one sentence
  // each; integrator.fallbacks holds the integrator's own. Empty when it ran as asked.
  std::vector<std::string> fallbacks;
  // The states' rtol and the error control of the run whose results are reported: the options'
  // own, unless the error-test budget (error_test_budget.h) repeated the run with the states
  // alone in the test at a tighter rtol. 0 / true when no odesd/cvodes chain ran.
  double rtolUsed = 0;
  bool errorControlUsed = true;
  bool operator==(const SensitivityStats&) const = default;
};

struct SensitivityResult {
  std::vector<double> times;              // nt output times
  std::vector<std::string> outputIds;     // ny reported outputs
  std::vector<std::string> parameterIds;  // np parameters, in the order differentiated
  std::vector<double> parameterValues;    // their values in the run (after overrides)
  std::vector<std::string> stateIds;      // nx states of the model
  // dy/dp ((p/y)·dy/dp when `scaled`), shape nt × ny × np, row-major: the derivative of output
  // iy with respect to parameter ip at time it is values[(it·ny + iy)·np + ip].
  std::vector<double> values;
  bool scaled = false;
  // Scaled only: nt × ny, row-major; 1 where |y| ≤ guard (= integrator.atol), whose scaled
  // values are reported as 0. guardedCount = number of such (time, output) pairs.
  std::vector<std::uint8_t> guarded;
  long guardedCount = 0;
  // ny × np, row-major: 1 where the parameter cannot move the output at all (it reaches no
  // state or expression the output depends on; sensitivity/structural_influence.h), so dy/dp is
  // exactly 0 whatever a method returns there. Empty when the model's coupling is not all in
  // its right-hand sides (events, delays, algebraic rules): then nothing is known.
  std::vector<std::uint8_t> unreached;
  std::vector<double> outputValues;  // y, nt × ny, row-major (the trajectory of the outputs)
  std::vector<double> states;        // x, nt × nx, row-major
  // ∂x/∂p (never scaled), nt × nx × np, row-major: stateSensitivities[(it·nx + ix)·np + ip].
  std::vector<double> stateSensitivities;
  SensitivityStats stats;
  // Models with events (odesd, cvodes, pbsr, exp): the times events changed the state, each once,
  // with the ids executed there (as TimeCourseResult::eventTimes / eventIds).
  std::vector<double> eventTimes;
  std::vector<std::string> eventIds;
  // Outputs with no value at some output times (time course's undefinedOutputs); their values
  // and sensitivities are NaN there (scaled too).
  std::vector<UndefinedOutput> undefinedOutputs;
  double wallSeconds = 0;
  Termination termination = Termination::Success;
  std::string message;  // empty on success; otherwise one line saying what happened
  // On failure: the technical detail behind `message` (which evaluator entry, which solver
  // flag, what was tried), for a details pane; `message` stays in a modeller's words.
  std::string details;

  double at(std::size_t it, std::size_t iy, std::size_t ip) const {
    return values[(it * outputIds.size() + iy) * parameterIds.size() + ip];
  }
  double stateAt(std::size_t it, std::size_t ix, std::size_t ip) const {
    return stateSensitivities[(it * stateIds.size() + ix) * parameterIds.size() + ip];
  }
  double outputAt(std::size_t it, std::size_t iy) const {
    return outputValues[it * outputIds.size() + iy];
  }
};

// Runs the task. Errors become result.termination/message (details: the technical cause); the
// times computed before a failure are kept. method odesd (the default) falls back to CVODES
// forward sensitivities (the configured corrector, then the augmented system), then to finite
// differences, each fallback a sentence in stats.fallbacks; only when all fail is the result a
// failure.
SensitivityResult runSensitivities(const SensitivityProblem& problem,
                                   const SensitivityOptions& options,
                                   const ProgressMonitor& monitor = {});

}  // namespace sensode::tasks
