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
  s.functionTolerance *= kPolishFactor;
  s.parameterTolerance *= kPolishFactor;
  FitObjective f(problem, tight, monitor);
  std::vector<double> x;
  for (int p : tight.free) x.push_back(start.parameters[static_cast<std::size_t>(p)]);
  LocalResult r;
  try {
    r = leastSquares ? minimizeLeastSquares(f, x, s) : minimizeQuasiNewton(f, x, s);
  } catch (const std::exception& e) {
    r.status = StartStatus::Failed;
    r.message = e.what();
  }
  char line[160];
  std::snprintf(line, sizeof line, "; polished at rtol %.3g: %s, %.12g → %.12g after %d iterations",
                tight.objective.integrator.rtol, toString(r.status), start.objective, r.objective,
                r.iterations);
  start.message += line;
  start.iterations += r.iterations;
  start.objectiveEvaluations += f.objectiveEvaluations();
  start.gradientEvaluations += f.gradientEvaluations();
  start.wallSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.status == StartStatus::Failed || r.status == StartStatus::Cancelled ||
      !(r.objective < start.objective))
    return;
  start.parameters = f.fullPoint(r.x.data());
  start.objective = r.objective;
  start.status = r.status;
}

}  // namespace sensode::estimation::detail
