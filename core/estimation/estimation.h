// SPDX-License-Identifier: MIT
// The Parameter estimation task: fit the estimated parameters of a PEtab problem to its
// measurements by minimising the PEtab objective (core/petab/objective.h, the negative
// log-likelihood with priors) on the parameters' scales (lin/log/log10) within their bounds.
//
//   Problem  the PEtab problem (yaml file); each worker thread loads its own copy, because an
//            objective evaluation differentiates formulas in the model's shared ExprPool.
//   Options  the parameters to estimate with bounds, scales and start values (defaulted from the
//            PEtab parameter table by defaultParameters()), the optimiser, multistart (starts,
//            seed, threads), the gradient method and the parameters to profile.
//   Result   every start (start point, final point, objective, iterations, evaluations, wall
//            time, status), sorted by objective; the best fit with its simulated observables;
//            the statistics at the optimum (Fisher information, covariance, standard errors,
//            correlations, Wald confidence intervals, FIM eigenvalues, χ², residual summaries);
//            the profile likelihoods.
//
// Optimisers (docs/estimation.md says why these):
//   LeastSquares  bounded Levenberg–Marquardt (least_squares.cpp) on the weighted residuals
//                 r = (m − y)/σ and their exact Jacobian from forward sensitivities.
//                 Estimated noise parameters enter as the extra residuals √(2 log σ + c) (so
//                 that ½Σ of their squares is Σ log σ plus a constant), normal priors as
//                 (v − μ)/σ_prior. At every iteration the parameters on a bound with the
//                 gradient pushing outwards are held there and the step solved for the rest.
//   QuasiNewton   NLopt's bounded L-BFGS on the objective and its gradient (any gradient method:
//                 forward, adjoint, ssASA, finite differences): for objectives that are not
//                 sums of squares (Laplace noise, non-normal priors).
//   Auto          LeastSquares when the objective is a sum of squares as above, else
//                 QuasiNewton; EstimationResult::optimizerReason says which and why.
//
// Multistart: start 0 at the start values (when useStartValues), the others a Latin hypercube
// in the bounds on the parameter scale from `seed` (the same seed gives the same starts and,
// for deterministic integrations, the same fits whatever the thread count), or chosen by a global
// phase: with `screen` the best of a larger Latin hypercube by objective value, with scatter
// search the best mutually distant points of an enhanced scatter search.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "core/common/progress.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"

namespace sensode::estimation {

enum class Optimizer { Auto, LeastSquares, QuasiNewton };
const char* toString(Optimizer o);  // "auto", "ls", "qn"
std::optional<Optimizer> optimizerFromString(const std::string& s);

// How the sampled starts are chosen (the global phase before the local optimisations):
//   Screen         the best of a Latin hypercube `screen` times larger, by objective
//                  (start_screen.h);
//   ScatterSearch  enhanced scatter search on objective values (scatter_search.h), its best
//                  mutually distant points;
//   None           the Latin hypercube itself.
enum class GlobalPhase { Screen, ScatterSearch, None };
const char* toString(GlobalPhase g);  // "screen", "ess", "none"
std::optional<GlobalPhase> globalPhaseFromString(const std::string& s);

// One estimated parameter of the PEtab table. Values and bounds are on its scale.
struct EstimatedParameter {
  std::string id;
  petab::Scale scale = petab::Scale::Lin;
  double lower = 0, upper = 0;  // bounds on the scale (finite)
  double start = 0;             // start value on the scale (the nominal value by default)
  // false: held at `start` (the PEtab table estimates it, this fit does not).
  bool estimate = true;
  bool operator==(const EstimatedParameter&) const = default;
};

// The PEtab table's estimated parameters, in table order, with its scales and bounds and the
// nominal values as start values. Throws petab::PetabError when a bound is not finite (or not
// > 0 under log scales): a multistart needs a box.
std::vector<EstimatedParameter> defaultParameters(const petab::Problem& problem);

struct EstimationProblem {
  std::filesystem::path yamlFile;
  bool operator==(const EstimationProblem&) const = default;
};

struct EstimationOptions {
  // Empty: defaultParameters() of the problem. Otherwise exactly the PEtab table's estimated
  // parameters (any order); ids not in the table are refused with InvalidInput.
  std::vector<EstimatedParameter> parameters;
  Optimizer optimizer = Optimizer::Auto;
  int starts = 20;         // local optimisations (>= 1)
  std::uint64_t seed = 1;  // of the Latin hypercube
  // Start 0 at the parameters' start values; false: every start from the Latin hypercube.
  bool useStartValues = true;
  // Start selection by a global screen (start_screen.h): 0 samples the Latin-hypercube starts
  // directly; K > 0 evaluates the objective alone at K × (Latin-hypercube starts) candidate
  // points (their own Latin hypercube from `seed`) and starts from the best of them. 50 by
  // default: on the benchmark (docs/benchmarks/estimation.md, 2026-11-26 third run) it lowered
  // the best objective or the cost on six of seven problems for 1–5 s of screening.
  int screen = 50;
  // Screen with screen = 0 is None. Screen by default: the scatter search did better on
  // Elowitz, Brannmark, Boehm and Bruno but put all 20 of Crauste's starts into one basin
  // 101 above the fit (docs/benchmarks/estimation.md, 2026-11-26 global phase).
  GlobalPhase global = GlobalPhase::Screen;
  // Objective evaluations of the scatter search; 0: 1000 per estimated parameter.
  long globalEvaluations = 0;
  // Local optimisations inside the scatter search every K generations (eSS's local phase, as
  // many as threads at a time, at most 100 iterations each; their objective and Jacobian
  // evaluations count towards globalEvaluations); 0: none.
  int globalLocalEvery = 0;
  // The best `polish` starts (with objectives more than 1e-3 apart: one per optimum) are
  // continued at tighter tolerances (polish.h); 0: none. 2 by default (the same run: Zheng's
  // best −288.02 → −292.03, Crauste's 190.9733 → 190.9691).
  int polish = 2;
  // A start that stalls (StartStatus::Stalled) continues by its optimiser at rtol and atol / 100,
  // and when it stalls again lower, at / 10⁴ (not below rtol 1e-12; polish.h: on
  // Fujita_SciSignal2010 the stalls are the objective's integration error at rtol 1e-8).
  bool continueStalled = true;
  // Gradient of the QuasiNewton objective (the LeastSquares Jacobian always comes from forward
  // sensitivities). With Forward, a failing evaluation falls back as evaluateWithFallback does.
  petab::GradientMethod gradient = petab::GradientMethod::Forward;
  petab::ObjectiveOptions objective = defaultObjectiveOptions();
  int threads = 0;  // worker threads for the starts; 0: std::thread::hardware_concurrency()
  int maxIterations = 500;         // per local optimisation
  double functionTolerance = 1e-8;   // relative change of the objective that ends a start
  double parameterTolerance = 1e-8;  // relative step that ends a start
  double gradientTolerance = 1e-6;   // projected-gradient max-norm that ends a start
  // Least squares: geodesic acceleration of the Levenberg–Marquardt steps
  // (core/estimation/geodesic_acceleration.h). Off: on the benchmark it cost twice the objective
  // evaluations, did not shorten Crauste's crawl (bounds, not curvature) and lost Boehm's
  // acceptance (docs/benchmarks/estimation.md, sixth run).
  bool geodesicAcceleration = false;
  // Profile likelihoods of these parameter ids (each must be estimated).
  std::vector<std::string> profileParameters;
  double confidenceLevel = 0.95;  // of the Wald intervals and the profile threshold
  int profileMaxPoints = 40;      // per direction
  double profileMaxStep = 0.2;    // largest step along a profile, on the parameter scale

  // Looser than the objective's own defaults (1e-10/1e-12, set for gradient comparisons):
  // an optimiser needs ~1e-8 agreement of objective and gradient, and spends hundreds of
  // evaluations. At most 1e4 steps per output interval (AMICI's default; the objective's is
  // 1e6): far from the optimum a start's trial point can make a model so stiff that one
  // evaluation takes minutes, and such a point is only a rejected step.
  static petab::ObjectiveOptions defaultObjectiveOptions() {
    petab::ObjectiveOptions o;
    o.integrator.rtol = 1e-8;
    o.integrator.atol = 1e-10;
    o.integrator.maxSteps = 10000;
    // odeSD's direct forward sensitivities (CVODES where odeSD fails, evaluation by
    // evaluation): docs/benchmarks/forward-gradient.md.
    o.forwardIntegrator = integrators::Method::OdeSd;
    return o;
  }
  // Why the options cannot run ("EstimationOptions::starts = 0. Violated constraint: starts >=
  // 1"), or nullopt.
  std::optional<std::string> validate() const;
};

// Stalled: the optimiser found no decrease even along the (damped) steepest descent while the
// projected gradient was above its tolerance — the objective's integration noise hides the
// remaining descent, or the region is rough. Not counted as converged.
enum class StartStatus { Converged, MaxIterations, Failed, Cancelled, Stalled };
const char* toString(StartStatus s);

struct StartResult {
  int index = 0;                    // position in the sampled sequence (0 = first start)
  // Start point, on the scales (one per EstimatedParameter): the sampled one, or its
  // replacement when the objective could not be evaluated there (message says so).
  std::vector<double> start;
  std::vector<double> parameters;   // final point, on the scales
  double startObjective = std::numeric_limits<double>::quiet_NaN();
  double objective = std::numeric_limits<double>::infinity();  // at the final point
  // The integrator's rtol of `objective`: the run's, or the tighter one of the continuation
  // that kept its point (a stalled start's: rtol / 100 or / 10⁴; the polish's: rtol / 100, or
  // the start's own when tighter; polish.h). Objectives differ in the third decimal between the two on some
  // problems (Crauste_CellSystems2017 at its nominal values: 190.965533 at 1e-8, 190.963978
  // at 1e-10), so comparisons are made at one rtol.
  double objectiveRtol = std::numeric_limits<double>::quiet_NaN();
  int iterations = 0;
  long objectiveEvaluations = 0;  // objective (and residual) evaluations
  long gradientEvaluations = 0;   // gradient or residual-Jacobian evaluations
  // Evaluations (of either kind) that odeSD could not do and CVODES computed instead
  // (ObjectiveOptions::forwardIntegrator odeSD), and the last one's reason.
  long cvodesFallbacks = 0;
  double wallSeconds = 0;
  StartStatus status = StartStatus::Failed;
  std::string message;  // the optimiser's termination reason, or why the start failed
};

// Weighted residuals r = (m − y)/σ on the observable's transformed scale, per observable.
struct ResidualSummary {
  std::string observableId;
  int count = 0;
  double mean = 0;     // mean r (bias)
  double rms = 0;      // √(mean r²)
  double maxAbs = 0;   // max |r|
  double chiSquare = 0;  // Σ r²
};

// Hemker's and COPASI's statistics at the optimum, on the parameter scales, for the parameters
// estimated in this fit (ids).
struct FitStatistics {
  bool available = false;
  std::string message;  // why not available, or remarks (rank deficiency)
  std::vector<std::string> parameterIds;
  // FIM = JᵀJ with J the Jacobian of the weighted residuals (and of the noise and prior
  // residuals, as the least-squares objective has them): the Gauss–Newton Hessian of the
  // objective.
  Eigen::MatrixXd fisher;
  Eigen::MatrixXd covariance;   // FIM⁻¹, or its pseudo-inverse when FIM is singular
  Eigen::MatrixXd correlation;  // cov_ij / √(cov_ii cov_jj)
  std::vector<double> standardErrors;      // √cov_ii (scale)
  std::vector<double> lower, upper;        // Wald CI at confidenceLevel, on the scale
  std::vector<double> lowerLinear, upperLinear;  // the same mapped to linear values
  Eigen::VectorXd eigenvalues;   // of FIM, ascending
  Eigen::MatrixXd eigenvectors;  // columns, with the eigenvalues
  int rank = 0;                  // numerical rank of FIM (eigenvalues > n·ε·max)
  double conditionNumber = std::numeric_limits<double>::infinity();
  double chiSquare = 0;       // Σ r² of the measurements
  int measurements = 0;
  int degreesOfFreedom = 0;   // measurements − estimated parameters
  std::vector<ResidualSummary> residuals;  // per observable
};

struct ProfilePoint {
  double value = 0;      // the profiled parameter, on its scale
  double objective = 0;  // minimum over the other parameters
  std::vector<double> parameters;  // all parameters there, on the scales
  bool converged = true;
};

struct Profile {
  std::string parameterId;
  int parameter = -1;  // index into EstimationResult::parameters
  std::vector<ProfilePoint> points;  // sorted by value, including the optimum
  double optimumObjective = 0;
  double threshold = 0;  // optimumObjective + χ²₁(confidenceLevel)/2
  // Where the profile crosses the threshold (interpolated), on the scale; NaN when it reached
  // the bound (or profileMaxPoints) first: the parameter is not identifiable on that side.
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
  std::string message;
};

struct EstimationResult {
  // Success when at least one start converged or stopped at maxIterations with a finite
  // objective. InvalidInput: bad options or problem; UserAbort: cancelled (the starts finished
  // so far are kept); Failure: no start produced a finite objective.
  enum class Status { Success, InvalidInput, UserAbort, Failure };
  Status status = Status::Success;
  std::string message;
  std::string details;  // technical detail behind a failure
  std::vector<std::string> fallbacks;  // what ran instead of what was asked, one sentence each
  // The problem's model as this process loaded it: where its evaluation ran (native tier, the
  // compiled-model cache's hit or miss) for summary.json. Threads and MPI ranks load their own.
  std::shared_ptr<const symbolic::CompiledModel> model;

  Optimizer optimizer = Optimizer::LeastSquares;  // the one that ran (never Auto)
  std::string optimizerReason;                    // why (Auto), one sentence
  // As fitted, in PEtab table order (the order of every point below; the statistics' columns
  // are the ones with estimate = true, in this order).
  std::vector<EstimatedParameter> parameters;
  std::vector<StartResult> starts;  // sorted by objective, failed starts last
  int screenedPoints = 0;           // candidates evaluated by the start screen (0: none)
  double screenSeconds = 0;         // wall time of the screen
  GlobalPhase global = GlobalPhase::None;  // the global phase that ran
  long globalEvaluations = 0;       // its objective evaluations (the screen: screenedPoints)
  double globalSeconds = 0;         // its wall time
  int globalGenerations = 0;        // scatter search generations
  int globalLocalSearches = 0;      // local optimisations inside the scatter search
  double globalBest = std::numeric_limits<double>::infinity();  // best objective it saw
  std::vector<double> best;         // best point on the scales (empty without success)
  double bestObjective = std::numeric_limits<double>::infinity();
  // The objective at the PEtab nominal values (NaN when it could not be evaluated): what a
  // published best fit reaches. Evaluated at the rtol of bestObjective (nominalObjectiveRtol:
  // the best start's objectiveRtol, tighter than the run's when a continuation kept its point),
  // so that best − nominal compares like with like; nominalObjectiveRunRtol is the value at the
  // run's rtol.
  double nominalObjective = std::numeric_limits<double>::quiet_NaN();
  double nominalObjectiveRtol = std::numeric_limits<double>::quiet_NaN();
  double nominalObjectiveRunRtol = std::numeric_limits<double>::quiet_NaN();
  // The best fit's evaluation: simulated observables and σ per measurement (for the fit plot).
  petab::ObjectiveResult bestFit;
  FitStatistics statistics;
  std::vector<Profile> profiles;
  double wallSeconds = 0;
  // The integrator of the time courses and forward sensitivities (EstimationOptions::objective.
  // forwardIntegrator), and the evaluations of the starts that odeSD could not do and CVODES
  // computed (a `fallbacks` sentence says so when there are any).
  integrators::Method forwardIntegrator = integrators::Method::OdeSd;
  long cvodesFallbacks = 0;
  // Starts read from the run store (EstimationRun::store) instead of computed: a resumed run.
  int resumedStarts = 0;
};
const char* toString(EstimationResult::Status s);

// Called (from a worker thread, serialised) as each start finishes, with its result.
using StartCallback = std::function<void(const StartResult&)>;

class StartExecutor;  // start_executor.h
class RunStore;       // run_store.h

// Where the starts run and where they are kept; both optional.
struct EstimationRun {
  // Null: threads of this process (EstimationOptions::threads); an MPI executor hands the starts
  // to ranks (mpi/mpi_executor.h). The global phase, the polish and the profiles run on this
  // process's threads either way.
  StartExecutor* executor = nullptr;
  // Null: nothing written. Otherwise the run's fingerprint, plan and every finished start are
  // written to it as they come; a store that already holds a run of the same problem and
  // settings is continued (its plan reused, its finished starts not computed again), one of
  // another problem or other settings is refused (InvalidInput naming the difference).
  RunStore* store = nullptr;
};

// Runs the estimation. Never throws for bad input or failed evaluations (status and message
// say what happened). Progress: ProgressInfo{t = starts and profile points done, tEnd = starts
// + profile points planned (2·profileMaxPoints per profile), steps = objective evaluations so
// far}; the callback is called from worker threads, serialised. Cancel: the token (or the
// callback answering Abort) stops every start within one integration step.
EstimationResult runEstimation(const EstimationProblem& problem, const EstimationOptions& options,
                               const ProgressMonitor& monitor = {},
                               const StartCallback& onStartFinished = {},
                               const EstimationRun& run = {});

// The best fit's evaluation (simulated observables) and the statistics there, for a result whose
// `parameters` and `best` are set: what runEstimation computes after the multistart, and what a
// result read back from a run store (run_results.h) or kept from a cancelled run lacks. Never
// throws for failed evaluations (statistics.message says why); throws Cancelled.
void evaluateBestFit(const petab::Problem& problem, const EstimationOptions& options,
                     const ProgressMonitor& monitor, EstimationResult& result);

}  // namespace sensode::estimation
