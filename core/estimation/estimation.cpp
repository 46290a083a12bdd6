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
#include <thread>

#include "core/estimation/fit_objective.h"
#include "core/estimation/fit_statistics.h"
#include "core/estimation/latin_hypercube.h"
#include "core/estimation/local_optimizers.h"
#include "core/estimation/polish.h"
#include "core/estimation/profile_likelihood.h"
#include "core/estimation/start_screen.h"
#include "core/estimation/worker_pool.h"
#include "core/petab/gradient_check.h"

namespace sensode::estimation {

namespace {

using detail::FitSetup;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The options' parameters in PEtab table order (defaults for an empty list). Throws
// InvalidOptions naming the id that does not match the table.
std::vector<EstimatedParameter> resolveParameters(const petab::Problem& problem,
                                                  const std::vector<EstimatedParameter>& given) {
  std::vector<EstimatedParameter> table = defaultParameters(problem);
  if (given.empty()) return table;
  std::map<std::string, const EstimatedParameter*> byId;
  for (const EstimatedParameter& p : given) {
    if (!byId.emplace(p.id, &p).second)
      throw InvalidOptions("EstimationOptions::parameters: '" + p.id + "' is listed twice");
  }
  for (EstimatedParameter& t : table) {
    const auto it = byId.find(t.id);
    if (it == byId.end())
      throw InvalidOptions("EstimationOptions::parameters: '" + t.id +
                           "' is estimated in the PEtab parameter table but missing (list every "
                           "estimated parameter; estimate = false holds one fixed)");
    if (it->second->scale != t.scale)
      throw InvalidOptions("EstimationOptions::parameters: '" + t.id + "' has scale " +
                           petab::toString(it->second->scale) + ", the PEtab table " +
                           petab::toString(t.scale));
    t = *it->second;
    byId.erase(it);
  }
  if (!byId.empty())
    throw InvalidOptions("EstimationOptions::parameters: '" + byId.begin()->first +
                         "' is not an estimated parameter of the PEtab table");
  return table;
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

// A start where the objective cannot be evaluated (a trial of parameters where the model
// blows up) is replaced by a uniform point in the bounds, as pyPESTO's start resampling does,
// up to kMaxResamples times; drawn from (seed, start index), so runs stay reproducible. The
// objective alone is checked first (cheap); a start where the optimiser then cannot evaluate
// what it needs (least squares: the Jacobian, whose steady-state sensitivities can fail where the
// steady state itself does not — Brannmark) is redrawn from the same sequence.
constexpr int kMaxResamples = 10;
class StartRedraws {
 public:
  StartRedraws(detail::FitObjective& f, std::uint64_t seed, int index)
      : f_(f), seed_(seed), index_(index) {}
  int count() const { return count_; }
  // The next point of the sequence into x; false when kMaxResamples are used up.
  bool next(std::vector<double>& x) {
    if (count_ == kMaxResamples) return false;
    if (redraws_.empty())  // one point per stratum is not needed here: plain uniform draws
      redraws_ = detail::latinHypercube(
          f_.setup().lower, f_.setup().upper, 1 + kMaxResamples,
          seed_ ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(index_ + 1)));
    x = redraws_[static_cast<std::size_t>(count_++)];
    return true;
  }
  // Redraws x until the objective is finite there (or the redraws are used up).
  void untilFinite(std::vector<double>& x) {
    for (;;) {
      try {
        if (std::isfinite(f_.value(x.data(), nullptr))) return;
      } catch (const Cancelled&) {
        return;  // the optimiser sees the cancel on its first evaluation
      } catch (const Error&) {
      }
      if (!next(x)) return;
    }
  }

 private:
  detail::FitObjective& f_;
  std::uint64_t seed_;
  int index_;
  int count_ = 0;
  std::vector<std::vector<double>> redraws_;
};

// Finite objectives first, ascending; stable, so equal objectives keep start order.
void sortByObjective(std::vector<StartResult>& starts) {
  std::stable_sort(starts.begin(), starts.end(), [](const StartResult& a, const StartResult& b) {
    const bool fa = std::isfinite(a.objective), fb = std::isfinite(b.objective);
    if (fa != fb) return fa;
    return fa && a.objective < b.objective;
  });
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

}  // namespace

EstimationResult runEstimation(const EstimationProblem& problemSpec,
                               const EstimationOptions& options, const ProgressMonitor& monitor,
                               const StartCallback& onStartFinished) {
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
  std::optional<petab::Problem> loaded;
  try {
    loaded = petab::loadProblem(problemSpec.yamlFile);
    result.parameters = resolveParameters(*loaded, options.parameters);
  } catch (const Error& e) {
    return fail(EstimationResult::Status::InvalidInput, e.what());
  }
  const petab::Problem& problem = *loaded;
  const std::string yaml = problemSpec.yamlFile.string();

  // The fit's layout: all estimated parameters (table order), the free ones moved.
  FitSetup setup;
  std::vector<int> freeTable;  // PEtab parameter indices of the free ones
  const std::vector<int> table = petab::estimatedParameters(problem);
  std::vector<EstimatedParameter> freeParameters;
  for (std::size_t i = 0; i < result.parameters.size(); ++i) {
    const EstimatedParameter& p = result.parameters[i];
    setup.point.push_back(p.start);
    if (!p.estimate) continue;
    setup.free.push_back(static_cast<int>(i));
    setup.lower.push_back(p.lower);
    setup.upper.push_back(p.upper);
    freeTable.push_back(table[i]);
    freeParameters.push_back(p);
  }
  if (setup.free.empty())
    return fail(EstimationResult::Status::InvalidInput,
                yaml + ": no parameter to estimate (every parameter is held fixed)");
  std::vector<int> profiled;  // positions in setup.free
  for (const std::string& id : options.profileParameters) {
    const auto it = std::find_if(freeParameters.begin(), freeParameters.end(),
                                 [&](const EstimatedParameter& p) { return p.id == id; });
    if (it == freeParameters.end())
      return fail(EstimationResult::Status::InvalidInput,
                  "EstimationOptions::profileParameters: '" + id +
                      "' is not a parameter this fit estimates");
    profiled.push_back(static_cast<int>(it - freeParameters.begin()));
  }
  setup.objective = options.objective;
  setup.gradient = options.gradient;

  // The nominal point: the published fit's objective, whether the gradient method works on this
  // problem (else the one that does), and whether σ depends on the parameters.
  petab::GradientMethod gradient = options.gradient;
  bool forwardWorks = true;
  petab::ObjectiveResult nominal;
  // It reports on the run's scale (0 of the planned units, runEstimation's contract): its own
  // integration progress would run ahead of the starts and then go back.
  const double planned = static_cast<double>(options.starts) +
                         2.0 * options.profileMaxPoints * static_cast<double>(profiled.size());
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
        result.nominalObjective = result.nominalObjectiveRunRtol = nominal.objective;
        result.nominalObjectiveRtol = options.objective.integrator.rtol;
        gradient = nominal.method;
        for (const std::string& f : nominal.fallbacks)
          result.fallbacks.push_back("at the nominal parameters, " + f +
                                     "; the estimation uses " + petab::toString(gradient));
        forwardWorks = options.gradient != petab::GradientMethod::Forward ||
                       gradient == petab::GradientMethod::Forward;
      } catch (const Cancelled&) {
        return fail(EstimationResult::Status::UserAbort, "cancelled");
      } catch (const Error&) {
        // Nominal values that cannot be simulated do not stop a multistart.
      }
    }
  }
  setup.gradient = gradient;
  setup.noiseResiduals = noiseDependsOnParameters(nominal, setup.free);

  const auto lsObstacle = detail::notLeastSquares(problem, freeTable);
  switch (options.optimizer) {
    case Optimizer::Auto:
      result.optimizer = lsObstacle || !forwardWorks ? Optimizer::QuasiNewton : Optimizer::LeastSquares;
      result.optimizerReason =
          lsObstacle ? "quasi-Newton (L-BFGS): " + *lsObstacle
          : !forwardWorks
              ? "quasi-Newton (L-BFGS): forward sensitivities failed at the nominal parameters"
              : std::string("least squares (Levenberg–Marquardt): the objective is a sum of "
                            "squares of weighted residuals") +
                    (setup.noiseResiduals ? " and noise terms" : "");
      break;
    case Optimizer::LeastSquares:
      if (lsObstacle || !forwardWorks) {
        result.optimizer = Optimizer::QuasiNewton;
        result.fallbacks.push_back(
            "least squares cannot fit this problem (" +
            (lsObstacle ? *lsObstacle : std::string("forward sensitivities failed")) +
            "); L-BFGS ran instead");
        result.optimizerReason = "quasi-Newton (L-BFGS) instead of the requested least squares";
      } else {
        result.optimizer = Optimizer::LeastSquares;
        result.optimizerReason = "requested";
      }
      break;
    case Optimizer::QuasiNewton:
      result.optimizer = Optimizer::QuasiNewton;
      result.optimizerReason = "requested";
      break;
  }
  const bool leastSquares = result.optimizer == Optimizer::LeastSquares;

  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double units = static_cast<double>(options.starts) +
                       2.0 * options.profileMaxPoints * static_cast<double>(profiled.size());
  SharedProgress progress(monitor, units);

  // Start points.
  std::vector<std::vector<double>> starts;
  if (options.useStartValues) starts.push_back(setup.point);
  const int sampled = options.starts - (options.useStartValues ? 1 : 0);
  std::vector<std::vector<double>> free;
  const auto globalStarted = Clock::now();
  if (sampled > 0 && options.global == GlobalPhase::ScatterSearch) {
    result.global = GlobalPhase::ScatterSearch;
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
        problemSpec.yamlFile, problem, setup, sampled, ess, leastSquares, local, threads,
        progress.monitor(), [&] { return progress.stopped(); });
    result.globalLocalSearches = found.localSearches;
    result.globalEvaluations = found.evaluations;
    result.globalGenerations = found.generations;
    result.globalBest = found.best;
    free = std::move(found.starts);
  } else if (sampled > 0 && options.global == GlobalPhase::Screen && options.screen > 0) {
    result.global = GlobalPhase::Screen;
    detail::ScreenedStarts screened =
        detail::screenStarts(problemSpec.yamlFile, problem, setup, sampled, options.screen,
                             options.seed, threads, progress.monitor());
    result.screenedPoints = screened.screened;
    result.screenSeconds = seconds(globalStarted);
    result.globalEvaluations = screened.screened;
    for (double v : screened.objectives) result.globalBest = std::min(result.globalBest, v);
    free = std::move(screened.starts);
  } else {
    free = detail::latinHypercube(setup.lower, setup.upper, sampled, options.seed);
  }
  result.globalSeconds = result.global == GlobalPhase::None ? 0 : seconds(globalStarted);
  for (const auto& x : free) {
    std::vector<double> q = setup.point;
    for (std::size_t i = 0; i < setup.free.size(); ++i)
      q[static_cast<std::size_t>(setup.free[i])] = x[i];
    starts.push_back(q);
  }
  const detail::LocalSettings settings{options.maxIterations, options.functionTolerance,
                                       options.parameterTolerance, options.gradientTolerance,
                                       options.geodesicAcceleration};
  result.starts.resize(starts.size());
  std::vector<std::vector<std::string>> startFallbacks(starts.size());
  detail::runTasks(static_cast<int>(starts.size()), threads, problemSpec.yamlFile, problem,
                   [&](int i, const petab::Problem& own) {
                     StartResult& s = result.starts[static_cast<std::size_t>(i)];
                     s.index = i;
                     s.start = starts[static_cast<std::size_t>(i)];
                     s.parameters = s.start;
                     if (progress.stopped()) {
                       s.status = StartStatus::Cancelled;
                       s.message = "not started: cancelled";
                       return;
                     }
                     const auto t0 = Clock::now();
                     FitSetup mine = setup;
                     mine.point = s.start;
                     detail::FitObjective f(own, mine, progress.monitor());
                     std::vector<double> x0;
                     for (int p : mine.free) x0.push_back(s.start[static_cast<std::size_t>(p)]);
                     StartRedraws redraws(f, options.seed, i);
                     redraws.untilFinite(x0);
                     detail::LocalResult r;
                     for (;;) {
                       r = leastSquares ? detail::minimizeLeastSquares(f, x0, settings)
                                        : detail::minimizeQuasiNewton(f, x0, settings);
                       if (!r.startNotEvaluable || progress.stopped() || !redraws.next(x0)) break;
                       redraws.untilFinite(x0);
                     }
                     const int resampled = redraws.count();
                     s.start = f.fullPoint(x0.data());
                     s.parameters = f.fullPoint(r.x.data());
                     s.startObjective = r.startObjective;
                     s.objective = r.objective;
                     s.objectiveRtol = options.objective.integrator.rtol;
                     s.iterations = r.iterations;
                     s.objectiveEvaluations = f.objectiveEvaluations();
                     s.gradientEvaluations = f.gradientEvaluations();
                     s.status = r.status;
                     s.message = r.message;
                     if (resampled > 0)
                       s.message += " (start point redrawn " + std::to_string(resampled) +
                                    " times: the objective or its derivatives could not be "
                                    "evaluated at the earlier ones)";
                     if (f.fallbackEvaluations() > 0)
                       s.message += " (" + std::to_string(f.fallbackEvaluations()) + " of " +
                                    std::to_string(s.gradientEvaluations) +
                                    " derivative evaluations with a fallback, the last: " +
                                    f.lastFallback() + ")";
                     s.wallSeconds = seconds(t0);
                     if (options.continueStalled && !progress.stopped())
                       detail::continueStalledStart(own, setup, leastSquares, settings,
                                                    progress.monitor(), s);
                     progress.unitDone(s.objectiveEvaluations);
                     if (onStartFinished) {
                       const std::lock_guard lock(progress.mutex());
                       onStartFinished(s);
                     }
                   });
  sortByObjective(result.starts);
  if (options.polish > 0 && !progress.stopped()) {
    const std::vector<int> chosen = polishCandidates(result.starts, options.polish);
    detail::runTasks(static_cast<int>(chosen.size()), threads, problemSpec.yamlFile, problem,
                     [&](int k, const petab::Problem& own) {
                       if (progress.stopped()) return;
                       detail::polishStart(own, setup, leastSquares, settings, progress.monitor(),
                                           result.starts[static_cast<std::size_t>(
                                               chosen[static_cast<std::size_t>(k)])]);
                     });
    sortByObjective(result.starts);
  }
  const bool cancelled = progress.stopped();
  if (result.starts.empty() || !std::isfinite(result.starts.front().objective)) {
    if (cancelled) return fail(EstimationResult::Status::UserAbort, "cancelled before any start finished");
    return fail(EstimationResult::Status::Failure,
                yaml + ": no start reached a finite objective",
                result.starts.empty() ? std::string() : result.starts.front().message);
  }
  result.best = result.starts.front().parameters;
  result.bestObjective = result.starts.front().objective;
  if (!cancelled) nominalAtTheBestsRtol(problem, options, progress.monitor(), result);

  if (cancelled) {
    result.status = EstimationResult::Status::UserAbort;
    result.message = "cancelled; the starts finished so far are kept (no statistics, no profiles)";
    result.wallSeconds = seconds(started);
    return result;
  }
  // The best fit with its sensitivities: simulated observables and the statistics.
  try {
    petab::ObjectiveOptions o = options.objective;
    o.measurementSensitivities = true;
    result.bestFit = petab::evaluateObjective(problem, result.best, petab::GradientMethod::Forward,
                                              o, progress.monitor());
    result.statistics = detail::computeStatistics(problem, result.bestFit, setup.free,
                                                  freeParameters, options.confidenceLevel);
  } catch (const Cancelled&) {
    return fail(EstimationResult::Status::UserAbort, "cancelled after the multistart");
  } catch (const Error& e) {
    result.statistics.message =
        std::string("no statistics: forward sensitivities at the best fit failed: ") + e.what();
    try {
      result.bestFit = petab::evaluateObjective(problem, result.best, petab::GradientMethod::None,
                                                options.objective);
    } catch (const Error&) {
    }
  }

  // Profiles: each direction of each parameter is one task.
  if (!profiled.empty()) {
    const double z = detail::normalQuantile(0.5 * (1 + options.confidenceLevel));
    const double threshold = result.bestObjective + z * z / 2;  // χ²₁(level) = z²
    FitSetup atBest = setup;
    atBest.point = result.best;
    std::vector<detail::ProfileDirection> directions(2 * profiled.size());
    detail::runTasks(static_cast<int>(directions.size()), threads, problemSpec.yamlFile, problem,
                     [&](int task, const petab::Problem& own) {
                       const int k = profiled[static_cast<std::size_t>(task / 2)];
                       detail::ProfileDirection& d = directions[static_cast<std::size_t>(task)];
                       try {
                         d = detail::profileDirection(own, atBest, k, result.best,
                                                      result.bestObjective, threshold,
                                                      task % 2 ? 1 : -1, leastSquares, settings,
                                                      options, progress.monitor(),
                                                      [&] { progress.unitDone(0); });
                       } catch (const Cancelled&) {
                         d.message = "cancelled";
                       } catch (const Error& e) {
                         d.message = e.what();
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
