// SPDX-License-Identifier: MIT
#include "core/tasks/output_grid.h"

namespace sensode::tasks {

std::vector<double> equallySpacedTimes(double tEnd, long points) {
  std::vector<double> times(static_cast<std::size_t>(points));
  for (long i = 0; i < points; ++i)
    times[static_cast<std::size_t>(i)] =
        tEnd * static_cast<double>(i) / static_cast<double>(points - 1);
  times.back() = tEnd;
  return times;
}

}  // namespace sensode::tasks
