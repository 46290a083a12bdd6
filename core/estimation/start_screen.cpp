// SPDX-License-Identifier: MIT
#include "core/estimation/start_screen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/estimation/latin_hypercube.h"
#include "core/estimation/phase_units.h"
#include "core/estimation/start_executor.h"
#include "core/estimation/worker_pool.h"

namespace sensode::estimation::detail {

std::vector<std::vector<double>> screenCandidates(const FitSetup& setup, int count, int factor,
                                                  std::uint64_t seed) {
  return latinHypercube(setup.lower, setup.upper, std::max(0, count) * std::max(1, factor),
                        seed ^ 0x5c4ee7ed5eedULL);
}

ScreenedStarts screenStarts(StartExecutor& executor, const petab::Problem& problem,
                            const PhaseComputer& screen, int count, const ProgressMonitor& monitor,
                            const std::function<bool()>& stopped,
                            const std::function<void()>& evaluated) {
  ScreenedStarts out;
  if (count < 1) return out;
  const std::vector<std::vector<double>>& candidates = screen.candidates();
  std::vector<double> values(candidates.size(), std::numeric_limits<double>::infinity());
  std::vector<int> units(static_cast<std::size_t>(screen.units()));
  std::iota(units.begin(), units.end(), 0);
  executor.runPhase(problem, screen, units, monitor, stopped, evaluated,
                    [&](int unit, const std::string& text) {
                      const std::vector<double> v = screenValuesFromText(text, "a screen unit");
                      const std::size_t first = static_cast<std::size_t>(unit) * kScreenChunk;
                      for (std::size_t i = 0; i < v.size() && first + i < values.size(); ++i)
                        values[first + i] = v[i];
                    });
  out.screened = static_cast<int>(candidates.size());
  for (int k : bestCandidates(values, count)) {
    out.starts.push_back(candidates[static_cast<std::size_t>(k)]);
    out.objectives.push_back(values[static_cast<std::size_t>(k)]);
  }
  return out;
}

ScreenedStarts screenStarts(const std::filesystem::path& yaml, const petab::Problem& problem,
                            const FitSetup& setup, int count, int factor, std::uint64_t seed,
                            int threads, const ProgressMonitor& monitor,
                            const std::function<void()>& evaluated) {
  const EstimationOptions options;  // the screen reads none of them
  const PhaseComputer screen(screenPhase(count, factor, seed, setup), yaml, setup, options);
  ThreadStartExecutor executor(threads);
  return screenStarts(executor, problem, screen, count, monitor,
                      [&] { return monitor.token.cancelled(); }, evaluated);
}

ScatterSearchResult scatterSearchStarts(StartExecutor& executor, const std::filesystem::path& yaml,
                                        const petab::Problem& problem, const FitSetup& setup,
                                        int count, ScatterSearchSettings settings,
                                        bool leastSquares, const LocalSettings& local,
                                        int threads, const ProgressMonitor& monitor,
                                        const std::function<bool()>& stopped) {
  const WorkerProblems workers(threads, yaml, problem);
  // One simulation per point, no sensitivities, as phase units (a batch is one phase: its points
  // go to each MPI worker once); a point where the model cannot be simulated stays at +inf (eSS
  // ranks it last).
  const EstimationOptions noOptions;  // a points phase reads none of them
  const BatchObjective batch = [&](const std::vector<std::vector<double>>& points,
                                   std::vector<double>& values) {
    const PhaseComputer phase(pointsPhase(points, setup), yaml, setup, noOptions);
    std::vector<int> units(static_cast<std::size_t>(phase.units()));
    std::iota(units.begin(), units.end(), 0);
    executor.runPhase(problem, phase, units, monitor, stopped, {},
                      [&](int unit, const std::string& text) {
                        const std::vector<double> v = screenValuesFromText(text, "a batch unit");
                        const std::size_t first = static_cast<std::size_t>(unit) * kScreenChunk;
                        for (std::size_t i = 0; i < v.size() && first + i < values.size(); ++i)
                          values[first + i] = v[i];
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
