// SPDX-License-Identifier: MIT
#include "core/petab/gradient_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/common/errors.h"
#include "core/common/format.h"

namespace sensode::petab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MethodRun runMethod(const Problem& problem, const std::vector<double>& q, GradientMethod method,
                    const ObjectiveOptions& options, const ProgressMonitor& monitor,
                    std::string label) {
  MethodRun run;
  run.label = std::move(label);
  run.method = method;
  if (method == GradientMethod::FiniteDifferences) run.fdStep = options.fdStep;
  const auto start = std::chrono::steady_clock::now();
  try {
    run.result = evaluateObjective(problem, q, method, options, monitor);
    run.ok = true;
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    run.error = e.what();
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace

double relativeDifference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return kNaN;
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff = std::max(diff, std::abs(a[k] - b[k]));
    scale = std::max({scale, std::abs(a[k]), std::abs(b[k])});
  }
  if (!std::isfinite(diff) || !std::isfinite(scale)) return kNaN;
  return scale > 0 ? diff / scale : 0.0;
}

const MethodRun* GradientCheck::find(const std::string& label) const {
  for (const auto& r : runs)
    if (r.label == label) return &r;
  return nullptr;
}

double GradientCheck::analyticSpread() const {
  double worst = kNaN;
  for (std::size_t a = 0; a < runs.size(); ++a)
    for (std::size_t b = a + 1; b < runs.size(); ++b) {
      if (runs[a].method == GradientMethod::FiniteDifferences ||
          runs[b].method == GradientMethod::FiniteDifferences)
        continue;
      const double v = agreement[a][b];
      if (std::isnan(v)) continue;
      worst = std::isnan(worst) ? v : std::max(worst, v);
    }
  return worst;
}

double GradientCheck::fdSpread() const {
  double worst = kNaN;
  std::size_t best = runs.size();
  for (std::size_t a = 0; a < runs.size(); ++a)
    if (runs[a].label == "fd best") best = a;
  if (best == runs.size()) return kNaN;
  for (std::size_t a = 0; a < runs.size(); ++a) {
    if (runs[a].method == GradientMethod::FiniteDifferences) continue;
    const double v = agreement[a][best];
    if (std::isnan(v)) continue;
    worst = std::isnan(worst) ? v : std::max(worst, v);
  }
  return worst;
}

GradientCheck checkGradients(const Problem& problem, const std::vector<double>& scaled,
                             const GradientCheckOptions& options, const ProgressMonitor& monitor) {
  GradientCheck check;
  for (GradientMethod m : options.methods) {
    std::string label = toString(m);
    if (m == GradientMethod::Forward)
      label = options.objective.forwardIntegrator == integrators::Method::OdeSd ? "forward-odesd"
                                                                               : "forward";
    check.runs.push_back(runMethod(problem, scaled, m, options.objective, monitor, label));
  }
  // The mean of the analytic gradients that ran: what "fd best" picks its steps against.
  std::vector<double> mean;
  int analytic = 0;
  for (const auto& r : check.runs) {
    if (!r.ok || r.result.gradient.empty()) continue;
    if (mean.empty()) mean.assign(r.result.gradient.size(), 0.0);
    for (std::size_t k = 0; k < mean.size(); ++k) mean[k] += r.result.gradient[k];
    ++analytic;
  }
  for (double& v : mean) v /= analytic > 0 ? analytic : 1;
  const std::size_t firstFd = check.runs.size();
  for (double h : options.fdSteps) {
    ObjectiveOptions o = options.objective;
    o.fdStep = h;
    o.fdOrder = options.fdOrder;
    if (options.fdTightTolerances) {
      o.integrator.rtol = std::max(1e-13, std::min(o.integrator.rtol, 1e-2 * o.integrator.rtol));
      o.steadyState.rtol = std::max(1e-12, 1e-2 * o.steadyState.rtol);
    }
    check.runs.push_back(runMethod(problem, scaled, GradientMethod::FiniteDifferences, o, monitor,
                                   "fd " + shortNumber(h)));
  }
  if (analytic > 0) {
    MethodRun best;
    best.label = "fd best";
    best.method = GradientMethod::FiniteDifferences;
    std::vector<double> bestDistance(mean.size(), std::numeric_limits<double>::infinity());
    for (std::size_t r = firstFd; r < check.runs.size(); ++r) {
      const MethodRun& run = check.runs[r];
      best.seconds += run.seconds;
      if (!run.ok) continue;
      if (!best.ok) {
        best.result = run.result;
        best.ok = true;
        check.fdBestStep.assign(mean.size(), run.fdStep);
      }
      for (std::size_t k = 0; k < mean.size(); ++k) {
        const double d = std::abs(run.result.gradient[k] - mean[k]);
        if (d < bestDistance[k]) {
          bestDistance[k] = d;
          best.result.gradient[k] = run.result.gradient[k];
          check.fdBestStep[k] = run.fdStep;
        }
      }
    }
    if (best.ok) {
      best.result.notes = "per component the step (of " + std::to_string(options.fdSteps.size()) +
                          ") closest to the mean analytic gradient";
    } else {
      best.error = "no finite-difference step evaluated";
    }
    if (!options.fdSteps.empty()) check.runs.push_back(std::move(best));
  }
  for (const auto& r : check.runs)
    if (r.ok) {
      check.objective = r.result.objective;
      check.parameterIds = r.result.parameterIds;
      break;
    }
  const std::size_t n = check.runs.size();
  check.agreement.assign(n, std::vector<double>(n, kNaN));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (check.runs[a].ok && check.runs[b].ok)
        check.agreement[a][b] =
            relativeDifference(check.runs[a].result.gradient, check.runs[b].result.gradient);
  return check;
}

ObjectiveResult evaluateWithFallback(const Problem& problem, const std::vector<double>& scaled,
                                     GradientMethod method, const ObjectiveOptions& options,
                                     const ProgressMonitor& monitor) {
  static const GradientMethod kChain[] = {GradientMethod::Forward, GradientMethod::Ssasa,
                                          GradientMethod::Adjoint,
                                          GradientMethod::FiniteDifferences};
  std::vector<GradientMethod> order{method};
  bool after = false;
  for (GradientMethod m : kChain) {
    if (after) order.push_back(m);
    if (m == method) after = true;
  }
  std::vector<std::string> fallbacks;
  for (std::size_t i = 0; i < order.size(); ++i) {
    try {
      ObjectiveResult r = evaluateObjective(problem, scaled, order[i], options, monitor);
      // The method's own fallbacks (e.g. steady-state sensitivities by integration) follow.
      fallbacks.insert(fallbacks.end(), r.fallbacks.begin(), r.fallbacks.end());
      r.fallbacks = std::move(fallbacks);
      return r;
    } catch (const Cancelled&) {
      throw;
    } catch (const InvalidOptions&) {
      throw;
    } catch (const Error& e) {
      if (i + 1 == order.size()) throw;
      fallbacks.push_back(std::string("the ") + toString(order[i]) + " gradient failed (" +
                          e.what() + "); used " + toString(order[i + 1]) + " instead");
    }
  }
  throw Error("no gradient method");  // unreachable: the loop returns or rethrows
}

}  // namespace sensode::petab
