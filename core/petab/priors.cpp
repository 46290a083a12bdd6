// SPDX-License-Identifier: MIT
#include "core/petab/priors.h"

#include <cmath>
#include <numbers>

#include "core/petab/petab_problem.h"

namespace sensode::petab {

const char* toString(PriorType t) {
  switch (t) {
    case PriorType::None: return "none";
    case PriorType::Uniform: return "uniform";
    case PriorType::Normal: return "normal";
    case PriorType::Laplace: return "laplace";
    case PriorType::LogNormal: return "logNormal";
    case PriorType::LogLaplace: return "logLaplace";
    case PriorType::ParameterScaleUniform: return "parameterScaleUniform";
    case PriorType::ParameterScaleNormal: return "parameterScaleNormal";
    case PriorType::ParameterScaleLaplace: return "parameterScaleLaplace";
  }
  return "unknown";
}

std::optional<PriorType> priorTypeFromString(const std::string& s) {
  for (PriorType t : {PriorType::Uniform, PriorType::Normal, PriorType::Laplace,
                      PriorType::LogNormal, PriorType::LogLaplace,
                      PriorType::ParameterScaleUniform, PriorType::ParameterScaleNormal,
                      PriorType::ParameterScaleLaplace})
    if (s == toString(t)) return t;
  return std::nullopt;
}

std::optional<std::string> validatePrior(const Prior& p) {
  if (!std::isfinite(p.a) || !std::isfinite(p.b)) return "prior parameters must be finite";
  switch (p.type) {
    case PriorType::None: return std::nullopt;
    case PriorType::Uniform:
    case PriorType::ParameterScaleUniform:
      if (!(p.a < p.b)) return "a uniform prior needs lower < upper";
      return std::nullopt;
    case PriorType::Normal:
    case PriorType::LogNormal:
    case PriorType::ParameterScaleNormal:
      if (!(p.b > 0)) return "the standard deviation (second parameter) must be > 0";
      return std::nullopt;
    case PriorType::Laplace:
    case PriorType::LogLaplace:
    case PriorType::ParameterScaleLaplace:
      if (!(p.b > 0)) return "the scale (second parameter) must be > 0";
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

double sign(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }

// −log p(v) and d/dv for the densities on v itself.
PriorValue uniform(double a, double b, double v) {
  if (v < a || v > b) return {INFINITY, 0};
  return {std::log(b - a), 0};
}
PriorValue normal(double mu, double sigma, double v) {
  const double r = (v - mu) / sigma;
  return {0.5 * std::log(2 * std::numbers::pi * sigma * sigma) + 0.5 * r * r, r / sigma};
}
PriorValue laplace(double mu, double b, double v) {
  return {std::log(2 * b) + std::abs(v - mu) / b, sign(v - mu) / b};
}

}  // namespace

PriorValue evaluatePrior(const Prior& p, Scale scale, double q) {
  switch (p.type) {
    case PriorType::None: return {};
    case PriorType::ParameterScaleUniform: return uniform(p.a, p.b, q);
    case PriorType::ParameterScaleNormal: return normal(p.a, p.b, q);
    case PriorType::ParameterScaleLaplace: return laplace(p.a, p.b, q);
    default: break;
  }
  const double x = fromScale(scale, q);
  const double dxdq = scale == Scale::Lin ? 1.0 : scale == Scale::Log ? x : x * std::numbers::ln10;
  PriorValue v;
  switch (p.type) {
    case PriorType::Uniform: v = uniform(p.a, p.b, x); break;
    case PriorType::Normal: v = normal(p.a, p.b, x); break;
    case PriorType::Laplace: v = laplace(p.a, p.b, x); break;
    case PriorType::LogNormal:
    case PriorType::LogLaplace: {
      if (!(x > 0)) return {INFINITY, 0};
      // p(x) = p_ln(ln x) / x: the density of ln x over x.
      const PriorValue inner = p.type == PriorType::LogNormal ? normal(p.a, p.b, std::log(x))
                                                              : laplace(p.a, p.b, std::log(x));
      v = {inner.value + std::log(x), (inner.derivative + 1) / x};
      break;
    }
    default: break;
  }
  v.derivative *= dxdq;
  return v;
}

}  // namespace sensode::petab
