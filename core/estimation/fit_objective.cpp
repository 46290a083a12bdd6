// SPDX-License-Identifier: MIT
#include "core/estimation/fit_objective.h"

#include <cmath>
#include <numbers>

#include "core/common/errors.h"

namespace sensode::estimation::detail {

namespace {

// z = m − y on the transformed scale and dz/dy.
std::pair<double, double> transformedResidual(petab::Transformation t, double m, double y) {
  switch (t) {
    case petab::Transformation::Lin: return {m - y, -1.0};
    case petab::Transformation::Log: return {std::log(m) - std::log(y), -1.0 / y};
    case petab::Transformation::Log10:
      return {std::log10(m) - std::log10(y), -1.0 / (y * std::numbers::ln10)};
  }
  return {m - y, -1.0};
}

// A free parameter's normal prior as a residual: (v − μ)/σ and its derivative w.r.t. the
// parameter on its scale q. Only for Normal and ParameterScaleNormal priors.
std::pair<double, double> priorResidual(const petab::Parameter& p, double q) {
  const bool onScale = p.prior.type == petab::PriorType::ParameterScaleNormal;
  const double v = onScale ? q : petab::fromScale(p.scale, q);
  const double dv = onScale || p.scale == petab::Scale::Lin ? 1.0
                    : p.scale == petab::Scale::Log          ? v
                                                            : v * std::numbers::ln10;
  return {(v - p.prior.a) / p.prior.b, dv / p.prior.b};
}

bool isNormalPrior(petab::PriorType t) {
  return t == petab::PriorType::Normal || t == petab::PriorType::ParameterScaleNormal;
}

}  // namespace

std::optional<std::string> notLeastSquares(const petab::Problem& problem,
                                           const std::vector<int>& freeTableIndices) {
  for (const petab::Measurement& m : problem.measurements) {
    const petab::Observable& o = problem.observables[static_cast<std::size_t>(m.observable)];
    if (o.distribution != petab::NoiseDistribution::Normal)
      return "observable '" + o.id + "' has " + petab::toString(o.distribution) +
             " noise (its negative log-likelihood is not a sum of squares)";
  }
  for (int j : freeTableIndices) {
    const petab::Parameter& p = problem.parameters[static_cast<std::size_t>(j)];
    const petab::PriorType t = p.prior.type;
    if (t != petab::PriorType::None && t != petab::PriorType::Uniform &&
        t != petab::PriorType::ParameterScaleUniform && !isNormalPrior(t))
      return "parameter '" + p.id + "' has a " + petab::toString(t) +
             " prior (not a square of a residual)";
  }
  return std::nullopt;
}

FitObjective::FitObjective(const petab::Problem& problem, FitSetup setup, ProgressMonitor monitor)
    : problem_(problem), setup_(std::move(setup)), monitor_(std::move(monitor)) {
  tableIndex_ = petab::estimatedParameters(problem_);
}

std::vector<double> FitObjective::fullPoint(const double* x) const {
  std::vector<double> q = setup_.point;
  for (std::size_t i = 0; i < setup_.free.size(); ++i)
    q[static_cast<std::size_t>(setup_.free[i])] = x[i];
  return q;
}

FitObjective::Residuals FitObjective::residuals(const double* x, bool jacobian) {
  petab::ObjectiveOptions options = setup_.objective;
  options.measurementSensitivities = jacobian;
  const std::vector<double> q = fullPoint(x);
  ++evaluations_;
  if (jacobian) ++gradientEvaluations_;
  Residuals out;
  out.evaluation = petab::evaluateObjective(
      problem_, q, jacobian ? petab::GradientMethod::Forward : petab::GradientMethod::None,
      options, monitor_);
  const petab::ObjectiveResult& e = out.evaluation;
  countIntegrator(e);
  if (jacobian) countFallbacks(e);
  out.objective = e.objective;
  const auto nm = static_cast<Eigen::Index>(problem_.measurements.size());
  const auto n = static_cast<Eigen::Index>(setup_.free.size());
  std::vector<int> priors;
  for (int f : setup_.free)
    if (isNormalPrior(problem_.parameters[static_cast<std::size_t>(
                                              tableIndex_[static_cast<std::size_t>(f)])]
                          .prior.type))
      priors.push_back(f);
  const Eigen::Index rows = nm * (setup_.noiseResiduals ? 2 : 1) +
                            static_cast<Eigen::Index>(priors.size());
  out.values.resize(rows);
  if (jacobian) out.jacobian.resize(rows, n);
  for (Eigen::Index i = 0; i < nm; ++i) {
    const petab::Measurement& m = problem_.measurements[static_cast<std::size_t>(i)];
    const petab::Observable& o = problem_.observables[static_cast<std::size_t>(m.observable)];
    const double y = e.simulated[static_cast<std::size_t>(i)];
    const double sigma = e.sigma[static_cast<std::size_t>(i)];
    const auto [z, dz] = transformedResidual(o.transformation, m.value, y);
    const double r = z / sigma;
    out.values(i) = r;
    for (Eigen::Index k = 0; jacobian && k < n; ++k) {
      const Eigen::Index c = setup_.free[static_cast<std::size_t>(k)];
      const double dy = e.simulatedSensitivities(i, c), ds = e.sigmaSensitivities(i, c);
      out.jacobian(i, k) = dz * dy / sigma - r / sigma * ds;
    }
    if (setup_.noiseResiduals) {
      const double arg = 2 * std::log(sigma) + kNoiseOffset;
      if (!(arg > 0))
        throw Error("measurement row " + std::to_string(m.row) + ": noise σ = " +
                    std::to_string(sigma) + " is below the least-squares form's range (e^-25)");
      const double s = std::sqrt(arg);
      out.values(nm + i) = s;
      for (Eigen::Index k = 0; jacobian && k < n; ++k) {
        const Eigen::Index c = setup_.free[static_cast<std::size_t>(k)];
        out.jacobian(nm + i, k) = e.sigmaSensitivities(i, c) / (sigma * s);
      }
    }
  }
  Eigen::Index row = nm * (setup_.noiseResiduals ? 2 : 1);
  for (int f : priors) {
    const petab::Parameter& p =
        problem_.parameters[static_cast<std::size_t>(tableIndex_[static_cast<std::size_t>(f)])];
    const auto [v, dv] = priorResidual(p, q[static_cast<std::size_t>(f)]);
    out.values(row) = v;
    if (jacobian) {
      out.jacobian.row(row).setZero();
      for (Eigen::Index k = 0; k < n; ++k)
        if (setup_.free[static_cast<std::size_t>(k)] == f) out.jacobian(row, k) = dv;
    }
    ++row;
  }
  return out;
}

double FitObjective::value(const double* x, double* gradient) {
  const std::vector<double> q = fullPoint(x);
  ++evaluations_;
  const petab::GradientMethod method =
      gradient ? setup_.gradient : petab::GradientMethod::None;
  if (gradient) ++gradientEvaluations_;
  const petab::ObjectiveResult r =
      petab::evaluateObjective(problem_, q, method, setup_.objective, monitor_);
  countIntegrator(r);
  if (gradient) countFallbacks(r);
  if (gradient)
    for (std::size_t i = 0; i < setup_.free.size(); ++i)
      gradient[i] = r.gradient[static_cast<std::size_t>(setup_.free[i])];
  return r.objective;
}

std::vector<double> weightedResiduals(const petab::Problem& problem,
                                      const petab::ObjectiveResult& evaluation) {
  std::vector<double> out(problem.measurements.size(), std::nan(""));
  for (std::size_t i = 0; i < problem.measurements.size(); ++i) {
    const petab::Measurement& m = problem.measurements[i];
    const double y = evaluation.simulated[i], sigma = evaluation.sigma[i];
    if (!std::isfinite(y) || !std::isfinite(sigma)) continue;
    const petab::Observable& o = problem.observables[static_cast<std::size_t>(m.observable)];
    out[i] = transformedResidual(o.transformation, m.value, y).first / sigma;
  }
  return out;
}

Eigen::MatrixXd fisherInformation(const petab::Problem& problem,
                                  const petab::ObjectiveResult& e, const std::vector<int>& free) {
  const auto n = static_cast<Eigen::Index>(free.size());
  Eigen::MatrixXd fim = Eigen::MatrixXd::Zero(n, n);
  Eigen::RowVectorXd dz(n), ds(n);
  for (std::size_t i = 0; i < problem.measurements.size(); ++i) {
    const petab::Measurement& m = problem.measurements[i];
    const double y = e.simulated[i], sigma = e.sigma[i];
    if (!std::isfinite(y) || !std::isfinite(sigma)) continue;
    const petab::Observable& o = problem.observables[static_cast<std::size_t>(m.observable)];
    const double dzdy = transformedResidual(o.transformation, m.value, y).second;
    for (Eigen::Index k = 0; k < n; ++k) {
      dz(k) = dzdy * e.simulatedSensitivities(static_cast<Eigen::Index>(i), free[static_cast<std::size_t>(k)]);
      ds(k) = e.sigmaSensitivities(static_cast<Eigen::Index>(i), free[static_cast<std::size_t>(k)]);
    }
    const double scaleWeight = o.distribution == petab::NoiseDistribution::Normal ? 2.0 : 1.0;
    fim += (dz.transpose() * dz + scaleWeight * ds.transpose() * ds) / (sigma * sigma);
  }
  const std::vector<int> table = petab::estimatedParameters(problem);
  for (Eigen::Index k = 0; k < n; ++k) {
    const petab::Parameter& p = problem.parameters[static_cast<std::size_t>(
        table[static_cast<std::size_t>(free[static_cast<std::size_t>(k)])])];
    if (!isNormalPrior(p.prior.type)) continue;
    const double dv = priorResidual(p, e.parameters[static_cast<std::size_t>(free[static_cast<std::size_t>(k)])]).second;
    fim(k, k) += dv * dv;
  }
  return fim;
}

}  // namespace sensode::estimation::detail
