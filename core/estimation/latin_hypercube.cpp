// SPDX-License-Identifier: MIT
#include "core/estimation/latin_hypercube.h"

#include <numeric>
#include <random>
#include <utility>

#include "core/common/cancellation.h"

namespace sensode::estimation::detail {

std::vector<std::vector<double>> latinHypercube(const std::vector<double>& lower,
                                                const std::vector<double>& upper, int count,
                                                std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  // 53 random bits in [0, 1): std::uniform_real_distribution's algorithm is unspecified.
  const auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  const auto n = lower.size();
  const auto m = static_cast<std::size_t>(count);
  std::vector<std::vector<double>> points(m, std::vector<double>(n));
  std::vector<std::size_t> strata(m);
  // A screen's millions of coordinates take a noticeable time (500000 points of 9 parameters:
  // 0.1 s idle, 0.5 s on a loaded machine): a cancel from the GUI (its CancellationScope) ends it.
  constexpr std::size_t kCancelCheck = 1 << 16;
  for (std::size_t i = 0; i < n; ++i) {
    std::iota(strata.begin(), strata.end(), 0);
    for (std::size_t k = m; k > 1; --k) {
      if (k % kCancelCheck == 0) throwIfCancelled();
      std::swap(strata[k - 1], strata[rng() % k]);  // Fisher–Yates
    }
    for (std::size_t k = 0; k < m; ++k) {
      if (k % kCancelCheck == 0) throwIfCancelled();
      const double u = (static_cast<double>(strata[k]) + uniform()) / static_cast<double>(m);
      points[k][i] = lower[i] + u * (upper[i] - lower[i]);
    }
  }
  return points;
}

}  // namespace sensode::estimation::detail
