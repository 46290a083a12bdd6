// SPDX-License-Identifier: MIT
// runEstimation: resolves the parameters and the optimiser, runs the multistart on worker
// threads, then the statistics at the best point and the profiles.
#include "core/estimation/estimation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "core/estimation/fit_objective.h"
#include "core/estimation/fit_preparation.h"
#include "core/estimation/fit_statistics.h"
#include "core/estimation/latin_hypercube.h"
#include "core/estimation/local_optimizers.h"
#include "core/estimation/phase_units.h"
#include "core/estimation/polish.h"
#include "core/estimation/profile_likelihood.h"
#include "core/estimation/run_store.h"
#include "core/estimation/start_executor.h"
#include "core/estimation/start_screen.h"
#include "core/estimation/worker_pool.h"
#include "core/petab/gradient_check.h"

namespace sensode::estimation {

namespace {

using detail::FitSetup;
using detail::PreparedFit;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Progress and cancel shared by the workers: one stop token, one serialised outer callback.
class SharedProgress {
 public:
  SharedProgress(const ProgressMonitor& outer, double total) : outer_(outer), total_(total) {}
  ProgressMonitor monitor() {
    ProgressMonitor m;
    m.token = stop_;
    m.callback = [this](const ProgressInfo&) {
      if (outer_.token.cancelled()) {
        stop_.cancel();
        return Decision::Abort;
      }
      if (!outer_.callback) return Decision::Continue;
      const std::lock_guard lock(mutex_);
      const Decision d = outer_.callback({done_, total_, evaluations_.load()});
      if (d == Decision::Abort) stop_.cancel();
      return d;
    };
    return m;
  }
  void unitDone(long evaluations) {
    const std::lock_guard lock(mutex_);
    done_ += 1;
    evaluations_ += evaluations;
    if (outer_.callback && outer_.callback({done_, total_, evaluations_.load()}) == Decision::Abort)
      stop_.cancel();
  }
  // Evaluations outside the units (the global phase's): the count moves while no unit is done.
  void evaluationsDone(long evaluations) {
    const std::lock_guard lock(mutex_);
    evaluations_ += evaluations;
    if (outer_.callback && outer_.callback({done_, total_, evaluations_.load()}) == Decision::Abort)
      stop_.cancel();
  }
  bool stopped() const { return stop_.cancelled() || outer_.token.cancelled(); }
  std::mutex& mutex() { return mutex_; }

 private:
  const ProgressMonitor& outer_;
  CancelToken stop_;
  std::mutex mutex_;
  double done_ = 0, total_;
  std::atomic<long> evaluations_{0};
};

// Does σ depend on the fitted parameters? Read from the forward sensitivities at a point
// (true when they are not available: the noise residuals then only cost their rows).
bool noiseDependsOnParameters(const petab::ObjectiveResult& r, const std::vector<int>& free) {
  if (r.sigmaSensitivities.size() == 0) return true;
  for (int f : free)
    if (!r.sigmaSensitivities.col(f).isZero(0.0)) return true;
  return false;
}

// Positions (in sorted `starts`) of the best `count` starts whose objectives differ by more
// than 1e-3 from every one chosen before: starts that ended at the same optimum need one polish.
std::vector<int> polishCandidates(const std::vector<StartResult>& starts, int count) {
  std::vector<int> out;
  double last = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < starts.size() && static_cast<int>(out.size()) < count; ++i) {
    if (!std::isfinite(starts[i].objective)) break;
    if (starts[i].objective - last <= 1e-3) continue;
    out.push_back(static_cast<int>(i));
    last = starts[i].objective;
  }
  return out;
}

// The nominal objective again at the rtol of the best objective when a continuation at tighter
// tolerances produced it (a stalled start's or the polish's, polish.h; atol scaled with rtol),
// so that best − nominal is not the difference of two integration errors. One objective evaluation, no sensitivities; when it
// fails the run's value stays, with its rtol.
void nominalAtTheBestsRtol(const petab::Problem& problem, const EstimationOptions& options,
                           const ProgressMonitor& monitor, EstimationResult& result) {
  const double rtol = result.starts.front().objectiveRtol;
  if (!std::isfinite(result.nominalObjective) || !std::isfinite(rtol) ||
      rtol == result.nominalObjectiveRtol)
    return;
  petab::ObjectiveOptions o = options.objective;
  o.integrator.atol *= rtol / o.integrator.rtol;
  o.integrator.rtol = rtol;
  try {
    const petab::ObjectiveResult r = petab::evaluateObjective(
        problem, petab::nominalScaledParameters(problem), petab::GradientMethod::None, o, monitor);
    if (!std::isfinite(r.objective)) return;
    result.nominalObjective = r.objective;
    result.nominalObjectiveRtol = rtol;
  } catch (const Cancelled&) {
  } catch (const Error&) {
  }
}

// The nominal point, the optimiser and the global phase: everything the starts need besides the
// problem and the options (work_units.h). The nominal evaluation reports on the run's scale (0 of
// the planned units, runEstimation's contract): its own integration progress would run ahead of
// the starts and then go back. Throws Cancelled.
StartPlan makeStartPlan(const PreparedFit& fit, const EstimationOptions& options,
                        const ProgressMonitor& monitor, double planned, int threads,
                        SharedProgress& progress, StartExecutor& executor) {
  const petab::Problem& problem = *fit.problem;
  StartPlan plan;
  FitSetup setup = fit.setup;
  // The published fit's objective, whether the gradient method works on this problem (else the
  // one that does), and whether σ depends on the parameters.
  petab::GradientMethod gradient = options.gradient;
  bool forwardWorks = true;
  petab::ObjectiveResult nominal;
  ProgressMonitor nominalMonitor;
  nominalMonitor.token = monitor.token;
  if (monitor.callback)
    nominalMonitor.callback = [&monitor, planned](const ProgressInfo&) {
      return monitor.callback({0, planned, 0});
    };
  {
    std::vector<double> q = petab::nominalScaledParameters(problem);
    bool finite = true;
    for (double v : q) finite = finite && std::isfinite(v);
    if (finite) {
      petab::ObjectiveOptions o = options.objective;
      o.measurementSensitivities = true;
      try {
        nominal = petab::evaluateWithFallback(problem, q, options.gradient, o, nominalMonitor);
        plan.nominalObjective = nominal.objective;
        gradient = nominal.method;
        for (const std::string& f : nominal.fallbacks)
          plan.fallbacks.push_back("at the nominal parameters, " + f + "; the estimation uses " +
                                   petab::toString(gradient));
        forwardWorks = options.gradient != petab::GradientMethod::Forward ||
                       gradient == petab::GradientMethod::Forward;
      } catch (const Cancelled&) {
        throw;
      } catch (const Error&) {
        // Nominal values that cannot be simulated do not stop a multistart.
      }
    }
  }
  plan.gradient = setup.gradient = gradient;
  plan.noiseResiduals = setup.noiseResiduals = noiseDependsOnParameters(nominal, setup.free);

  const auto lsObstacle = detail::notLeastSquares(problem, fit.freeTable);
  switch (options.optimizer) {
    case Optimizer::Auto:
      plan.optimizer = lsObstacle || !forwardWorks ? Optimizer::QuasiNewton : Optimizer::LeastSquares;
      plan.optimizerReason =
          lsObstacle ? "quasi-Newton (L-BFGS): " + *lsObstacle
          : !forwardWorks
              ? "quasi-Newton (L-BFGS): forward sensitivities failed at the nominal parameters"
              : std::string("least squares (Levenberg–Marquardt): the objective is a sum of "
                            "squares of weighted residuals") +
                    (setup.noiseResiduals ? " and noise terms" : "");
      break;
    case Optimizer::LeastSquares:
      if (lsObstacle || !forwardWorks) {
        plan.optimizer = Optimizer::QuasiNewton;
        plan.fallbacks.push_back(
            "least squares cannot fit this problem (" +
            (lsObstacle ? *lsObstacle : std::string("forward sensitivities failed")) +
            "); L-BFGS ran instead");
        plan.optimizerReason = "quasi-Newton (L-BFGS) instead of the requested least squares";
      } else {
        plan.optimizer = Optimizer::LeastSquares;
        plan.optimizerReason = "requested";
      }
      break;
    case Optimizer::QuasiNewton:
      plan.optimizer = Optimizer::QuasiNewton;
      plan.optimizerReason = "requested";
      break;
  }
  const bool leastSquares = plan.optimizer == Optimizer::LeastSquares;

  // Start points.
  if (options.useStartValues) plan.starts.push_back(setup.point);
  const int sampled = options.starts - (options.useStartValues ? 1 : 0);
  std::vector<std::vector<double>> free;
  const auto globalStarted = Clock::now();
  if (sampled > 0 && options.global == GlobalPhase::ScatterSearch) {
    plan.global = GlobalPhase::ScatterSearch;
    detail::ScatterSearchSettings ess;
    ess.evaluations = options.globalEvaluations > 0
                          ? options.globalEvaluations
                          : 1000L * static_cast<long>(setup.free.size());
    ess.seed = options.seed;
    ess.localEvery = options.globalLocalEvery;
    // Local searches inside the search: the multistart's optimiser, at most 100 iterations (the
    // final starts continue from the best of them).
    const detail::LocalSettings local{std::min(options.maxIterations, 100),
                                      options.functionTolerance, options.parameterTolerance,
                                      options.gradientTolerance};
    detail::ScatterSearchResult found = detail::scatterSearchStarts(
        executor, fit.problem->yamlFile, problem, setup, sampled, ess, leastSquares, local, threads,
        progress.monitor(), [&] { return progress.stopped(); });
    plan.globalLocalSearches = found.localSearches;
    plan.globalEvaluations = found.evaluations;
    plan.globalGenerations = found.generations;
    plan.globalBest = found.best;
    free = std::move(found.starts);
  } else if (sampled > 0 && options.global == GlobalPhase::Screen && options.screen > 0) {
    plan.global = GlobalPhase::Screen;
    // Units of the executor (threads, or MPI ranks with their own threads).
    const detail::PhaseComputer screen(
        detail::screenPhase(sampled, options.screen, options.seed, setup), fit.problem->yamlFile,
        fit.setup, options);
    detail::ScreenedStarts screened = detail::screenStarts(
        executor, problem, screen, sampled, progress.monitor(),
        [&] { return progress.stopped(); }, [&] { progress.evaluationsDone(1); });
    plan.screenedPoints = screened.screened;
    plan.screenSeconds = seconds(globalStarted);
    plan.globalEvaluations = screened.screened;
    for (double v : screened.objectives) plan.globalBest = std::min(plan.globalBest, v);
    free = std::move(screened.starts);
  } else {
    free = detail::latinHypercube(setup.lower, setup.upper, sampled, options.seed);
  }
  // A global phase cut short by a cancel chose its starts from part of its evaluations: such a
  // plan is not the run's and must not be stored.
  if (progress.stopped()) throw Cancelled(0);
  plan.globalSeconds = plan.global == GlobalPhase::None ? 0 : seconds(globalStarted);
  for (const auto& x : free) {
    std::vector<double> q = setup.point;
    for (std::size_t i = 0; i < setup.free.size(); ++i)
      q[static_cast<std::size_t>(setup.free[i])] = x[i];
    plan.starts.push_back(q);
  }
  return plan;
}

}  // namespace

void evaluateBestFit(const petab::Problem& problem, const EstimationOptions& options,
                     const ProgressMonitor& monitor, EstimationResult& result) {
  std::vector<int> free;
  std::vector<EstimatedParameter> freeParameters;
  for (std::size_t i = 0; i < result.parameters.size(); ++i)
    if (result.parameters[i].estimate) {
      free.push_back(static_cast<int>(i));
      freeParameters.push_back(result.parameters[i]);
    }
  try {
    petab::ObjectiveOptions o = options.objective;
    o.measurementSensitivities = true;
    result.bestFit = petab::evaluateObjective(problem, result.best, petab::GradientMethod::Forward,
                                              o, monitor);
    result.statistics = detail::computeStatistics(problem, result.bestFit, free, freeParameters,
                                                  options.confidenceLevel);
  } catch (const Cancelled&) {
    throw;
  } catch (const Error& e) {
    result.statistics.message =
        std::string("no statistics: forward sensitivities at the best fit failed: ") + e.what();
    try {
      result.bestFit = petab::evaluateObjective(problem, result.best, petab::GradientMethod::None,
                                                options.objective);
    } catch (const Error&) {
    }
  }
}

EstimationResult runEstimation(const EstimationProblem& problemSpec,
                               const EstimationOptions& options, const ProgressMonitor& monitor,
                               const StartCallback& onStartFinished, const EstimationRun& run) {
  const auto started = Clock::now();
  EstimationResult result;
  const auto fail = [&](EstimationResult::Status status, const std::string& message,
                        const std::string& details = {}) {
    result.status = status;
    result.message = message;
    result.details = details;
    result.wallSeconds = seconds(started);
    return result;
  };
  if (auto why = options.validate()) return fail(EstimationResult::Status::InvalidInput, *why);
  PreparedFit fit;
  try {
    fit = detail::prepareFit(problemSpec.yamlFile, options);
  } catch (const Error& e) {
    return fail(EstimationResult::Status::InvalidInput, e.what());
  }
  result.parameters = fit.parameters;
  const petab::Problem& problem = *fit.problem;
  result.model = problem.model;
  const std::string yaml = problemSpec.yamlFile.string();

  // A store that holds a run continues it, when it is a run of this problem and these options.
  std::optional<StartPlan> storedPlan;
  std::vector<StartResult> stored;
  if (run.store) {
    try {
      const RunFingerprint mine = runFingerprint(problem, options);
      if (run.store->hasRun()) {
        if (const auto difference = fingerprintDifference(run.store->fingerprint(), mine))
          return fail(EstimationResult::Status::InvalidInput,
                      run.store->dir().string() +
                          ": holds a run of another problem or other settings: " + *difference);
        storedPlan = run.store->plan();
        if (storedPlan) stored = run.store->finishedStarts();
      } else {
        run.store->saveFingerprint(mine);
      }
    } catch (const Error& e) {
      return fail(EstimationResult::Status::InvalidInput, e.what());
    }
  }

  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double units = static_cast<double>(options.starts) +
                       2.0 * options.profileMaxPoints * static_cast<double>(fit.profiled.size());
  SharedProgress progress(monitor, units);
  ThreadStartExecutor threadExecutor(threads);
  StartExecutor& executor = run.executor ? *run.executor : threadExecutor;

  StartPlan plan;
  if (storedPlan) {
    plan = std::move(*storedPlan);
    if (static_cast<int>(plan.starts.size()) != options.starts)
      return fail(EstimationResult::Status::InvalidInput,
                  run.store->dir().string() + "/plan.txt: " + std::to_string(plan.starts.size()) +
                      " start points for " + std::to_string(options.starts) + " starts");
  } else {
    try {
      plan = makeStartPlan(fit, options, monitor, units, threads, progress, executor);
    } catch (const Cancelled&) {
      return fail(EstimationResult::Status::UserAbort, "cancelled before any start finished");
    }
    if (run.store) {
      try {
        run.store->savePlan(plan);
      } catch (const Error& e) {
        return fail(EstimationResult::Status::Failure, e.what());
      }
    }
  }
  reportPlan(plan, options.objective.integrator.rtol, result);
  const detail::StartContext context =
      detail::makeStartContext(problemSpec.yamlFile, fit.setup, plan, options);
  const FitSetup& setup = context.setup;

  // The starts: the stored ones are kept, the others run on the executor.
  result.starts.resize(plan.starts.size());
  std::vector<bool> done(plan.starts.size(), false);
  for (const StartResult& s : stored) {
    if (s.index < 0 || s.index >= static_cast<int>(done.size()) ||
        s.status == StartStatus::Cancelled)
      continue;
    result.starts[static_cast<std::size_t>(s.index)] = s;
    done[static_cast<std::size_t>(s.index)] = true;
    ++result.resumedStarts;
    progress.unitDone(0);
  }
  std::vector<int> pending;
  for (std::size_t i = 0; i < done.size(); ++i)
    if (!done[i]) {
      pending.push_back(static_cast<int>(i));
      result.starts[i].index = static_cast<int>(i);
      result.starts[i].start = result.starts[i].parameters = plan.starts[i];
      result.starts[i].status = StartStatus::Cancelled;
      result.starts[i].message = "not started: cancelled";
    }
  std::string storeError;
  executor.run(problem, context, plan, pending, progress.monitor(),
               [&] { return progress.stopped(); },
               [&](const StartResult& s) {
                 result.starts[static_cast<std::size_t>(s.index)] = s;
                 if (s.status == StartStatus::Cancelled) return;
                 if (run.store && storeError.empty()) {
                   try {
                     run.store->saveStart(s);
                   } catch (const Error& e) {
                     storeError = e.what();
                   }
                 }
                 progress.unitDone(s.objectiveEvaluations);
                 if (onStartFinished) onStartFinished(s);
               });
  if (!storeError.empty()) return fail(EstimationResult::Status::Failure, storeError);
  const bool cancelled = progress.stopped();
  if (cancelled)  // a cancelled start is no result: only the finished ones are kept
    std::erase_if(result.starts,
                  [](const StartResult& s) { return s.status == StartStatus::Cancelled; });
  sortStartsByObjective(result.starts);
  if (options.polish > 0 && !progress.stopped()) {
    const std::vector<int> chosen = polishCandidates(result.starts, options.polish);
    // A resumed run keeps the polished starts its store has (each polish is one unit).
    std::map<int, StartResult> polished;
    if (run.store && result.resumedStarts > 0) {
      try {
        for (StartResult& p : run.store->polishedStarts()) polished[p.index] = std::move(p);
      } catch (const Error& e) {
        return fail(EstimationResult::Status::InvalidInput, e.what());
      }
    }
    // The chosen starts not polished yet are the phase's units (threads, or MPI ranks).
    std::vector<StartResult> toPolish;
    std::vector<std::size_t> positions;  // in result.starts, per unit
    for (int position : chosen) {
      StartResult& s = result.starts[static_cast<std::size_t>(position)];
      if (const auto it = polished.find(s.index); it != polished.end()) {
        s = it->second;
        continue;
      }
      toPolish.push_back(s);
      positions.push_back(static_cast<std::size_t>(position));
    }
    if (!toPolish.empty()) {
      const detail::PhaseComputer polish(detail::polishPhase(plan, toPolish), problemSpec.yamlFile,
                                         fit.setup, options);
      std::vector<int> polishUnits(toPolish.size());
      std::iota(polishUnits.begin(), polishUnits.end(), 0);
      executor.runPhase(problem, polish, polishUnits, progress.monitor(),
                        [&] { return progress.stopped(); }, {},
                        [&](int unit, const std::string& text) {
                          const StartResult s = startResultFromText(text, "a polished start");
                          result.starts[positions[static_cast<std::size_t>(unit)]] = s;
                          if (!run.store || progress.stopped() || !storeError.empty()) return;
                          try {
                            run.store->savePolished(s);
                          } catch (const Error& e) {
                            storeError = e.what();
                          }
                        });
    }
    if (!storeError.empty()) return fail(EstimationResult::Status::Failure, storeError);
    sortStartsByObjective(result.starts);
  }
  if (result.starts.empty() || !std::isfinite(result.starts.front().objective)) {
    if (cancelled) return fail(EstimationResult::Status::UserAbort, "cancelled before any start finished");
    return fail(EstimationResult::Status::Failure,
                yaml + ": no start reached a finite objective",
                result.starts.empty() ? std::string() : result.starts.front().message);
  }
  result.best = result.starts.front().parameters;
  result.bestObjective = result.starts.front().objective;
  reportForwardIntegrator(options.objective.forwardIntegrator, result);
  if (!cancelled) nominalAtTheBestsRtol(problem, options, progress.monitor(), result);

  if (cancelled) {
    result.status = EstimationResult::Status::UserAbort;
    result.message = "cancelled after " + std::to_string(result.starts.size()) + " of " +
                     std::to_string(options.starts) +
                     " starts; the finished ones are kept (no statistics, no profiles)";
    result.wallSeconds = seconds(started);
    return result;
  }
  // The best fit with its sensitivities: simulated observables and the statistics.
  try {
    evaluateBestFit(problem, options, progress.monitor(), result);
  } catch (const Cancelled&) {
    return fail(EstimationResult::Status::UserAbort, "cancelled after the multistart");
  }

  // Profiles: each direction of each parameter is one task.
  const std::vector<int>& profiled = fit.profiled;
  if (!profiled.empty()) {
    const double z = detail::normalQuantile(0.5 * (1 + options.confidenceLevel));
    const double threshold = result.bestObjective + z * z / 2;  // χ²₁(level) = z²
    std::vector<detail::ProfileDirection> directions(2 * profiled.size());
    const auto idOf = [&](int task) -> const std::string& {
      return fit.freeParameters[static_cast<std::size_t>(profiled[static_cast<std::size_t>(task / 2)])].id;
    };
    const auto directionOf = [](int task) { return task % 2 ? 1 : -1; };
    // A resumed run keeps the directions its store has; the others are the phase's units.
    std::vector<int> tasks;
    for (int task = 0; task < static_cast<int>(directions.size()); ++task) {
      if (run.store && result.resumedStarts > 0) {
        try {
          if (auto storedDirection = run.store->profileDirection(idOf(task), directionOf(task))) {
            directions[static_cast<std::size_t>(task)] = std::move(*storedDirection);
            for (std::size_t i = 0; i < directions[static_cast<std::size_t>(task)].points.size(); ++i)
              progress.unitDone(0);
            continue;
          }
        } catch (const Error&) {
          // An unreadable record is computed again.
        }
      }
      directions[static_cast<std::size_t>(task)].message = "cancelled";
      tasks.push_back(task);
    }
    const detail::PhaseComputer profiles(
        detail::profilePhase(plan, result.best, result.bestObjective, threshold, profiled),
        problemSpec.yamlFile, fit.setup, options);
    executor.runPhase(problem, profiles, tasks, progress.monitor(),
                      [&] { return progress.stopped(); }, [&] { progress.unitDone(0); },
                      [&](int task, const std::string& text) {
                        detail::ProfileDirection& d = directions[static_cast<std::size_t>(task)];
                        d = profileDirectionFromText(text, "a profile direction");
                        if (!run.store || progress.stopped()) return;
                        try {
                          run.store->saveProfileDirection(idOf(task), directionOf(task), d);
                        } catch (const Error&) {
                          // The profile is in the result; only a resume recomputes it.
                        }
                      });
    for (std::size_t p = 0; p < profiled.size(); ++p) {
      const int k = profiled[p];
      const int position = setup.free[static_cast<std::size_t>(k)];
      result.profiles.push_back(detail::assembleProfile(
          result.parameters[static_cast<std::size_t>(position)].id, position,
          result.best[static_cast<std::size_t>(position)], result.best, result.bestObjective,
          threshold, directions[2 * p], directions[2 * p + 1]));
    }
  }
  result.wallSeconds = seconds(started);
  if (progress.stopped()) {
    result.status = EstimationResult::Status::UserAbort;
    result.message = "cancelled; the starts finished so far are kept";
  }
  return result;
}

}  // namespace sensode::estimation

