// SPDX-License-Identifier: MIT
// Steady states x* with f(x*, p) = 0 (NUMERICS.md §8): the conservation-reduced system
// (§8.2, core/symbolic/reduced_system.h) is solved by damped Newton with a sparse LU of
// J_r = ∂f_r/∂x_I (§8.3), with simulation (CVODES BDF to t = 10, 100, 1000, ...) as the fallback
// or, on request, the other way round. Convergence is the weighted criterion of Lakrisenko et al.
// (PLoS Comput Biol 2023, Eq. 3)
//
//     ‖ẋ‖_w = sqrt( (1/n) Σ (ẋ_i w_i)² ) < 1,   w_i = 1/(rtol·|x_i| + atol),
//
// together with the Newton-step check ‖J_r⁻¹ f_r‖_w < 1 (the criterion alone depends on the time
// unit, §10 pitfall 11; when J_r is singular, the simulation path accepts on the criterion
// alone, as §8.1 asks for the step check only "when a Jacobian is at hand"). A root with a negative species (beyond atol + rtol·max|x|) is rejected
// (pitfall 10), and so is an unstable one (an eigenvalue of J_r with positive real part: the
// trajectory leaves it, so it is not the state data "at t = ∞" describe); both can be accepted
// by option. Without a steady state the solution says why in plain words: unbounded growth,
// oscillation, a singular Jacobian, no convergence by the last simulated time.
//
// Steady-state sensitivities (§8.4): dx_I*/dθ = −J_r⁻¹ F_θ with F_θ = ∂f_r/∂θ + ∂f_r/∂T · dT/dθ,
// dT/dθ = Γ ∂x₀/∂θ, and the dependent species from S_D = −Γ_I S_I + dT/dθ. Where J_r is
// singular at x* even after the conservation reduction (condition estimate ≥ 1e14 in the
// states' units, ScaledLu: a steady state on a curve of steady states, as when a first
// integral that is not a linear conservation law fixes which one the trajectory reaches), the
// linear solve has no unique answer; the sensitivities of the steady state the trajectory
// from x₀ reaches then come from forward sensitivities integrated from (x₀, ∂x₀/∂θ) until the
// state and every sensitivity column meet the criterion (AMICI's integrateIfNewtonFails;
// SteadyStateSensitivityMethod).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseLU>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/reduced_system.h"
#include "core/steadystate/scaled_lu.h"

namespace sensode::steadystate {

// The model together with its conservation-reduced form. Reduced parameters are the full ones
// followed by one total per law ("total_<id>"); reduced states are the independent ones.
class ConservedModel {
 public:
  explicit ConservedModel(std::shared_ptr<const symbolic::CompiledModel> full);

  const symbolic::CompiledModel& full() const { return *full_; }
  const std::shared_ptr<const symbolic::CompiledModel>& fullPtr() const { return full_; }
  const symbolic::CompiledModel& reduced() const { return *reduced_; }
  const std::shared_ptr<const symbolic::CompiledModel>& reducedPtr() const { return reduced_; }
  const symbolic::ConservationAnalysis& analysis() const { return analysis_; }

  int nx() const { return full_->nx(); }      // full states
  int nr() const { return reduced_->nx(); }   // independent states
  int np() const { return full_->np(); }      // model parameters θ
  int nc() const { return analysis_.laws.count(); }  // conservation laws
  // Full-state index of each reduced state.
  const std::vector<int>& independentStates() const { return independent_; }
  // Full-state index of each law's dependent species.
  const std::vector<int>& dependentStates() const { return dependent_; }
  // Γ_I: Γ restricted to the reduced states (nc × nr), so x_D = T − Γ_I·x_I.
  const Eigen::MatrixXd& gammaIndependent() const { return gammaIndependent_; }

  // Totals T = Γ·x over the species the laws cover.
  Eigen::VectorXd totals(const std::vector<double>& xFull) const;
  // [θ, T(xFull)]: the reduced model's parameter vector.
  std::vector<double> reducedParameters(const std::vector<double>& theta,
                                        const std::vector<double>& xFull) const;
  std::vector<double> reduceState(const std::vector<double>& xFull) const;
  // x_D = T − Γ_I x_I with T the last nc() entries of pr.
  std::vector<double> expandState(const std::vector<double>& xI,
                                  const std::vector<double>& pr) const;
  // dT/dθ = Γ·dx/dθ (nc × np) from a full-state sensitivity (nx × np).
  Eigen::MatrixXd totalsSensitivity(const Eigen::MatrixXd& dxFull) const;
  // Full ∂x₀/∂θ (nx × np) at t0 = 0.
  Eigen::MatrixXd initialSensitivity(const std::vector<double>& theta) const;
  // Full-state sensitivities from reduced ones: independent rows S_I, dependent rows
  // −Γ_I S_I + dT/dθ.
  Eigen::MatrixXd expandSensitivity(const Eigen::MatrixXd& sI, const Eigen::MatrixXd& dT) const;

  // J_r at (x_I, pr), sparse nr × nr.
  Eigen::SparseMatrix<double> jacobian(const std::vector<double>& xI,
                                       const std::vector<double>& pr) const;
  // F_θ = ∂f_r/∂θ + ∂f_r/∂T · dT/dθ (nr × np), dense.
  // ∂f_r/∂[θ, T] (nr × (np + nc)), dense.
  Eigen::MatrixXd fullParamJacobian(const std::vector<double>& xI,
                                    const std::vector<double>& pr) const;
  // ∂f_r/∂T (nr × nc), dense.
  Eigen::MatrixXd totalsJacobian(const std::vector<double>& xI, const std::vector<double>& pr) const;
  Eigen::MatrixXd totalParamJacobian(const std::vector<double>& xI, const std::vector<double>& pr,
                                     const Eigen::MatrixXd& dT) const;

 private:
  std::shared_ptr<const symbolic::CompiledModel> full_, reduced_;
  symbolic::ConservationAnalysis analysis_;
  std::vector<int> independent_, dependent_;
  Eigen::MatrixXd gammaIndependent_;  // nc × nr: Γ restricted to the reduced states (0 elsewhere)
};

// Which path runs first. Auto = Newton, then simulation with Newton from each simulated state.
enum class SteadyStateMethod { Auto, Newton, Simulation };
const char* toString(SteadyStateMethod m);
std::optional<SteadyStateMethod> steadyStateMethodFromString(const std::string& s);

// What found the steady state: the first path, or the fallback after the first path failed.
enum class FoundBy { None, Newton, Simulation, Fallback };
const char* toString(FoundBy f);

// How dx*/dθ is computed (AMICI's SteadyStateSensitivityMode): Auto = the linear solve, and
// forward integration to the steady state where J_r is singular at x* (integrateIfNewtonFails);
// LinearSolve = the solve only, no sensitivities where J_r is singular (newtonOnly);
// Integration = always forward integration (integrationOnly).
enum class SteadyStateSensitivityMethod { Auto, LinearSolve, Integration };
const char* toString(SteadyStateSensitivityMethod m);

struct SteadyStateOptions {
  SteadyStateMethod method = SteadyStateMethod::Auto;
  double rtol = 1e-8;   // criterion weights w_i = 1/(rtol·|x_i| + atol)
  double atol = 1e-12;  // (Lakrisenko et al. use 1e-16; 1e-12 keeps species near 0 reachable)
  int maxNewtonIterations = 50;     // per Newton run
  double minDamping = 1.0 / 1024;   // smallest λ of the line search
  double maxSimulationTime = 1e5;   // simulate to 10, 100, ... up to this time
  bool acceptNegative = false;      // accept roots with negative species
  bool acceptUnstable = false;      // accept roots where J_r has an eigenvalue with Re > 0
  bool sensitivities = true;        // compute dx*/dθ
  SteadyStateSensitivityMethod sensitivityMethod = SteadyStateSensitivityMethod::Auto;
  // The columns of dx*/dθ (model parameter indices) the caller needs, nullopt: all. Forward
  // integration computes only these (the others stay 0): on a curve of steady states a
  // parameter that moves x* off the curve (a stimulus that is 0 during pre-equilibration) has
  // no dx*/dθ, and its sensitivity grows without end. The linear solve computes all.
  std::optional<std::vector<int>> sensitivityParameters;
  int maxEigenDimension = 2000;     // dense eigenvalues up to this many reduced states
  integrators::IntegratorOptions integrator{1e-8, 1e-12, 1000000};  // simulation (CVODES)

  std::optional<std::string> validate() const;
  bool operator==(const SteadyStateOptions&) const = default;
};

struct SteadyStateSolution {
  bool found = false;
  FoundBy foundBy = FoundBy::None;
  std::string path;            // e.g. "Newton from x0", "simulation to t = 100, then Newton"
  std::string fallbackReason;  // why the first path failed (empty when it succeeded)
  std::string reason;          // no steady state: why, in plain words
  std::vector<double> state;   // full state x* (nx), SBML state units; last iterate if !found
  std::vector<double> reducedState;  // x_I* (nr)
  std::vector<double> reducedParameters;  // [θ, T]
  double residualNorm = 0;     // ‖f_r(x*)‖_w
  double newtonStepNorm = 0;   // ‖J_r⁻¹ f_r(x*)‖_w (NaN when J_r is singular)
  int newtonIterations = 0;    // over all Newton runs
  int newtonRuns = 0;
  long simulationSteps = 0;
  double simulatedTime = 0;    // last simulated time (0 when no simulation)
  integrators::IntegratorStats integratorStats;
  std::vector<std::string> conservationLaws;  // "E + C = 1.5" (descriptions with totals)
  double conditionEstimate = 0;  // 1-norm condition estimate of J_r(x*) (inf when singular)
  // The same in the states' units (ScaledLu), the larger of J_r(x*) and J_r with the states
  // below atol set to 0: what decides "singular" (≥ 1e14).
  double scaledConditionEstimate = 0;
  std::vector<double> eigenReal, eigenImag;  // eigenvalues of J_r(x*) (empty when too large)
  double maxRealEigenvalue = 0;  // NaN when not computed
  bool stable = false;           // maxRealEigenvalue < 0
  bool negative = false;         // some species < −(atol + rtol·max|x|)
  // dx*/dθ (nx × np, column-major), empty when not computed; sensitivityMessage says why.
  Eigen::MatrixXd sensitivities;
  std::string sensitivityMessage;
  // Set when dx*/dθ came from forward integration instead of −J_r⁻¹F_θ: why and how far, e.g.
  // "J_r is singular at x* (condition estimate inf): dx*/dθ by forward sensitivities integrated
  // to t = 1000". Empty for the linear solve.
  std::string sensitivityFallback;
  double sensitivityIntegrationTime = 0;  // t where the integrated sensitivities converged
};

// Solves for the steady state of the model with parameters θ, starting from x₀(θ) (or from
// xStart when given: a full state, as after a time course). Throws Cancelled or InvalidOptions;
// every numerical failure ends up in the solution's reason.
// dxStart (nx × np, with xStart) is dxStart/dθ: the totals' sensitivities dT/dθ = Γ·dxStart
// then come from it instead of from ∂x₀/∂θ (post-equilibration after a pre-equilibration).
SteadyStateSolution solveSteadyState(const ConservedModel& model, const std::vector<double>& theta,
                                     const SteadyStateOptions& options,
                                     const ProgressMonitor& monitor = {},
                                     const std::vector<double>* xStart = nullptr,
                                     const Eigen::MatrixXd* dxStart = nullptr);

}  // namespace sensode::steadystate
