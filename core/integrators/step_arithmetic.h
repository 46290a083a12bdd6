// SPDX-License-Identifier: MIT
// The two functions of libm that odeSD's step control used, computed without calling libm.
//
// Why: the first call of std::pow in a process costs 60–110 µs on a virtual machine (the lazy
// binding, and page faults on libm's code and its log and exp tables), measured with a C
// program and in `sensode sensitivities` runs whose steps take 50–150 µs in all
// (performance.md §16). The step-size factor err^(−1/q) is one call per step, so its first call
// was a fixed cost of every short odeSD run. Plain arithmetic on the integrator's own pages has
// no such cost; the results differ from libm's in the last bits only.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sensode::integrators {

// x^(−1/q) for x > 0 and q ≥ 1, within a few ulps of std::pow(x, −1.0 / q) for x in
// [1e-30, 1e30]; x is clamped to that range, which covers every factor the step-size control
// can use (its factors are clamped to [0.2, 1e4], i.e. x within about [1e-20, 1e4] for q ≤ 5).
// Newton's iteration on x·y^q = 1, y ← y + y·(1 − x·y^q)/q, from the guess that halves the
// exponent bits as log2(y) = −log2(x)/q does (within 10 %), converges quadratically.
inline double inverseRoot(double x, int q) {
  x = std::clamp(x, 1e-30, 1e30);
  constexpr std::int64_t one = std::int64_t{1023} << 52;  // the bits of 1.0
  const std::int64_t bits = std::bit_cast<std::int64_t>(x);
  double y = std::bit_cast<double>(one - (bits - one) / q);
  for (int k = 0; k < 8; ++k) {
    double yq = y;
    for (int j = 1; j < q; ++j) yq *= y;
    // The residual by fma: near the root x·y^q − 1 cancels, and its rounding would be the step.
    const double r = std::fma(-x, yq, 1.0);
    const double next = y + y * r / q;
    if (next == y) break;
    y = next;
  }
  return y;
}

// std::nextafter(t, +inf) for a finite or infinite t: the next double above t.
inline double nextUp(double t) {
  if (std::isnan(t) || t == std::numeric_limits<double>::infinity()) return t;
  if (t == 0) return std::numeric_limits<double>::denorm_min();
  const std::int64_t bits = std::bit_cast<std::int64_t>(t);
  return std::bit_cast<double>(t > 0 ? bits + 1 : bits - 1);
}

}  // namespace sensode::integrators
