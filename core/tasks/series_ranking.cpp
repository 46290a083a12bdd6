// SPDX-License-Identifier: MIT
#include "core/tasks/series_ranking.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sensode::tasks {

namespace {

constexpr double kNoiseFloor = 1e-6;     // of the largest |value| of all columns
constexpr double kConstant = 1e-9;       // variation below this: a flat line

}  // namespace

std::vector<double> seriesVariation(const TimeCourseResult& s) {
  const std::size_t ny = s.columns.size(), nt = s.times.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> lo(ny, inf), hi(ny, -inf), largest(ny, 0.0);
  double overall = 0;
  for (std::size_t it = 0; it < nt && (it + 1) * ny <= s.values.size(); ++it)
    for (std::size_t c = 0; c < ny; ++c) {
      const double v = s.at(it, c);
      if (!std::isfinite(v)) continue;
      lo[c] = std::min(lo[c], v);
      hi[c] = std::max(hi[c], v);
      largest[c] = std::max(largest[c], std::abs(v));
      overall = std::max(overall, std::abs(v));
    }
  const double floor = kNoiseFloor * overall;
  std::vector<double> variation(ny, 0.0);
  for (std::size_t c = 0; c < ny; ++c) {
    const double scale = std::max(largest[c], floor);
    if (hi[c] > lo[c] && scale > 0) variation[c] = (hi[c] - lo[c]) / scale;
  }
  return variation;
}

std::vector<std::size_t> mostVaryingColumns(const TimeCourseResult& s, std::size_t count) {
  const std::vector<double> variation = seriesVariation(s);
  std::vector<std::size_t> order(variation.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return variation[a] > variation[b]; });
  std::vector<std::size_t> chosen;
  for (std::size_t c : order) {
    if (chosen.size() == count || !(variation[c] >= kConstant)) break;
    chosen.push_back(c);
  }
  return chosen;
}

}  // namespace sensode::tasks
