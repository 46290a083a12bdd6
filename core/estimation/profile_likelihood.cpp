// SPDX-License-Identifier: MIT
#include "core/estimation/profile_likelihood.h"

#include <algorithm>
#include <cmath>

namespace sensode::estimation::detail {

ProfileDirection profileDirection(const petab::Problem& problem, const FitSetup& setup, int k,
                                  const std::vector<double>& optimum, double optimumObjective,
                                  double threshold, int direction, bool leastSquares,
                                  const LocalSettings& settings, const EstimationOptions& options,
                                  const ProgressMonitor& monitor,
                                  const std::function<void()>& pointDone) {
  ProfileDirection out;
  const auto ks = static_cast<std::size_t>(k);
  const int position = setup.free[ks];
  const double bound = direction > 0 ? setup.upper[ks] : setup.lower[ks];
  // The others stay free, the profiled one is written into the point.
  FitSetup inner = setup;
  inner.free.erase(inner.free.begin() + k);
  inner.lower.erase(inner.lower.begin() + k);
  inner.upper.erase(inner.upper.begin() + k);
  const double height = threshold - optimumObjective;
  double step = std::min(options.profileMaxStep, 0.02 * (setup.upper[ks] - setup.lower[ks]));
  const double minStep = 1e-4 * (setup.upper[ks] - setup.lower[ks]);
  std::vector<double> current = optimum;
  double previousObjective = optimumObjective;
  for (int n = 0; n < options.profileMaxPoints; ++n) {
    const double from = current[static_cast<std::size_t>(position)];
    if (from == bound) {
      out.message = "reached the bound " + std::to_string(bound) + " below the threshold";
      return out;
    }
    const double value =
        direction > 0 ? std::min(from + step, bound) : std::max(from - step, bound);
    inner.point = current;
    inner.point[static_cast<std::size_t>(position)] = value;
    std::vector<double> x0;
    for (int f : inner.free) x0.push_back(inner.point[static_cast<std::size_t>(f)]);
    FitObjective objective(problem, inner, monitor);
    LocalResult r;
    if (inner.free.empty()) {  // a one-parameter fit: the profile is the objective itself
      try {
        r.objective = objective.value(nullptr, nullptr);
        r.status = StartStatus::Converged;
      } catch (const Cancelled&) {
        throw;
      } catch (const Error& e) {
        r.message = e.what();
      }
    } else {
      r = leastSquares ? minimizeLeastSquares(objective, x0, settings)
                       : minimizeQuasiNewton(objective, x0, settings);
    }
    if (r.status == StartStatus::Cancelled) throw Cancelled(0);
    if (!std::isfinite(r.objective)) {
      if (step / 2 >= minStep) {  // too far for the warm start: a smaller step
        step /= 2;
        --n;
        continue;
      }
      out.message = "re-optimisation failed at " + std::to_string(value) + ": " + r.message;
      return out;
    }
    // A step that rises by more than the threshold's height jumps over the interval's end:
    // retake it shorter, so the crossing is interpolated between close neighbours.
    if (r.objective - previousObjective > height && step / 2 >= minStep) {
      step /= 2;
      --n;
      continue;
    }
    ProfilePoint p;
    p.value = value;
    p.objective = r.objective;
    p.parameters = objective.fullPoint(r.x.data());
    p.converged = r.status == StartStatus::Converged;
    out.points.push_back(p);
    if (pointDone) pointDone();
    current = p.parameters;
    if (p.objective > threshold) {
      out.reachedThreshold = true;
      out.message = "crossed the threshold";
      return out;
    }
    const double rise = p.objective - previousObjective;
    previousObjective = p.objective;
    if (rise < height / 8) step = std::min(2 * step, options.profileMaxStep);
    else if (rise > height / 2) step = std::max(step / 2, minStep);
  }
  out.message = "stopped after profileMaxPoints = " + std::to_string(options.profileMaxPoints) +
                " points below the threshold";
  return out;
}

Profile assembleProfile(const std::string& id, int parameter, double optimumValue,
                        const std::vector<double>& optimum, double optimumObjective,
                        double threshold, const ProfileDirection& down,
                        const ProfileDirection& up) {
  Profile p;
  p.parameterId = id;
  p.parameter = parameter;
  p.optimumObjective = optimumObjective;
  p.threshold = threshold;
  for (auto it = down.points.rbegin(); it != down.points.rend(); ++it) p.points.push_back(*it);
  p.points.push_back({optimumValue, optimumObjective, optimum, true});
  for (const ProfilePoint& q : up.points) p.points.push_back(q);
  // Crossing by linear interpolation of √(objective − optimum) between the neighbours around
  // the threshold: exact where the profile is a parabola (as it is near the optimum, and
  // everywhere for a model linear in the parameters), where interpolating the objective itself
  // would be off by a fraction of the step.
  const auto rise = [&](const ProfilePoint& q) {
    return std::sqrt(std::max(q.objective - optimumObjective, 0.0));
  };
  const auto cross = [&](const ProfilePoint& inside, const ProfilePoint& outside) {
    const double target = std::sqrt(threshold - optimumObjective);
    const double t = (target - rise(inside)) / (rise(outside) - rise(inside));
    return inside.value + t * (outside.value - inside.value);
  };
  if (down.reachedThreshold) p.lower = cross(p.points[1], p.points[0]);
  if (up.reachedThreshold) p.upper = cross(p.points[p.points.size() - 2], p.points.back());
  p.message = "lower side: " + down.message + "; upper side: " + up.message;
  return p;
}

}  // namespace sensode::estimation::detail
