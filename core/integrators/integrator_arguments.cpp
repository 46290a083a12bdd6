// SPDX-License-Identifier: MIT
#include "core/integrators/integrator_arguments.h"

#include <cmath>

#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::integrators {

void checkInitialValues(const std::string& who, const symbolic::CompiledModel& model,
                        const IntegratorOptions& options, double t0,
                        const std::vector<double>& x0, const std::vector<double>& p) {
  if (auto problem = options.validate()) throw InvalidOptions(*problem);
  if (!std::isfinite(t0)) {
    throw InvalidOptions(who + ": t0 = " + preciseNumber(t0) + " is not finite");
  }
  const int nx = model.nx();
  if (static_cast<int>(x0.size()) != nx || static_cast<int>(p.size()) != model.np()) {
    throw Error(who + "::initialize: x0 has " + std::to_string(x0.size()) + " values and p " +
                std::to_string(p.size()) + ", the model needs " + std::to_string(nx) + " and " +
                std::to_string(model.np()));
  }
}

void checkOutputTime(const std::string& who, double tout, double t) {
  if (!(tout >= t) || !std::isfinite(tout)) {
    throw InvalidOptions(who + "::advanceTo: tout = " + preciseNumber(tout, 17) +
                         " is not a finite time after the current time " + preciseNumber(t, 17));
  }
}

bool advanceWithoutSteps(double tout, int nx, double& t, const std::vector<double>& xLast,
                         std::vector<double>& x, const ProgressMonitor& monitor) {
  if (tout == t) {
    x = xLast;
    return true;
  }
  if (nx != 0) return false;
  monitor.check({tout, tout, 0});
  t = tout;
  x.clear();
  return true;
}

void checkStopTime(const std::string& who, double tStop, double t) {
  if (!(tStop >= t)) {
    throw InvalidOptions(who + ": stop time " + preciseNumber(tStop, 17) +
                         " is before the current time " + preciseNumber(t, 17));
  }
}

void checkSensitivityRequest(const std::string& who, int np, int nx,
                             const std::vector<int>& paramIndices, const std::vector<double>& s0) {
  for (const int k : paramIndices) {
    if (k < 0 || k >= np) {
      throw InvalidOptions(who + "::enableSensitivities: parameter index " + std::to_string(k) +
                           " outside [0, " + std::to_string(np) + ")");
    }
  }
  const std::size_t expected = static_cast<std::size_t>(nx) * paramIndices.size();
  if (s0.size() != expected) {
    throw InvalidOptions(who + "::enableSensitivities: s0 has " + std::to_string(s0.size()) +
                         " values, expected nx × ns = " + std::to_string(expected));
  }
}

std::vector<double> sensitivityScales(const std::vector<double>& p,
                                      const std::vector<int>& paramIndices) {
  std::vector<double> pbar(paramIndices.size());
  for (std::size_t j = 0; j < paramIndices.size(); ++j) {
    const double pk = std::abs(p[static_cast<std::size_t>(paramIndices[j])]);
    pbar[j] = pk > 0 && std::isfinite(pk) ? pk : 1.0;
  }
  return pbar;
}

}  // namespace sensode::integrators
