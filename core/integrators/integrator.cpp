// SPDX-License-Identifier: MIT
#include "core/integrators/integrator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <charconv>

#include "core/common/errors.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/odesd_integrator.h"

namespace sensode::integrators {

const char* toString(Method m) {
  switch (m) {
    case Method::OdeSd: return "odesd";
    case Method::Cvodes: return "cvodes";
  }
  return "unknown";
}

std::optional<Method> methodFromString(const std::string& s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "odesd") return Method::OdeSd;
  if (lower == "cvodes") return Method::Cvodes;
  return std::nullopt;
}

const char* toString(SensitivityCorrector c) {
  switch (c) {
    case SensitivityCorrector::Staggered: return "staggered";
    case SensitivityCorrector::Simultaneous: return "simultaneous";
    case SensitivityCorrector::Augmented: return "augmented";
  }
  return "unknown";
}

std::optional<SensitivityCorrector> sensitivityCorrectorFromString(const std::string& s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const SensitivityCorrector c :
       {SensitivityCorrector::Staggered, SensitivityCorrector::Simultaneous,
        SensitivityCorrector::Augmented}) {
    if (lower == toString(c)) return c;
  }
  return std::nullopt;
}

namespace {

std::string violation(const char* field, const std::string& value, const char* constraint) {
  return std::string("IntegratorOptions::") + field + " = " + value +
         ". Violated constraint: " + constraint;
}

// Shortest text that reads back as v ("-1", "1e-06").
std::string num(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::optional<std::string> IntegratorOptions::validate() const {
  // Written so that NaN fails every check.
  if (!(rtol > 0)) return violation("rtol", num(rtol), "rtol > 0");
  if (!(rtol < 1)) return violation("rtol", num(rtol), "rtol < 1");
  if (!(atol > 0)) return violation("atol", num(atol), "atol > 0");
  if (!std::isfinite(atol)) return violation("atol", num(atol), "atol finite");
  if (!(maxSteps > 0)) return violation("maxSteps", std::to_string(maxSteps), "maxSteps > 0");
  if (!(maxStepSize > 0)) return violation("maxStepSize", num(maxStepSize), "maxStepSize > 0");
  if (!(initialStepSize >= 0) || !std::isfinite(initialStepSize)) {
    return violation("initialStepSize", num(initialStepSize),
                     "initialStepSize >= 0 and finite (0 = automatic)");
  }
  if (initialStepSize > maxStepSize) {
    return violation("initialStepSize", num(initialStepSize), "initialStepSize <= maxStepSize");
  }
  return std::nullopt;
}

std::unique_ptr<Integrator> makeIntegrator(Method method) {
  switch (method) {
    case Method::Cvodes: return std::make_unique<CvodesIntegrator>();
    case Method::OdeSd: return std::make_unique<OdeSdIntegrator>();
  }
  throw InvalidOptions("unknown integration method");
}

void accumulate(IntegratorStats& into, const IntegratorStats& s) {
  into.steps += s.steps;
  into.rhsEvals += s.rhsEvals;
  into.jacEvals += s.jacEvals;
  into.luFactorizations += s.luFactorizations;
  into.newtonIterations += s.newtonIterations;
  into.newtonFailures += s.newtonFailures;
  into.errorTestFailures += s.errorTestFailures;
  into.secondDerivativeEvals += s.secondDerivativeEvals;
  into.jacobianOfSecondEvals += s.jacobianOfSecondEvals;
  into.sensitivityRhsEvals += s.sensitivityRhsEvals;
  into.sensitivityErrorTestFailures += s.sensitivityErrorTestFailures;
  into.handoverSteps += s.handoverSteps;
  into.fallbackSteps += s.fallbackSteps;
  if (into.handoverTime < 0) into.handoverTime = s.handoverTime;
  for (const std::string& f : s.fallbacks)
    if (std::find(into.fallbacks.begin(), into.fallbacks.end(), f) == into.fallbacks.end())
      into.fallbacks.push_back(f);
}

}  // namespace sensode::integrators
