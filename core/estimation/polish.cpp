// SPDX-License-Identifier: MIT
#include "core/estimation/polish.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace sensode::estimation::detail {
namespace {

enum class Phase { QuasiNewton, LeastSquares };

// What a continued point must beat: the start's objective at the run's rtol, or the same
// point's objective at the tighter rtol (where the continuation began).
enum class Baseline { RunObjective, TightStart };

// Runs `phases` one after the other from `start`'s final point at the integration rtol `rtol`
// (atol scaled with it from the run's), each from where the previous one ended lowest; `label`
// heads the message ("polished", "stalled; continued").
void continueAtTighterTolerances(const petab::Problem& problem, const FitSetup& setup,
                                 double rtol, const std::vector<Phase>& phases,
                                 const LocalSettings& s, Baseline baseline,
                                 const ProgressMonitor& monitor, const char* label,
                                 StartResult& start) {
  if (!std::isfinite(start.objective)) return;
  const auto t0 = std::chrono::steady_clock::now();
  FitSetup tight = setup;
  tight.point = start.parameters;
  tight.objective.integrator.atol *= rtol / setup.objective.integrator.rtol;
  tight.objective.integrator.rtol = rtol;
  FitObjective f(problem, tight, monitor);
  std::vector<double> x;
  for (int p : tight.free) x.push_back(start.parameters[static_cast<std::size_t>(p)]);
  double best = start.objective;
  bool improved = false;
  StartStatus status = start.status;
  std::string what;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    const bool quasiNewton = phases[k] == Phase::QuasiNewton;
    LocalResult r;
    try {
      r = quasiNewton ? minimizeQuasiNewton(f, x, s) : minimizeLeastSquares(f, x, s);
    } catch (const std::exception& e) {
      r.status = StartStatus::Failed;
      r.message = e.what();
    }
    char line[200];
    std::snprintf(line, sizeof line, "%s %s: %s, %.12g after %d iterations", k == 0 ? "" : ";",
                  quasiNewton ? "L-BFGS" : "LM", toString(r.status), r.objective, r.iterations);
    what += line;
    start.iterations += r.iterations;
    if (r.status == StartStatus::Cancelled) break;
    if (k == 0 && baseline == Baseline::TightStart && std::isfinite(r.startObjective))
      best = r.startObjective;
    // NLopt's "failed" after its line search found no decrease still returns its best point.
    if (std::isfinite(r.objective) && r.objective < best && r.x.size() == x.size()) {
      best = r.objective;
      improved = true;
      x = r.x;
      status = r.status == StartStatus::Failed ? StartStatus::Stalled : r.status;
    }
  }
  char head[120];
  std::snprintf(head, sizeof head, "; %s at rtol %.3g from %.12g:", label,
                tight.objective.integrator.rtol, start.objective);
  start.message += head + what;
  start.objectiveEvaluations += f.objectiveEvaluations();
  start.gradientEvaluations += f.gradientEvaluations();
  start.cvodesFallbacks += f.cvodesFallbacks();
  start.wallSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!improved) return;
  start.parameters = f.fullPoint(x.data());
  start.objective = best;
  start.objectiveRtol = tight.objective.integrator.rtol;
  start.status = status;
}

}  // namespace

void continueStalledStart(const petab::Problem& problem, const FitSetup& setup,
                          bool leastSquares, const LocalSettings& settings,
                          const ProgressMonitor& monitor, StartResult& start) {
  double rtol = setup.objective.integrator.rtol;
  for (int k = 0; k < kStalledContinuations && start.status == StartStatus::Stalled; ++k) {
    rtol *= kPolishFactor;
    if (rtol < kTightestRtol * (1 - 1e-9)) return;
    continueAtTighterTolerances(problem, setup, rtol,
                                {leastSquares ? Phase::LeastSquares : Phase::QuasiNewton},
                                settings, Baseline::TightStart, monitor, "stalled; continued",
                                start);
    if (!(start.objectiveRtol == rtol)) return;  // no lower point: a tighter rtol will not help
  }
}

void polishStart(const petab::Problem& problem, const FitSetup& setup, bool leastSquares,
                 const LocalSettings& settings, const ProgressMonitor& monitor,
                 StartResult& start) {
  LocalSettings s = settings;
  s.functionTolerance *= kPolishStopFactor;
  s.parameterTolerance *= kPolishStopFactor;
  // L-BFGS first, then (least squares) LM from where it ended. Its quasi-Newton Hessian carries
  // the residuals' second-order terms that LM's JᵀJ lacks, which matter in a flat valley with
  // non-zero residuals: on Crauste_CellSystems2017 the LM polish moved a start at 191.0217 to
  // 191.0206 in 1000 iterations, L-BFGS one at 190.9733 to 190.9673 in 182, and LM from there
  // to 190.9670 (docs/benchmarks/estimation.md, 2026-11-26 third run).
  std::vector<Phase> phases{Phase::QuasiNewton};
  if (leastSquares) phases.push_back(Phase::LeastSquares);
  // At the run's rtol / 100, or at the start's own rtol when a stalled continuation went below.
  const double rtol = std::min(setup.objective.integrator.rtol * kPolishFactor,
                               start.objectiveRtol);
  continueAtTighterTolerances(problem, setup, rtol, phases, s, Baseline::RunObjective, monitor,
                              "polished", start);
}

}  // namespace sensode::estimation::detail
