// SPDX-License-Identifier: MIT
#include "core/estimation/geodesic_acceleration.h"

#include <algorithm>
#include <cmath>

#include "core/common/errors.h"

namespace sensode::estimation::detail {

std::string Acceleration::summary() const {
  return "; geodesic acceleration: " + std::to_string(accelerated) + " trial steps accelerated, " +
         std::to_string(tooCurved) + " too curved (velocity alone), " + std::to_string(skipped) +
         " unaccelerated";
}

bool accelerate(ResidualFunction& f, const Eigen::VectorXd& x, const Eigen::VectorXd& s,
                const ResidualFunction::Values& here, const Eigen::MatrixXd& J,
                const Eigen::MatrixXd& Jf, const Eigen::LDLT<Eigen::MatrixXd>& factor,
                const Eigen::VectorXd& d, const std::vector<int>& free,
                const std::vector<double>& lo, const std::vector<double>& hi,
                Eigen::VectorXd& trial, Acceleration& counts) {
  const auto m = static_cast<Eigen::Index>(free.size());
  const auto at = [&](Eigen::Index c) { return free[static_cast<std::size_t>(c)]; };
  double sNorm = 0;  // |s|_D²
  for (Eigen::Index c = 0; c < m; ++c) sNorm += d(c) * s(at(c)) * s(at(c));
  if (!(sNorm > 0)) {  // nothing to accelerate (a step below the rounding of x)
    ++counts.skipped;
    return false;
  }
  const Eigen::VectorXd shifted = x + kAccelerationStep * s;
  Eigen::VectorXd shiftedValues;
  ++counts.evaluations;
  try {
    shiftedValues = f.evaluate(shifted.data(), false).values;
  } catch (const Cancelled&) {
    throw;
  } catch (const Error&) {
  }
  if (shiftedValues.size() != here.values.size() || !shiftedValues.allFinite()) {
    ++counts.skipped;
    return false;
  }
  const double h = kAccelerationStep;
  const Eigen::VectorXd rvv = (2 / h) * ((shiftedValues - here.values) / h - J * s);
  const Eigen::VectorXd a = factor.solve(-(Jf.transpose() * rvv));
  double aNorm = 0;
  for (Eigen::Index c = 0; c < m; ++c) aNorm += d(c) * a(c) * a(c);
  counts.lastRatio = 2 * std::sqrt(aNorm / sNorm);
  if (!a.allFinite() || !(2 * std::sqrt(aNorm) <= kAccelerationRatio * std::sqrt(sNorm))) {
    ++counts.tooCurved;
    return false;
  }
  ++counts.accelerated;
  for (Eigen::Index c = 0; c < m; ++c) {
    const auto i = static_cast<std::size_t>(at(c));
    trial(at(c)) = std::clamp(x(at(c)) + s(at(c)) + 0.5 * a(c), lo[i], hi[i]);
  }
  return true;
}

}  // namespace sensode::estimation::detail
