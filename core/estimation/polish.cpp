// SPDX-License-Identifier: MIT
#include "core/estimation/polish.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace sensode::estimation::detail {

void polishStart(const petab::Problem& problem, const FitSetup& setup, bool leastSquares,
                 const LocalSettings& settings, const ProgressMonitor& monitor,
                 StartResult& start) {
  if (!std::isfinite(start.objective)) return;
  const auto t0 = std::chrono::steady_clock::now();
  FitSetup tight = setup;
  tight.point = start.parameters;
  tight.objective.integrator.rtol *= kPolishFactor;
  tight.objective.integrator.atol *= kPolishFactor;
  LocalSettings s = settings;
  s.functionTolerance *= kPolishStopFactor;
  s.parameterTolerance *= kPolishStopFactor;
  FitObjective f(problem, tight, monitor);
  std::vector<double> x;
  for (int p : tight.free) x.push_back(start.parameters[static_cast<std::size_t>(p)]);
  double best = start.objective;
  StartStatus status = start.status;
  std::string what;
  // L-BFGS first, then (least squares) LM from where it ended. Its quasi-Newton Hessian carries
  // the residuals' second-order terms that LM's JᵀJ lacks, which matter in a flat valley with
  // non-zero residuals: on Crauste_CellSystems2017 the LM polish moved a start at 191.0217 to
  // 191.0206 in 1000 iterations, L-BFGS one at 190.9733 to 190.9673 in 182, and LM from there
  // to 190.9670 (docs/benchmarks/estimation.md, 2026-11-26 third run).
  const int phases = leastSquares ? 2 : 1;
  for (int phase = 0; phase < phases; ++phase) {
    LocalResult r;
    try {
      r = phase == 0 ? minimizeQuasiNewton(f, x, s) : minimizeLeastSquares(f, x, s);
    } catch (const std::exception& e) {
      r.status = StartStatus::Failed;
      r.message = e.what();
    }
    char line[200];
    std::snprintf(line, sizeof line, "%s %s: %s, %.12g after %d iterations",
                  phase == 0 ? "" : ";", phase == 0 ? "L-BFGS" : "LM", toString(r.status),
                  r.objective, r.iterations);
    what += line;
    start.iterations += r.iterations;
    if (r.status == StartStatus::Cancelled) break;
    // NLopt's "failed" after its line search found no decrease still returns its best point.
    if (std::isfinite(r.objective) && r.objective < best && r.x.size() == x.size()) {
      best = r.objective;
      x = r.x;
      status = r.status == StartStatus::Failed ? StartStatus::Stalled : r.status;
    }
  }
  char head[120];
  std::snprintf(head, sizeof head, "; polished at rtol %.3g from %.12g:",
                tight.objective.integrator.rtol, start.objective);
  start.message += head + what;
  start.objectiveEvaluations += f.objectiveEvaluations();
  start.gradientEvaluations += f.gradientEvaluations();
  start.wallSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!(best < start.objective)) return;
  start.parameters = f.fullPoint(x.data());
  start.objective = best;
  start.objectiveRtol = tight.objective.integrator.rtol;
  start.status = status;
}

}  // namespace sensode::estimation::detail
