// SPDX-License-Identifier: MIT
// Profile likelihood (internal to core/estimation; Raue et al. 2009): for one parameter, step
// away from the optimum in one direction and, at each value, re-optimise the other free
// parameters from the previous point (warm start), until the objective exceeds the threshold
// optimum + χ²₁(level)/2 (on the negative log-likelihood), the parameter reaches its bound, or
// profileMaxPoints points were taken. The step adapts so that each step raises the objective by
// about a quarter of the threshold's height: doubled (up to profileMaxStep) below an eighth,
// halved above a half; a step that rises by more than the whole height is retaken at half the
// length (down to 1e-4 of the bounds' width).
#pragma once

#include <vector>

#include "core/estimation/estimation.h"
#include "core/estimation/fit_objective.h"
#include "core/estimation/local_optimizers.h"

namespace sensode::estimation::detail {

struct ProfileDirection {
  std::vector<ProfilePoint> points;  // in stepping order, without the optimum
  bool reachedThreshold = false;
  std::string message;  // why it stopped
};

// `setup` is the fit's (every fitted parameter free); `k` the position in setup.free of the
// profiled parameter; `optimum` the full point (table order) of the best fit; direction ±1.
ProfileDirection profileDirection(const petab::Problem& problem, const FitSetup& setup, int k,
                                  const std::vector<double>& optimum, double optimumObjective,
                                  double threshold, int direction, bool leastSquares,
                                  const LocalSettings& settings, const EstimationOptions& options,
                                  const ProgressMonitor& monitor,
                                  const std::function<void()>& pointDone);

// Merges both directions around the optimum into a Profile (sorted, crossing points
// interpolated between the last point below and the first above the threshold, linearly in
// √(objective − optimum): exact for a parabola).
Profile assembleProfile(const std::string& id, int parameter, double optimumValue,
                        const std::vector<double>& optimum, double optimumObjective,
                        double threshold, const ProfileDirection& down,
                        const ProfileDirection& up);

}  // namespace sensode::estimation::detail
