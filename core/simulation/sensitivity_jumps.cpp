// SPDX-License-Identifier: MIT
#include "core/simulation/sensitivity_jumps.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/common/errors.h"

namespace sensode::simulation {

std::vector<double> rootTimeDerivative(const JumpContext& c, int k, double t,
                                       const std::vector<double>& x, const std::vector<double>& s) {
  const auto nx = static_cast<std::size_t>(c.model.nx());
  const auto np = static_cast<std::size_t>(c.model.np());
  const std::size_t ns = c.params.size();
  std::vector<double> grad(nx + np + 1), f(nx), dTaudP(ns);
  c.events.rootGradient(k, t, x.data(), c.p, grad.data());
  c.model.rhs(t, x.data(), c.p, f.data());
  double denominator = grad[nx + np];
  for (std::size_t i = 0; i < nx; ++i) denominator += grad[i] * f[i];
  if (!(std::abs(denominator) > 0)) {
    char when[32];
    std::snprintf(when, sizeof when, "%.10g", t);
    throw Error(std::string("sensitivities across events: the trigger function at t = ") + when +
                " touches zero without crossing it (dτ/dp is undefined)");
  }
  for (std::size_t j = 0; j < ns; ++j) {
    double numerator = grad[nx + static_cast<std::size_t>(c.params[j])];
    for (std::size_t i = 0; i < nx; ++i) numerator += grad[i] * s[j * nx + i];
    dTaudP[j] = -numerator / denominator;
  }
  return dTaudP;
}

std::vector<double> delayedExecutionTimeDerivative(const JumpContext& c, int e, double t,
                                                   const std::vector<double>& x,
                                                   const std::vector<double>& s,
                                                   const std::vector<double>& dTaudP) {
  const auto nx = static_cast<std::size_t>(c.model.nx());
  const auto np = static_cast<std::size_t>(c.model.np());
  std::vector<double> out = dTaudP;
  if (!c.events.hasDelay(e)) return out;
  std::vector<double> grad(nx + np + 1), f(nx);
  c.events.delayGradient(e, t, x.data(), c.p, grad.data());
  c.model.rhs(t, x.data(), c.p, f.data());
  double total = grad[nx + np];  // dd/dt along the trajectory: ∂d/∂t + ∂d/∂x·f
  for (std::size_t i = 0; i < nx; ++i) total += grad[i] * f[i];
  for (std::size_t j = 0; j < out.size(); ++j) {
    double v = grad[nx + static_cast<std::size_t>(c.params[j])] + total * dTaudP[j];
    for (std::size_t i = 0; i < nx; ++i) v += grad[i] * s[j * nx + i];
    out[j] += v;
  }
  return out;
}

std::pair<int, int> switchingRoot(const JumpContext& c, double t, const std::vector<double>& x,
                                  double window) {
  const auto nx = static_cast<std::size_t>(c.model.nx());
  const auto np = static_cast<std::size_t>(c.model.np());
  std::pair<int, int> best{-1, -1};
  double nearest = window;
  std::vector<double> g(static_cast<std::size_t>(c.events.numRoots())), grad(nx + np + 1),
      f(nx);
  c.events.roots(t, x.data(), c.p, g.data());
  c.model.rhs(t, x.data(), c.p, f.data());
  for (int k = 0; k < c.events.numRoots(); ++k) {
    c.events.rootGradient(k, t, x.data(), c.p, grad.data());
    double rate = grad[nx + np];
    for (std::size_t i = 0; i < nx; ++i) rate += grad[i] * f[i];
    const double distance = std::abs(g[static_cast<std::size_t>(k)]) / std::abs(rate);
    if (std::isfinite(distance) && distance <= nearest) nearest = distance, best = {k, -1};
  }
  std::vector<double> times(static_cast<std::size_t>(c.events.numTimeRoots()));
  c.events.timeRoots(c.p, times.data());
  for (std::size_t j = 0; j < times.size(); ++j)
    if (std::abs(times[j] - t) <= nearest) nearest = std::abs(times[j] - t), best = {-1, int(j)};
  return best;
}

std::vector<double> timeEventDerivative(const JumpContext& c, int j) {
  std::vector<double> dc(static_cast<std::size_t>(c.model.np())), dTaudP(c.params.size());
  c.events.timeRootGradient(j, c.p, dc.data());
  for (std::size_t i = 0; i < c.params.size(); ++i)
    dTaudP[i] = dc[static_cast<std::size_t>(c.params[i])];
  return dTaudP;
}

std::vector<double> assignmentValueDerivatives(const JumpContext& c, int e, double t,
                                               const std::vector<double>& x,
                                               const std::vector<double>& s,
                                               const std::vector<double>& dTaudP) {
  const auto& def = c.events.event(e);
  const auto nx = static_cast<std::size_t>(c.model.nx());
  const auto np = static_cast<std::size_t>(c.model.np());
  const std::size_t ns = c.params.size();
  const std::size_t stride = nx + np + 1;  // ∂g/∂x, ∂g/∂p, ∂g/∂t of one assignment
  std::vector<double> f(nx), jac(def.assignments.size() * stride);
  c.model.rhs(t, x.data(), c.p, f.data());
  c.events.assignmentJacobian(e, t, x.data(), c.p, jac.data());
  std::vector<double> out(def.assignments.size() * ns);
  for (std::size_t a = 0; a < def.assignments.size(); ++a) {
    const double* gx = jac.data() + a * stride;
    const double* gp = gx + nx;
    double gxf = gp[np];  // ∂g/∂t: an assignment such as S2 = k3·t moves with τ
    for (std::size_t i = 0; i < nx; ++i) gxf += gx[i] * f[i];
    for (std::size_t j = 0; j < ns; ++j) {
      double v = gp[static_cast<std::size_t>(c.params[j])] + gxf * dTaudP[j];
      for (std::size_t i = 0; i < nx; ++i) v += gx[i] * s[j * nx + i];
      out[a * ns + j] = v;
    }
  }
  return out;
}

void jumpSensitivities(const JumpContext& c, int e, double t, const std::vector<double>& xMinus,
                       const std::vector<double>& xPlus, const std::vector<double>& dValue,
                       const std::vector<double>& dTaudP, std::vector<double>& s) {
  const auto& def = c.events.event(e);
  const auto nx = static_cast<std::size_t>(c.model.nx());
  const std::size_t ns = c.params.size();
  std::vector<double> fMinus(nx), fPlus(nx);
  c.model.rhs(t, xMinus.data(), c.p, fMinus.data());
  c.model.rhs(t, xPlus.data(), c.p, fPlus.data());
  // Unassigned states: G_x = I, G_p = 0, so S⁺ = S⁻ + (f⁻ − f⁺) dτ/dp.
  for (std::size_t j = 0; j < ns; ++j)
    for (std::size_t i = 0; i < nx; ++i) s[j * nx + i] += (fMinus[i] - fPlus[i]) * dTaudP[j];
  for (std::size_t a = 0; a < def.assignments.size(); ++a) {
    const auto row = static_cast<std::size_t>(def.assignments[a].state);
    for (std::size_t j = 0; j < ns; ++j)
      s[j * nx + row] = dValue[a * ns + j] - fPlus[row] * dTaudP[j];
  }
}

}  // namespace sensode::simulation
