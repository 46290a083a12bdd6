// SPDX-License-Identifier: MIT
#include "core/estimation/fit_statistics.h"

#include <cmath>
#include <limits>
#include <map>
#include <numbers>

#include <Eigen/Eigenvalues>

#include "core/estimation/fit_objective.h"

namespace sensode::estimation::detail {

double normalQuantile(double p) {
  if (!(p > 0 && p < 1)) return std::numeric_limits<double>::quiet_NaN();
  // P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
  // function" (relative error 1.15e-9), coefficients as published.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  const double low = 0.02425;
  double x;
  if (p < low) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - low) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step on Φ(x) − p with Φ(x) = erfc(−x/√2)/2.
  const double e = 0.5 * std::erfc(-x / std::numbers::sqrt2) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

FitStatistics computeStatistics(const petab::Problem& problem,
                                const petab::ObjectiveResult& evaluation,
                                const std::vector<int>& free,
                                const std::vector<EstimatedParameter>& parameters,
                                double confidenceLevel) {
  FitStatistics s;
  const auto n = static_cast<Eigen::Index>(free.size());
  for (const EstimatedParameter& p : parameters) s.parameterIds.push_back(p.id);
  s.fisher = fisherInformation(problem, evaluation, free);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(s.fisher);
  s.eigenvalues = eig.eigenvalues();
  s.eigenvectors = eig.eigenvectors();
  const double largest = n > 0 ? std::max(s.eigenvalues(n - 1), 0.0) : 0.0;
  const double cutoff =
      static_cast<double>(std::max<Eigen::Index>(n, 1)) * std::numeric_limits<double>::epsilon() * largest;
  Eigen::VectorXd inverse = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd nullWeight = Eigen::VectorXd::Zero(n);  // per parameter, Σ v_i² over null vectors
  for (Eigen::Index k = 0; k < n; ++k) {
    if (s.eigenvalues(k) > cutoff && largest > 0) {
      inverse(k) = 1 / s.eigenvalues(k);
      ++s.rank;
    } else {
      nullWeight += s.eigenvectors.col(k).cwiseAbs2();
    }
  }
  const double smallest = n > 0 ? s.eigenvalues(0) : 0.0;
  s.conditionNumber = smallest > 0 ? largest / smallest : std::numeric_limits<double>::infinity();
  s.covariance = s.eigenvectors * inverse.asDiagonal() * s.eigenvectors.transpose();
  const double z = normalQuantile(0.5 * (1 + confidenceLevel));
  s.correlation = Eigen::MatrixXd::Constant(n, n, std::numeric_limits<double>::quiet_NaN());
  for (Eigen::Index i = 0; i < n; ++i) {
    const bool identifiable = nullWeight(i) < 1e-6;
    const double se = identifiable ? std::sqrt(std::max(s.covariance(i, i), 0.0))
                                   : std::numeric_limits<double>::infinity();
    const double q = evaluation.parameters[static_cast<std::size_t>(free[static_cast<std::size_t>(i)])];
    const petab::Scale scale = parameters[static_cast<std::size_t>(i)].scale;
    s.standardErrors.push_back(se);
    s.lower.push_back(q - z * se);
    s.upper.push_back(q + z * se);
    s.lowerLinear.push_back(petab::fromScale(scale, q - z * se));
    s.upperLinear.push_back(petab::fromScale(scale, q + z * se));
    for (Eigen::Index j = 0; j < n; ++j) {
      const double d = std::sqrt(s.covariance(i, i) * s.covariance(j, j));
      if (d > 0) s.correlation(i, j) = s.covariance(i, j) / d;
    }
  }
  if (s.rank < n)
    s.message = "the Fisher information has rank " + std::to_string(s.rank) + " of " +
                std::to_string(n) +
                ": the covariance is its pseudo-inverse, and parameters along its null "
                "eigenvectors are not identifiable from these data (standard error inf)";

  const std::vector<double> r = weightedResiduals(problem, evaluation);
  std::map<int, ResidualSummary> perObservable;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (std::isnan(r[i])) continue;
    const int o = problem.measurements[i].observable;
    ResidualSummary& rs = perObservable[o];
    rs.observableId = problem.observables[static_cast<std::size_t>(o)].id;
    ++rs.count;
    rs.mean += r[i];
    rs.chiSquare += r[i] * r[i];
    rs.maxAbs = std::max(rs.maxAbs, std::abs(r[i]));
    s.chiSquare += r[i] * r[i];
    ++s.measurements;
  }
  for (auto& [o, rs] : perObservable) {
    rs.mean /= rs.count;
    rs.rms = std::sqrt(rs.chiSquare / rs.count);
    s.residuals.push_back(rs);
  }
  s.degreesOfFreedom = s.measurements - static_cast<int>(n);
  s.available = true;
  return s;
}

}  // namespace sensode::estimation::detail
