// SPDX-License-Identifier: MIT
// The objective's time courses: forward with sensitivities (CVODES or odeSD) and the backward
// adjoint, each split at the switching times of the right-hand side.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/odesd_integrator.h"
#include "core/petab/objective_evaluator.h"
#include "core/steadystate/adjoint_time_course.h"

namespace sensode::petab::detail {

std::vector<TimeBreakpoint> Evaluator::breakpoints(const std::vector<std::size_t>& timed,
                                                   const std::vector<double>& theta) {
  bool ambiguous = false;
  auto bps = timeBreakpoints(sys_, theta, 0.0, pr_.measurements[timed.back()].time, &ambiguous);
  if (ambiguous)
    note("two switches of the right-hand side at the same time depend differently on the "
         "parameters: the gradient takes the first one's dependence for both");
  if (!bps.empty())
    note("time course restarted at " + std::to_string(bps.size()) +
         " discontinuity time(s) of the right-hand side");
  return bps;
}

std::string Evaluator::adjointPassesMethod(
    const std::vector<std::unique_ptr<steadystate::AdjointTimeCourse>>& passes) {
  std::vector<std::string> methods;
  for (const auto& pass : passes) {
    if (!pass) continue;
    if (std::find(methods.begin(), methods.end(), pass->method()) == methods.end())
      methods.push_back(pass->method());
    if (!pass->fallback().empty()) fallback(pass->fallback());
  }
  std::string joined;
  for (const std::string& m : methods) joined += (joined.empty() ? "" : " and ") + m;
  return joined;
}

Eigen::VectorXd Evaluator::rhsJump(double tau, const std::vector<double>& x,
                                   const std::vector<double>& theta) const {
  // The switch is `t − τ < 0` or alike: the neighbouring doubles are on either side of it.
  Eigen::VectorXd before(model_.nx()), after(model_.nx());
  model_.rhs(std::nextafter(tau, -INFINITY), x.data(), theta.data(), before.data());
  model_.rhs(std::nextafter(tau, INFINITY), x.data(), theta.data(), after.data());
  return before - after;
}

Eigen::RowVectorXd Evaluator::timeCourseAdjoint(const std::vector<std::size_t>& timed,
                                                const std::vector<double>& x0,
                                                const std::vector<double>& thetaS,
                                                const Eigen::MatrixXd& dS) {
  const int nx = model_.nx();
  const auto unx = static_cast<std::size_t>(nx);
  // Segments [τ_s, τ_{s+1}] between the breakpoints (τ_0 = 0), each its own forward and
  // backward pass: no step straddles a jump, and no stop time lies inside a pass (with
  // CVodeSetStopTime at interior times, CVodeB's recomputation from a checkpoint took other
  // steps than CVodeF had taken and overran its data: SUNDIALS issue #49, a segfault on Beer;
  // a pass only stops at its own end). Data at exactly τ belong to the later segment (as in the
  // forward pass, which measures after the restart).
  const std::vector<TimeBreakpoint> bps = breakpoints(timed, thetaS);
  std::vector<double> bounds{0.0};
  for (const auto& b : bps) bounds.push_back(b.time);
  const std::size_t nseg = bounds.size();
  std::vector<std::vector<double>> times(nseg);
  std::vector<std::vector<std::vector<double>>> jumps(nseg);
  std::vector<std::unique_ptr<steadystate::AdjointTimeCourse>> passes(nseg);
  std::vector<std::vector<double>> xStart(nseg);
  Eigen::RowVectorXd explicitPart = Eigen::RowVectorXd::Zero(nq_);
  const std::vector<int> moved = movedParameters(dS);
  std::size_t next = 0;  // into timed
  std::vector<double> x = x0;
  for (std::size_t sg = 0; sg < nseg; ++sg) {
    const double end = sg + 1 < nseg ? bounds[sg + 1] : INFINITY;
    std::vector<std::size_t> mine;
    while (next < timed.size() && pr_.measurements[timed[next]].time < end) mine.push_back(timed[next++]);
    std::vector<double>& ts = times[sg];
    for (std::size_t i : mine)
      if (ts.empty() || pr_.measurements[i].time > ts.back()) ts.push_back(pr_.measurements[i].time);
    if (sg + 1 < nseg && (ts.empty() || ts.back() < end)) ts.push_back(end);  // to the next start
    xStart[sg] = x;
    passes[sg] = std::make_unique<steadystate::AdjointTimeCourse>(pr_.model, o_.integrator,
                                                                  bounds[sg], x, thetaS, monitor_);
    passes[sg]->setQuadratureParameters(moved);
    if (o_.adjointIntegrator == integrators::Method::OdeSd) passes[sg]->preferOdeSd();
    if (sg + 1 < nseg) passes[sg]->setLeftLimitAt(end);
    const std::vector<std::vector<double>> states = passes[sg]->forward(ts);
    ++result_.simulations;
    jumps[sg].assign(ts.size(), std::vector<double>(unx, 0.0));
    for (std::size_t i : mine) {
      const std::size_t slot = static_cast<std::size_t>(
          std::lower_bound(ts.begin(), ts.end(), pr_.measurements[i].time) - ts.begin());
      Eigen::RowVectorXd g = Eigen::RowVectorXd::Zero(nx);
      addMeasurement(pr_.measurements[i], states[slot], thetaS, pr_.measurements[i].time, dS,
                     nullptr, &g, &explicitPart);
      for (std::size_t c = 0; c < unx; ++c) jumps[sg][slot][c] += g(static_cast<Eigen::Index>(c));
    }
    if (!states.empty()) x = states.back();
  }
  grad_ += explicitPart;
  // Backward, last segment first: λ at a segment's start is the jump at the previous one's end
  // (λ is continuous at τ: the state is), and adds λ(τ)ᵀ(f(τ⁻) − f(τ⁺))·dτ/dθ.
  std::vector<double> lambda(unx, 0.0), quad;
  for (std::size_t sg = nseg; sg-- > 0;) {
    if (sg + 1 < nseg) {
      auto& last = jumps[sg].back();
      for (std::size_t c = 0; c < unx; ++c) last[c] += lambda[c];
    }
    if (times[sg].empty()) {
      continue;  // no data and no later segment: λ stays 0
    }
    passes[sg]->backward(jumps[sg], lambda, quad);
    if (sg > 0) {
      const TimeBreakpoint& bp = bps[sg - 1];
      const Eigen::VectorXd jump = rhsJump(bp.time, xStart[sg], thetaS);
      const double lj = Eigen::Map<const Eigen::VectorXd>(lambda.data(), nx).dot(jump);
      grad_ += lj * Eigen::Map<const Eigen::RowVectorXd>(bp.dTime.data(), model_.np()) * dS;
    }
  }
  if (!quad.empty())
    grad_ += Eigen::Map<const Eigen::RowVectorXd>(quad.data(), static_cast<Eigen::Index>(quad.size())) * dS;
  note("time-course data: backward adjoint (" + adjointPassesMethod(passes) + ")");
  return Eigen::Map<const Eigen::RowVectorXd>(lambda.data(), nx);
}

void Evaluator::sensitivityColumns(const Eigen::MatrixXd& s0Model, const Eigen::MatrixXd& dFlow,
                                   std::vector<int>& k, Eigen::MatrixXd& dK,
                                   std::vector<double>& s) const {
  const int nx = model_.nx();
  k = movedParameters(dFlow);
  dK.resize(static_cast<Eigen::Index>(k.size()), nq_);
  s.resize(static_cast<std::size_t>(nx) * k.size());
  for (std::size_t c = 0; c < k.size(); ++c) {
    dK.row(static_cast<Eigen::Index>(c)) = dFlow.row(k[c]);
    for (int i = 0; i < nx; ++i)
      s[c * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i)] = s0Model(i, k[c]);
  }
}

void Evaluator::timeCourseForward(const std::vector<std::size_t>& timed,
                                  const std::vector<double>& x0, const Eigen::MatrixXd& s0Model,
                                  const Eigen::MatrixXd& dFlow, const std::vector<double>& thetaS,
                                  const Eigen::MatrixXd& dS) {
  const int nx = model_.nx();
  const integrators::Method kind = o_.forwardIntegrator;
  std::unique_ptr<integrators::Integrator> integrator;
  std::vector<double> x = x0;
  ++result_.simulations;
  std::vector<int> k;
  Eigen::MatrixXd dK;  // rows of dFlow for the parameters in k
  std::vector<double> s;
  if (forward()) sensitivityColumns(s0Model, dFlow, k, dK, s);
  const std::vector<TimeBreakpoint> bps = breakpoints(timed, thetaS);
  const std::vector<double> breaks = breakpointTimes(bps);
  std::size_t nextBreak = 0;
  // A fresh integrator from (t, x, S), stopping at the next breakpoint: no step straddles a jump
  // of the right-hand side, and none carries the history of the other side across it.
  const auto start = [&](double t) {
    if (integrator) integrators::accumulate(result_.integration, integrator->stats());
    integrator = integrators::makeIntegrator(kind);
    integrator->initialize(pr_.model, timeCourseOptions(), t, x, thetaS);
    if (forward()) integrator->enableSensitivities(k, s, o_.sensitivityErrorControl);
    if (nextBreak < breaks.size()) {
      if (auto* c = dynamic_cast<integrators::CvodesIntegrator*>(integrator.get()))
        c->setStopTime(breaks[nextBreak]);
      else if (auto* d = dynamic_cast<integrators::OdeSdIntegrator*>(integrator.get())) {
        d->setStopTime(breaks[nextBreak]);
        // The step that lands on the switch evaluates the right-hand side there: its left
        // limit, the branch the step integrated (at t = τ itself `time < τ` is already false).
        d->setLeftLimitAt(breaks[nextBreak]);
      }
    }
  };
  double t = 0;
  start(t);
  const auto advance = [&](double tout) {
    if (tout > t) {
      integrator->advanceTo(tout, x, monitor_);
      if (forward()) integrator->sensitivities(s);
      t = tout;
    }
  };
  for (std::size_t i : timed) {
    const Measurement& m = pr_.measurements[i];
    while (nextBreak < breaks.size() && breaks[nextBreak] <= m.time) {
      const TimeBreakpoint& bp = bps[nextBreak++];
      advance(bp.time);
      if (forward()) {
        // S(τ⁺) = S(τ⁻) + (f(τ⁻) − f(τ⁺))·dτ/dθ_k per sensitivity column.
        const Eigen::VectorXd jump = rhsJump(bp.time, x, thetaS);
        for (std::size_t c = 0; c < k.size(); ++c) {
          const double dt = bp.dTime[static_cast<std::size_t>(k[c])];
          if (dt == 0.0) continue;
          for (int r = 0; r < nx; ++r)
            s[c * static_cast<std::size_t>(nx) + static_cast<std::size_t>(r)] += jump(r) * dt;
        }
      }
      start(t);
    }
    advance(m.time);
    Eigen::MatrixXd dxdq;
    if (forward()) {
      const Eigen::Map<const Eigen::MatrixXd> sm(s.data(), nx, static_cast<Eigen::Index>(k.size()));
      dxdq = sm * dK;
    }
    addMeasurement(m, x, thetaS, m.time, dS, forward() ? &dxdq : nullptr, nullptr, nullptr);
  }
  integrators::accumulate(result_.integration, integrator->stats());
  if (forward())
    note(std::string("time-course data: forward sensitivities (") +
         (kind == integrators::Method::OdeSd ? "odeSD direct" : "CVODES") + ")");
}

}  // namespace sensode::petab::detail
