// SPDX-License-Identifier: MIT
#include "core/tasks/sensitivity_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common/errors.h"

namespace sensode::tasks {

SensitivityDiscrepancy compareSensitivities(const SensitivityResult& a, const SensitivityResult& r,
                                            double rtol) {
  const double tolerance = kFloorMargin * rtol;
  if (a.times != r.times || a.outputIds != r.outputIds || a.parameterIds != r.parameterIds)
    throw InvalidOptions("compare sensitivities: the results differ in times, outputs or parameters");
  if (a.scaled != r.scaled)
    throw InvalidOptions("compare sensitivities: one result is scaled and the other is not");
  const std::size_t nt = r.times.size(), ny = r.outputIds.size(), np = r.parameterIds.size();
  if (a.values.size() != nt * ny * np || r.values.size() != nt * ny * np)
    throw InvalidOptions("compare sensitivities: a result has no values (failed run?)");
  const bool knowsP = !r.scaled && r.parameterValues.size() == np;
  const bool knowsZeros = r.unreached.size() == ny * np;

  // Per (y, p) series: the reference's largest magnitude over time; per output y: its largest
  // response to any parameter, |p·dy/dp| (scaled: |(p/y)·dy/dp|), and its largest |dy/dp|.
  std::vector<double> own(ny * np, 0.0), response(ny, 0.0), largest(ny, 0.0);
  for (std::size_t it = 0; it < nt; ++it)
    for (std::size_t k = 0; k < ny * np; ++k) {
      const double v = std::abs(r.values[it * ny * np + k]);
      if (!std::isfinite(v) || (knowsZeros && r.unreached[k])) continue;
      const std::size_t iy = k / np, ip = k % np;
      own[k] = std::max(own[k], v);
      largest[iy] = std::max(largest[iy], v);
      response[iy] = std::max(response[iy], knowsP ? v * std::abs(r.parameterValues[ip]) : v);
    }
  SensitivityDiscrepancy d;
  d.floorTolerance = tolerance;
  std::vector<double> scale(ny * np, 0.0);
  for (std::size_t k = 0; k < ny * np; ++k) {
    const std::size_t iy = k / np, ip = k % np;
    const double p = knowsP ? std::abs(r.parameterValues[ip]) : 0;
    const double floor = tolerance * (knowsP && p > 0 ? response[iy] / p : largest[iy]);
    scale[k] = std::max(own[k], floor);
    if (knowsZeros && r.unreached[k]) {
      ++d.structuralZeros;
    } else if (floor > own[k]) {
      ++d.flooredSeries;
    }
  }

  d.maxOverTime.assign(nt, 0.0);
  std::vector<double> all;
  all.reserve(nt * ny * np);
  double worst = -1;
  for (std::size_t it = 0; it < nt; ++it)
    for (std::size_t k = 0; k < ny * np; ++k) {
      if (knowsZeros && r.unreached[k]) continue;
      const std::size_t i = it * ny * np + k;
      // NaN in both: an output with no value there (0/0, undefined_outputs.h); nothing to compare.
      if (std::isnan(a.values[i]) && std::isnan(r.values[i])) continue;
      const double diff = std::abs(a.values[i] - r.values[i]);
      // NaN (a failed entry) must not hide: it counts as infinitely wrong.
      const double rel = std::isnan(diff) ? std::numeric_limits<double>::infinity()
                         : scale[k] > 0  ? diff / scale[k]
                                         : diff;
      all.push_back(rel);
      d.maxOverTime[it] = std::max(d.maxOverTime[it], rel);
      if (rel > worst) {
        worst = rel;
        d.worstTime = it;
        d.worstOutput = k / np;
        d.worstParameter = k % np;
      }
    }
  d.comparedEntries = all.size();
  if (all.empty()) return d;
  d.maxRelative = worst;
  const auto mid = all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2);
  std::nth_element(all.begin(), mid, all.end());
  d.medianRelative = *mid;
  if (all.size() % 2 == 0) {
    const double below = *std::max_element(all.begin(), mid);
    d.medianRelative = 0.5 * (d.medianRelative + below);
  }
  return d;
}

std::size_t mostInfluentialParameter(const SensitivityResult& r, double guard) {
  const std::size_t ny = r.outputIds.size(), np = r.parameterIds.size();
  std::vector<double> effect(np, 0.0);
  for (std::size_t it = 0; it < r.times.size(); ++it) {
    const std::vector<double> s = scaledSensitivitiesAt(r, it, guard);
    for (std::size_t k = 0; k < ny * np; ++k)
      if (std::isfinite(s[k])) effect[k % np] = std::max(effect[k % np], std::abs(s[k]));
  }
  std::size_t best = 0;
  for (std::size_t ip = 1; ip < np; ++ip)
    if (effect[ip] > effect[best]) best = ip;
  return best;
}

std::vector<double> scaledSensitivitiesAt(const SensitivityResult& r, std::size_t it, double guard) {
  const std::size_t ny = r.outputIds.size(), np = r.parameterIds.size();
  std::vector<double> out(ny * np, std::numeric_limits<double>::quiet_NaN());
  if (it >= r.times.size() || r.values.size() < (it + 1) * ny * np) return out;
  for (std::size_t iy = 0; iy < ny; ++iy) {
    const std::size_t a = it * ny + iy;
    if (r.scaled) {
      if (a < r.guarded.size() && r.guarded[a]) continue;
      for (std::size_t ip = 0; ip < np; ++ip) out[iy * np + ip] = r.at(it, iy, ip);
      continue;
    }
    const double y = r.outputValues[a];
    if (!(std::abs(y) > guard) || r.parameterValues.size() != np) continue;
    for (std::size_t ip = 0; ip < np; ++ip)
      out[iy * np + ip] = r.parameterValues[ip] / y * r.at(it, iy, ip);
  }
  return out;
}

}  // namespace sensode::tasks
