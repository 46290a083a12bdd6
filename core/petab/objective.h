// SPDX-License-Identifier: MIT
// The PEtab objective: the negative log-likelihood over all measurements (Lakrisenko et al.
// 2023, Eq. 7), with the estimated parameters on their PEtab scales, and its gradient.
//
//   normal noise, lin:   ½ log(2πσ²) + ½ ((m − y)/σ)²
//   log:                 ½ log(2πσ²) + ½ ((log m − log y)/σ)² + log m
//   log10:               ½ log(2πσ²) + ½ ((log10 m − log10 y)/σ)² + log(m ln 10)
//   Laplace noise:       log(2σ) + |z|/σ + the same log term, z = m − y, log m − log y or
//                        log10 m − log10 y (σ is the Laplace scale)
// plus, for estimated parameters with an objective prior, −log prior (core/petab/priors.h),
// whose gradient is always analytic (also under finite differences).
//
// Per experiment (pre-equilibration condition, simulation condition): pre-equilibration to the
// steady state x_e* under the first condition (core/steadystate), then the time course from x₀
// (= x_e*, except for the species whose initial values the simulation condition sets, or x₀(θ))
// with CVODES to the finite measurement times, and the steady state x* from x₀ for the
// measurements at t = inf (post-equilibration).
//
// Gradient methods (w.r.t. the estimated parameters on their scales):
//   Forward            forward sensitivities: CVODES (or odeSD, ObjectiveOptions::
//                      forwardIntegrator) forward sensitivities over the time course, started
//                      from ∂x₀/∂θ or from the steady-state sensitivities dx_e*/dθ of the
//                      pre-equilibration; dx*/dθ = −J_r⁻¹F_θ for steady-state data.
//   Ssasa              the adjoint method of Lakrisenko et al.: the time course by the backward
//                      adjoint (ObjectiveOptions::adjointIntegrator: odeSD's discrete adjoint,
//                      core/steadystate/odesd_adjoint_pass.h, or CVODES's adjoint with Hermite
//                      checkpoints and quadratures of λᵀf_θ, core/steadystate/
//                      adjoint_time_course.h); steady-state data by one
//                      transposed solve J_rᵀμ = (∂nll/∂x_I)ᵀ per steady state (Eq. 15); the
//                      pre-equilibration by J_r(x_e*)ᵀq = λ(t0) + (post-equilibration totals'
//                      weight) (Eq. 17). All linear systems have size n_r, independent of n_θ.
//                      When J_r is singular even after reduction, ssASA says so in the notes and
//                      falls back to the Adjoint treatment of that equilibration.
//   Adjoint            the standard adjoint: as Ssasa for the time course, but every
//                      equilibration is integrated backward too instead of Eq. 15/17, over
//                      [0, T] with T the later of the time where simulation meets the
//                      steady-state criterion and the time in which the slowest mode of J_r(x*)
//                      decays to 1e-2·rtol (λ must have decayed, not only x converged); the
//                      forward pass resolves each state to rtol relative to its steady-state
//                      value. Throws when simulation cannot reach the steady state.
//   FiniteDifferences  central differences of the objective on the parameter scale.
//
// Models with SBML events: time courses run through the event simulation driver
// (core/simulation/event_simulation.h; objective_events.cpp), forward sensitivities jump at each
// execution, and the backward adjoint crosses each event time by the adjoint jump conditions
// λ(τ⁻) = Mᵀλ(τ⁺), dJ/dθ += λ(τ⁺)ᵀB with S⁺ = M·S⁻ + B the forward jump
// (objective_event_adjoint.cpp). Where the adjoint has no jump conditions (cascades of
// executions at one time, delayed events, compartment resizes of concentration states) forward
// sensitivities compute the gradient and ObjectiveResult::fallbacks says so. Pre-equilibration
// and steady-state data (steady states do not run events) are refused with a PetabError naming
// the event, as are right-hand sides that also switch at parameter-dependent times.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/petab/petab_problem.h"
#include "core/steadystate/steady_state_solver.h"

namespace sensode::petab {

enum class GradientMethod { None, Ssasa, Adjoint, Forward, FiniteDifferences };
const char* toString(GradientMethod m);
std::optional<GradientMethod> gradientMethodFromString(const std::string& s);

struct ObjectiveOptions {
  integrators::IntegratorOptions integrator{1e-10, 1e-12, 1000000};  // time courses (CVODES)
  steadystate::SteadyStateOptions steadyState;  // pre- and post-equilibration
  double fdStep = 1e-5;  // central-difference step on the parameter scale
  int fdOrder = 2;       // 2: (J(q+h) − J(q−h))/2h; 4: the five-point formula (O(h⁴))
  // GradientMethod::Forward over time courses: CVODES forward sensitivities (staggered; in the
  // error test per sensitivityErrorControl) or odeSD's direct sensitivities (NUMERICS §3).
  // With OdeSd, an evaluation odeSD cannot complete (an IntegrationFailure, too many steps,
  // anything but a cancel or invalid options) is computed again by CVODES, and
  // ObjectiveResult::fallbacks says so in a sentence that starts with kOdeSdFallback. With
  // forward sensitivities outside the error test CVODES integrates the states alone first; when
  // they and odeSD both stall at the same time (a trial point of a fit that blows up), the
  // evaluation fails there without the run with sensitivities (detail::stopAtSharedSingularity).
  integrators::Method forwardIntegrator = integrators::Method::Cvodes;
  // GradientMethod::Adjoint and Ssasa over time courses: the discrete adjoint of odeSD's steps
  // (core/steadystate/odesd_adjoint_pass.h), or CVODES's continuous adjoint with checkpoints.
  // Where odeSD cannot do a pass, CVODES's adjoint does it and ObjectiveResult::fallbacks says so.
  integrators::Method adjointIntegrator = integrators::Method::OdeSd;
  // odeSD's step budget per output interval when it is the forward integrator (0: the
  // integrator's maxSteps): past it odeSD gives up and CVODES computes the evaluation.
  long odeSdMaxSteps = 0;
  // Forward sensitivities in the integrator's error test (CVodeSetSensErrCon) or only carried
  // along the states' steps. Off by default, measured at the default tolerances: Alkan's
  // forward gradient took > 300 s with it and 5.8 s without (agreeing with the adjoint to
  // 2e-13), and on Boehm, Weber, Brannmark, Bruno, Beer, Fujita, Zheng and Elowitz the
  // forward–adjoint difference was the same or smaller without it (Bruno 3.0e-3 → 4.3e-4,
  // Elowitz 7.4e-6 → 2.2e-7) at 10–50 % less time.
  bool sensitivityErrorControl = false;
  // GradientMethod::Forward: also keep dy/dθ and dσ/dθ per measurement
  // (ObjectiveResult::simulatedSensitivities), the residual Jacobian of least-squares
  // estimation (core/estimation).
  bool measurementSensitivities = false;
};

// A steady state the objective needed, with the solver's diagnostics (path, fallback reason,
// iterations, conservation laws, cond(J_r), eigenvalues): what the GUI shows beside the gradient.
struct EquilibrationReport {
  std::string conditionId;
  std::string role;  // "pre-equilibration" or "steady-state data"
  steadystate::SteadyStateSolution solution;  // without its sensitivities (kept small)
};

struct ObjectiveResult {
  double objective = 0;  // negative log-likelihood (with the constant terms) + priorTerm
  double priorTerm = 0;  // Σ −log prior of the estimated parameters (0 without priors)
  double halfWeightedSquares = 0;  // ½ Σ r² (the §8.5 convention without log terms)
  std::vector<std::string> parameterIds;  // estimated parameters
  std::vector<double> parameters;         // their values on their scales
  std::vector<double> gradient;           // d objective / d parameter (scale), empty for None
  // Per measurement (aligned with Problem::measurements): the simulated observable y and its
  // noise σ at the measured time, as the objective used them (NaN where not evaluated) — what
  // a modeller plots against the data and what PEtab's simulatedData tables hold.
  std::vector<double> simulated, sigma;
  // With ObjectiveOptions::measurementSensitivities and GradientMethod::Forward: d simulated /
  // d parameter (scale) and d sigma / d parameter, one row per measurement (zero where not
  // evaluated), one column per estimated parameter; empty otherwise. Without priors.
  Eigen::MatrixXd simulatedSensitivities, sigmaSensitivities;
  long simulations = 0;   // time courses run
  // The time courses' integrator counters (steps, f evaluations, ...) summed over the
  // simulations (not those of the steady states or of backward integrations).
  integrators::IntegratorStats integration;
  long steadyStates = 0;  // steady states solved
  std::string notes;      // how the gradient was computed, per part
  // What ran instead of the requested method, one sentence each (evaluateWithFallback,
  // gradient_check.h); empty when the requested method ran.
  std::vector<std::string> fallbacks;
  GradientMethod method = GradientMethod::None;  // the method that computed `gradient`
  // The integrator of the time courses (ObjectiveOptions::forwardIntegrator, or CVODES after
  // odeSD failed).
  integrators::Method integrator = integrators::Method::Cvodes;
  // The steady states of this evaluation, in the order solved (not those of finite-difference
  // neighbours or of the backward integrations' own simulations).
  std::vector<EquilibrationReport> equilibrations;
};

// How the fallback sentence of an evaluation odeSD could not do begins (ObjectiveOptions::
// forwardIntegrator): what counts these evaluations (core/estimation) looks for it.
inline constexpr const char* kOdeSdFallback = "odeSD failed";

// Indices (into Problem::parameters) of the estimated parameters, in table order.
std::vector<int> estimatedParameters(const Problem& problem);
// Nominal values of the estimated parameters on their scales.
std::vector<double> nominalScaledParameters(const Problem& problem);

// The objective (and gradient) at the estimated parameters `scaled` (on their scales). Throws
// PetabError for a feature the chosen gradient method does not cover and sensode::Error when a
// steady state or simulation fails (the message names the condition).
// Progress: the monitor's callback sees ProgressInfo{t = work units done (fractional within a
// unit), tEnd = units in all, steps = steps of the running integration}, where a unit is one
// experiment (pre-equilibration condition, simulation condition) of one objective evaluation
// (finite differences evaluate the objective 2·n_θ + 1 times, 4·n_θ + 1 with fdOrder 4). Its
// token and callback are checked at least once per integration step and Newton iteration;
// throws Cancelled then.
ObjectiveResult evaluateObjective(const Problem& problem, const std::vector<double>& scaled,
                                  GradientMethod method, const ObjectiveOptions& options = {},
                                  const ProgressMonitor& monitor = {});

}  // namespace sensode::petab
