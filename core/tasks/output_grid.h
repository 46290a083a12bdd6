// SPDX-License-Identifier: MIT
// The output times of a time course or a sensitivity run when the user gives only an end time
// and a count: linspace(0, t_end, points) with the last time exactly t_end. The defaults are
// the ones `sensode simulate` / `sensode sensitivities` use without --t-end and --points and the
// GUI's Time course and Parameter sensitivities tasks start from, so the same model gives the
// same first picture in both.
#pragma once

#include <vector>

namespace sensode::tasks {

inline constexpr double kDefaultEndTime = 10;
inline constexpr long kDefaultOutputPoints = 101;

// `points` >= 2 equally spaced times from 0 to tEnd (> 0), the last one exactly tEnd.
std::vector<double> equallySpacedTimes(double tEnd, long points);

}  // namespace sensode::tasks
