// SPDX-License-Identifier: MIT
// The backward adjoint across SBML events. The event simulation driver runs forward once to find
// the event times τ and the states before and after each; the time course is then split there
// into AdjointTimeCourse passes (as at the breakpoints of the right-hand side), and λ crosses each
// event by the adjoint of the forward sensitivities' jump. With h the trigger's root function
// (t − c(p) for a time event), x⁺ = g(x⁻, p, τ) the execution and D = ∂h/∂x·f⁻ + ∂h/∂t,
//   S⁺ = M·S⁻ + B,  M = G_x − w·h_x/D,  B = g_p − w·h_p/D,  w = G_x·f⁻ + g_t − f⁺
// (core/simulation/sensitivity_jumps.h), so dJ/dp = λ(τ⁺)ᵀS(τ⁺) + … gives
//   λ(τ⁻) = Mᵀλ(τ⁺)   and   dJ/dp += λ(τ⁺)ᵀB,
// the standard adjoint jump conditions (AMICI's, Fröhlich et al. 2017). M and B are built from
// the forward jump itself, applied to the seed S⁻ = [I, 0, 0] with columns tied to parameter 0
// (twice) and to every parameter: M = S⁺[:, 0..nx) − S⁺[:, nx], B = S⁺[:, nx+1..) — exact, and the
// same code the forward sensitivities use. Events at t0 jump λ(0) with dτ/dp = 0.
// Cascades (several executions at one time), delayed events and events that resize a
// compartment of concentration states throw EventAdjointUnsupported; the caller then computes the
// gradient by forward sensitivities and says so.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/petab/objective_evaluator.h"
#include "core/simulation/event_simulation.h"
#include "core/simulation/sensitivity_jumps.h"
#include "core/steadystate/adjoint_time_course.h"
#include "core/symbolic/event_functions.h"

namespace sensode::petab::detail {

namespace {

// The state jump at one event time and the affine map of S across it.
struct EventCrossing {
  double time = 0;
  std::vector<double> before, after;
  Eigen::MatrixXd M;  // nx × nx
  Eigen::MatrixXd B;  // nx × np
};

// M and B of one execution of event e at τ (see the file comment).
void jumpMaps(const symbolic::CompiledModel& model, symbolic::EventFunctions& events,
                     const std::vector<double>& theta, int e, bool atStart, EventCrossing& c) {
  const int nx = model.nx(), np = model.np();
  const auto unx = static_cast<std::size_t>(nx);
  std::vector<int> params(unx + 1, 0);
  for (int k = 0; k < np; ++k) params.push_back(k);
  const std::size_t ns = params.size();
  std::vector<double> s(unx * ns, 0.0);
  for (std::size_t i = 0; i < unx; ++i) s[i * unx + i] = 1.0;
  const simulation::JumpContext ctx{model, events, theta.data(), params};
  const double tau = c.time;
  std::vector<double> dTau(ns, 0.0);  // t0 does not move with p
  if (!atStart) {
    // What located τ: a time event t ⋚ c(p) at exactly τ, else the root function that vanishes
    // there (the driver's bracket is 1e-12 wide).
    std::vector<double> timeRoots(static_cast<std::size_t>(events.numTimeRoots()));
    events.timeRoots(theta.data(), timeRoots.data());
    int timeRoot = -1;
    for (std::size_t j = 0; j < timeRoots.size(); ++j)
      if (std::abs(timeRoots[j] - tau) <= 1e-9 * std::max(1.0, std::abs(tau)))
        timeRoot = static_cast<int>(j);
    if (timeRoot >= 0) {
      dTau = simulation::timeEventDerivative(ctx, timeRoot);
    } else {
      std::vector<double> g(static_cast<std::size_t>(events.numRoots()));
      events.roots(tau, c.before.data(), theta.data(), g.data());
      if (g.empty())
        throw EventAdjointUnsupported("event '" + events.event(e).id + "' at t = " + num(tau) +
                                      " has no root function (a trigger that is not a relational)");
      const auto k = std::min_element(g.begin(), g.end(), [](double a, double b) {
                       return std::abs(a) < std::abs(b);
                     }) - g.begin();
      dTau = simulation::rootTimeDerivative(ctx, static_cast<int>(k), tau, c.before, s);
    }
  }
  const std::vector<double> dValue =
      simulation::assignmentValueDerivatives(ctx, e, tau, c.before, s, dTau);
  simulation::jumpSensitivities(ctx, e, tau, c.before, c.after, dValue, dTau, s);
  const Eigen::Map<const Eigen::MatrixXd> sp(s.data(), nx, static_cast<Eigen::Index>(ns));
  c.M = sp.leftCols(nx).colwise() - sp.col(nx);
  c.B = sp.rightCols(np);
}

}  // namespace

Eigen::RowVectorXd Evaluator::timeCourseAdjointWithEvents(const std::vector<std::size_t>& timed,
                                                          const std::vector<double>& x0,
                                                          const std::vector<double>& thetaS,
                                                          const Eigen::MatrixXd& dS) {
  const int nx = model_.nx();
  const auto unx = static_cast<std::size_t>(nx);
  const double tEnd = pr_.measurements[timed.back()].time;
  if (!timeBreakpoints(sys_, thetaS, 0.0, tEnd).empty())
    throw PetabError(sys_.modelFile + ": event '" + sys_.events.front().id +
                     "': PEtab objectives of a model with both SBML events and switches of the "
                     "right-hand side at parameter-dependent times are not supported yet");
  // Forward: the event times and the states around them.
  std::vector<EventCrossing> crossings;
  simulation::EventSimulation simulation(pr_.model, integrators::Method::Cvodes, o_.integrator);
  simulation.setEventSink([&](double t, const double* before, const double* after) {
    crossings.push_back({t, {before, before + nx}, {after, after + nx}, {}, {}});
  });
  std::vector<double> times;
  for (std::size_t i : timed)
    if (times.empty() || pr_.measurements[i].time > times.back())
      times.push_back(pr_.measurements[i].time);
  simulation.run(0.0, x0, thetaS, times, [](double, const double*) {}, monitor_);
  std::map<double, std::vector<std::string>> executed;
  for (const auto& ex : simulation.executions()) executed[ex.time].push_back(ex.eventId);
  symbolic::EventFunctions events(sys_);
  events.enableDerivatives();
  for (EventCrossing& c : crossings) {
    const std::vector<std::string>& ids = executed[c.time];
    if (ids.size() != 1)
      throw EventAdjointUnsupported(std::to_string(ids.size()) + " event executions at t = " +
                                    num(c.time) + " (a cascade)");
    int e = 0;
    while (e < events.numEvents() && events.event(e).id != ids[0]) ++e;
    if (events.hasDelay(e))
      throw EventAdjointUnsupported("event '" + ids[0] + "' has a delay");
    if (!events.event(e).rescaled.empty())
      throw EventAdjointUnsupported("event '" + ids[0] +
                                    "' resizes a compartment of species in concentration");
    jumpMaps(model_, events, thetaS, e, c.time <= 0.0, c);
  }
  // Events at t0 act before the first segment: x(0⁺) = their `after`.
  std::size_t firstInterior = 0;
  while (firstInterior < crossings.size() && crossings[firstInterior].time <= 0.0) ++firstInterior;
  std::vector<double> bounds{0.0};
  for (std::size_t c = firstInterior; c < crossings.size(); ++c) bounds.push_back(crossings[c].time);
  const std::size_t nseg = bounds.size();
  std::vector<std::vector<double>> segTimes(nseg);
  std::vector<std::vector<std::vector<double>>> jumps(nseg);
  std::vector<std::unique_ptr<steadystate::AdjointTimeCourse>> passes(nseg);
  Eigen::RowVectorXd explicitPart = Eigen::RowVectorXd::Zero(nq_);
  const std::vector<int> moved = movedParameters(dS);
  std::size_t next = 0;  // into timed
  for (std::size_t sg = 0; sg < nseg; ++sg) {
    // Each segment starts from the driver's state after the events at its start.
    const std::vector<double>& start =
        sg == 0 ? (firstInterior > 0 ? crossings[firstInterior - 1].after : x0)
                : crossings[firstInterior + sg - 1].after;
    const double end = sg + 1 < nseg ? bounds[sg + 1] : INFINITY;
    std::vector<std::size_t> mine;
    while (next < timed.size() && pr_.measurements[timed[next]].time < end) mine.push_back(timed[next++]);
    std::vector<double>& ts = segTimes[sg];
    for (std::size_t i : mine)
      if (ts.empty() || pr_.measurements[i].time > ts.back()) ts.push_back(pr_.measurements[i].time);
    if (sg + 1 < nseg && (ts.empty() || ts.back() < end)) ts.push_back(end);
    passes[sg] = std::make_unique<steadystate::AdjointTimeCourse>(pr_.model, o_.integrator,
                                                                  bounds[sg], start, thetaS, monitor_);
    passes[sg]->setQuadratureParameters(moved);
    if (o_.adjointIntegrator == integrators::Method::OdeSd) passes[sg]->preferOdeSd();
    const std::vector<std::vector<double>> states = passes[sg]->forward(ts);
    jumps[sg].assign(ts.size(), std::vector<double>(unx, 0.0));
    for (std::size_t i : mine) {
      const auto slot = static_cast<std::size_t>(
          std::lower_bound(ts.begin(), ts.end(), pr_.measurements[i].time) - ts.begin());
      Eigen::RowVectorXd g = Eigen::RowVectorXd::Zero(nx);
      addMeasurement(pr_.measurements[i], states[slot], thetaS, pr_.measurements[i].time, dS,
                     nullptr, &g, &explicitPart);
      for (std::size_t c = 0; c < unx; ++c) jumps[sg][slot][c] += g(static_cast<Eigen::Index>(c));
    }
  }
  ++result_.simulations;
  grad_ += explicitPart;
  // Backward, last segment first; λ crosses the event at each segment's start.
  std::vector<double> lambda(unx, 0.0), quad;
  Eigen::RowVectorXd fromJumps = Eigen::RowVectorXd::Zero(model_.np());
  const auto cross = [&](const EventCrossing& c) {
    const Eigen::Map<Eigen::VectorXd> l(lambda.data(), nx);
    fromJumps += l.transpose() * c.B;
    const Eigen::VectorXd before = c.M.transpose() * l;
    std::copy(before.data(), before.data() + nx, lambda.begin());
  };
  for (std::size_t sg = nseg; sg-- > 0;) {
    if (sg + 1 < nseg) {
      auto& last = jumps[sg].back();
      for (std::size_t c = 0; c < unx; ++c) last[c] += lambda[c];
    }
    if (!segTimes[sg].empty()) passes[sg]->backward(jumps[sg], lambda, quad);
    if (sg > 0) cross(crossings[firstInterior + sg - 1]);
  }
  for (std::size_t c = firstInterior; c-- > 0;) cross(crossings[c]);
  if (!quad.empty())
    grad_ += Eigen::Map<const Eigen::RowVectorXd>(quad.data(), static_cast<Eigen::Index>(quad.size())) * dS;
  grad_ += fromJumps * dS;
  note("time-course data: backward adjoint across SBML events (" + adjointPassesMethod(passes) +
       "; adjoint jump conditions at the events)");
  return Eigen::Map<const Eigen::RowVectorXd>(lambda.data(), nx);
}

}  // namespace sensode::petab::detail
