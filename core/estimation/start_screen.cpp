// SPDX-License-Identifier: MIT
#include "core/estimation/start_screen.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/estimation/latin_hypercube.h"
#include "core/estimation/worker_pool.h"

namespace sensode::estimation::detail {

std::vector<std::vector<double>> screenCandidates(const FitSetup& setup, int count, int factor,
                                                  std::uint64_t seed) {
  return latinHypercube(setup.lower, setup.upper, std::max(0, count) * std::max(1, factor),
                        seed ^ 0x5c4ee7ed5eedULL);
}

ScreenedStarts screenStarts(const std::filesystem::path& yaml, const petab::Problem& problem,
                            const FitSetup& setup, int count, int factor, std::uint64_t seed,
                            int threads, const ProgressMonitor& monitor,
                            const std::function<void()>& evaluated) {
  ScreenedStarts out;
  if (count < 1) return out;
  const std::vector<std::vector<double>> candidates = screenCandidates(setup, count, factor, seed);
  std::vector<double> values(candidates.size(), std::numeric_limits<double>::infinity());
  // A cancel can reach an evaluation without passing the monitor (the compile and conservation
  // analysis see the run's token through its CancellationScope): the first Cancelled stops the
  // rest, which would otherwise each start, throw and unwind (500000 of them took minutes).
  std::atomic<bool> cancelled{false};
  runTasks(static_cast<int>(candidates.size()), threads, yaml, problem,
           [&](int i, const petab::Problem& own) {
             if (cancelled.load(std::memory_order_relaxed) || monitor.token.cancelled()) return;
             FitObjective f(own, setup, monitor);
             try {
               values[static_cast<std::size_t>(i)] =
                   f.value(candidates[static_cast<std::size_t>(i)].data(), nullptr);
             } catch (const Cancelled&) {
               cancelled.store(true, std::memory_order_relaxed);
               return;  // not evaluated: nothing to count
             } catch (const Error&) {
               // Where the model cannot be simulated is no start: left at infinity.
             }
             if (evaluated) evaluated();
           });
  out.screened = static_cast<int>(candidates.size());
  for (int k : bestCandidates(values, count)) {
    out.starts.push_back(candidates[static_cast<std::size_t>(k)]);
    out.objectives.push_back(values[static_cast<std::size_t>(k)]);
  }
  return out;
}

ScatterSearchResult scatterSearchStarts(const std::filesystem::path& yaml,
                                        const petab::Problem& problem, const FitSetup& setup,
                                        int count, ScatterSearchSettings settings,
                                        bool leastSquares, const LocalSettings& local,
                                        int threads, const ProgressMonitor& monitor,
                                        const std::function<bool()>& stopped) {
  const WorkerProblems workers(threads, yaml, problem);
  // One simulation per point, no sensitivities; a point where the model cannot be simulated
  // stays at +inf (eSS ranks it last).
  const BatchObjective batch = [&](const std::vector<std::vector<double>>& points,
                                   std::vector<double>& values) {
    workers.run(static_cast<int>(points.size()), [&](int i, const petab::Problem& own) {
      if (stopped()) return;
      FitObjective f(own, setup, monitor);
      try {
        values[static_cast<std::size_t>(i)] =
            f.value(points[static_cast<std::size_t>(i)].data(), nullptr);
      } catch (const Error&) {  // Cancelled too: the search sees `stopped` next
      }
    });
  };
  settings.localCount = std::max(1, static_cast<int>(workers.size()));
  const BatchLocalSearch search = [&](std::vector<std::vector<double>>& points,
                                      std::vector<double>& values) {
    std::vector<long> used(points.size(), 0);
    workers.run(static_cast<int>(points.size()), [&](int i, const petab::Problem& own) {
      const auto k = static_cast<std::size_t>(i);
      if (stopped()) return;
      FitObjective f(own, setup, monitor);
      const LocalResult r = leastSquares ? minimizeLeastSquares(f, points[k], local)
                                         : minimizeQuasiNewton(f, points[k], local);
      if (std::isfinite(r.objective) && r.objective <= values[k])
        points[k] = r.x, values[k] = r.objective;
      used[k] = f.objectiveEvaluations() + f.gradientEvaluations();
    });
    long total = 0;
    for (long u : used) total += u;
    return total;
  };
  return scatterSearch(setup.lower, setup.upper, count, settings, batch, stopped, search);
}

}  // namespace sensode::estimation::detail
