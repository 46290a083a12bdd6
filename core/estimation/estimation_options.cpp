// SPDX-License-Identifier: MIT
// The estimation task's enums, option validation and the default parameter set from the PEtab
// parameter table.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/estimation/estimation.h"

namespace sensode::estimation {

const char* toString(Optimizer o) {
  switch (o) {
    case Optimizer::Auto: return "auto";
    case Optimizer::LeastSquares: return "ls";
    case Optimizer::QuasiNewton: return "qn";
  }
  return "unknown";
}

std::optional<Optimizer> optimizerFromString(const std::string& s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (l == "auto") return Optimizer::Auto;
  if (l == "ls" || l == "least-squares") return Optimizer::LeastSquares;
  if (l == "qn" || l == "quasi-newton") return Optimizer::QuasiNewton;
  return std::nullopt;
}

const char* toString(GlobalPhase g) {
  switch (g) {
    case GlobalPhase::Screen: return "screen";
    case GlobalPhase::ScatterSearch: return "ess";
    case GlobalPhase::None: return "none";
  }
  return "unknown";
}

std::optional<GlobalPhase> globalPhaseFromString(const std::string& s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (l == "screen") return GlobalPhase::Screen;
  if (l == "ess" || l == "scatter-search") return GlobalPhase::ScatterSearch;
  if (l == "none") return GlobalPhase::None;
  return std::nullopt;
}

const char* toString(StartStatus s) {
  switch (s) {
    case StartStatus::Converged: return "converged";
    case StartStatus::MaxIterations: return "max-iterations";
    case StartStatus::Failed: return "failed";
    case StartStatus::Cancelled: return "cancelled";
    case StartStatus::Stalled: return "stalled";
  }
  return "unknown";
}

const char* toString(EstimationResult::Status s) {
  switch (s) {
    case EstimationResult::Status::Success: return "success";
    case EstimationResult::Status::InvalidInput: return "invalid input";
    case EstimationResult::Status::UserAbort: return "cancelled";
    case EstimationResult::Status::Failure: return "failure";
  }
  return "unknown";
}

std::vector<EstimatedParameter> defaultParameters(const petab::Problem& problem) {
  std::vector<EstimatedParameter> out;
  const std::string file =
      problem.parameterFiles.empty() ? std::string("parameter table")
                                     : problem.parameterFiles.front().filename().string();
  for (int j : petab::estimatedParameters(problem)) {
    const petab::Parameter& p = problem.parameters[static_cast<std::size_t>(j)];
    const auto bound = [&](double linear, const char* which) {
      const bool logScale = p.scale != petab::Scale::Lin;
      if (!std::isfinite(linear) || (logScale && !(linear > 0)))
        throw petab::PetabError(file + ": parameter '" + p.id + "': " + which + " " +
                                std::to_string(linear) +
                                (logScale ? " is not a finite positive number (its scale is "
                                          : " is not finite (its scale is ") +
                                petab::toString(p.scale) +
                                "): estimation needs finite bounds to sample starts in");
      return petab::toScale(p.scale, linear);
    };
    EstimatedParameter e;
    e.id = p.id;
    e.scale = p.scale;
    e.lower = bound(p.lowerBound, "lowerBound");
    e.upper = bound(p.upperBound, "upperBound");
    // A nominal value outside the bounds (or 0 on a log scale) starts at the nearest bound.
    const double nominal = p.scale != petab::Scale::Lin && !(p.nominalValue > 0)
                               ? e.lower
                               : petab::toScale(p.scale, p.nominalValue);
    e.start = std::clamp(nominal, e.lower, e.upper);
    out.push_back(e);
  }
  return out;
}

std::optional<std::string> EstimationOptions::validate() const {
  const auto violated = [](const std::string& field, const std::string& value,
                           const std::string& constraint) {
    return "EstimationOptions::" + field + " = " + value + ". Violated constraint: " + constraint;
  };
  if (starts < 1) return violated("starts", std::to_string(starts), "starts >= 1");
  if (screen < 0) return violated("screen", std::to_string(screen), "screen >= 0");
  if (polish < 0) return violated("polish", std::to_string(polish), "polish >= 0");
  if (globalLocalEvery < 0)
    return violated("globalLocalEvery", std::to_string(globalLocalEvery), "globalLocalEvery >= 0");
  if (globalEvaluations < 0)
    return violated("globalEvaluations", std::to_string(globalEvaluations),
                    "globalEvaluations >= 0");
  if (threads < 0) return violated("threads", std::to_string(threads), "threads >= 0");
  if (maxIterations < 1)
    return violated("maxIterations", std::to_string(maxIterations), "maxIterations >= 1");
  if (!(functionTolerance > 0))
    return violated("functionTolerance", std::to_string(functionTolerance), "> 0");
  if (!(parameterTolerance > 0))
    return violated("parameterTolerance", std::to_string(parameterTolerance), "> 0");
  if (!(gradientTolerance > 0))
    return violated("gradientTolerance", std::to_string(gradientTolerance), "> 0");
  if (!(confidenceLevel > 0 && confidenceLevel < 1))
    return violated("confidenceLevel", std::to_string(confidenceLevel), "0 < level < 1");
  if (profileMaxPoints < 1)
    return violated("profileMaxPoints", std::to_string(profileMaxPoints), ">= 1");
  if (!(profileMaxStep > 0)) return violated("profileMaxStep", std::to_string(profileMaxStep), "> 0");
  if (gradient == petab::GradientMethod::None)
    return violated("gradient", "none", "an optimiser needs a gradient method");
  for (const EstimatedParameter& p : parameters) {
    if (!(std::isfinite(p.lower) && std::isfinite(p.upper) && p.lower < p.upper))
      return violated("parameters['" + p.id + "']", "[" + std::to_string(p.lower) + ", " +
                                                        std::to_string(p.upper) + "]",
                      "finite bounds with lower < upper");
    if (!(p.start >= p.lower && p.start <= p.upper))
      return violated("parameters['" + p.id + "'].start", std::to_string(p.start),
                      "inside the bounds");
  }
  return std::nullopt;
}

}  // namespace sensode::estimation
