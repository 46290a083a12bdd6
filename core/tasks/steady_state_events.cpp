// SPDX-License-Identifier: MIT
#include "core/tasks/steady_state_events.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/common/format.h"
#include "core/simulation/event_simulation.h"
#include "core/symbolic/event_functions.h"
#include "core/tasks/task_common.h"

namespace sensode::tasks::detail {

namespace {

// Event times after which events that keep firing are taken as never settling: a sawtooth
// reset every few time units would otherwise be simulated to maxSimulationTime (1e5) through
// tens of thousands of restarts.
constexpr int kMaxEventTimes = 1000;
struct KeepsFiring {};

// The executions in (from, to]: "2 executions: dose at t = 5, reset at t = 7.3" (the first few).
std::string describeExecutions(const std::vector<simulation::EventExecution>& all, double from,
                               double to, int* count) {
  std::string list;
  int n = 0;
  for (const auto& e : all) {
    if (!(e.time > from && e.time <= to)) continue;
    if (n < 3) list += (n ? ", " : "") + e.eventId + " at t = " + shortNumber(e.time);
    ++n;
  }
  if (n > 3) list += ", ...";
  if (count) *count = n;
  return std::to_string(n) + (n == 1 ? " execution" : " executions") + (n ? ": " + list : "");
}

// The first event whose trigger differs between (ta, xa) and (tb, xb), or −1.
int firstSwitchingTrigger(const symbolic::EventFunctions& events, const double* p, double ta,
                          const std::vector<double>& xa, double tb, const std::vector<double>& xb) {
  std::vector<double> a(static_cast<std::size_t>(events.numEvents())), b(a.size());
  events.triggers(ta, xa.data(), p, a.data());
  events.triggers(tb, xb.data(), p, b.data());
  for (std::size_t e = 0; e < a.size(); ++e)
    if (a[e] != b[e]) return static_cast<int>(e);
  return -1;
}

}  // namespace

steadystate::SteadyStateSolution solveSteadyStateAcrossEvents(
    const steadystate::ConservedModel& model, const std::vector<double>& theta,
    const steadystate::SteadyStateOptions& options, const ProgressMonitor& monitor) {
  const auto& compiled = model.fullPtr();
  const symbolic::OdeSystem& sys = compiled->system();
  const auto nx = static_cast<std::size_t>(compiled->nx());
  const auto np = static_cast<std::size_t>(compiled->np());
  symbolic::EventFunctions events(sys);
  // After the last time event t ⋚ c(θ) every such trigger keeps its value.
  std::vector<double> timeEvents(static_cast<std::size_t>(events.numTimeRoots()));
  events.timeRoots(theta.data(), timeEvents.data());
  double lastTimeEvent = 0;
  for (const double c : timeEvents)
    if (std::isfinite(c)) lastTimeEvent = std::max(lastTimeEvent, c);

  std::vector<double> x = initialState(*compiled, 0.0, theta);
  std::vector<int> all(np);
  for (std::size_t k = 0; k < np; ++k) all[k] = static_cast<int>(k);
  const bool withSensitivities = options.sensitivities && np > 0;
  std::vector<double> s;
  if (withSensitivities) {
    const Eigen::MatrixXd s0 = model.initialSensitivity(theta);
    s.assign(s0.data(), s0.data() + s0.size());
  }

  simulation::EventSimulation sim(compiled, integrators::Method::Cvodes, options.integrator);
  if (withSensitivities) sim.enableSensitivities(all, s, true);
  // Decade ends 10, 100, ... (the solver's own simulation horizons), and the state there.
  std::vector<double> ends;
  for (double t = 10; t < options.maxSimulationTime * (1 + 1e-12); t *= 10) ends.push_back(t);
  if (ends.empty() || ends.back() < options.maxSimulationTime)
    ends.push_back(options.maxSimulationTime);
  std::vector<std::vector<double>> states, sens;
  int eventTimes = 0;
  double lastEventTime = 0;
  sim.setEventSink([&](double t, const double*, const double*) {
    lastEventTime = t;
    if (++eventTimes > kMaxEventTimes) throw KeepsFiring{};
  });
  try {
    sim.run(0.0, x, theta, ends,
            [&](double, const double* xt) {
              states.emplace_back(xt, xt + nx);
              if (withSensitivities) sens.push_back(sim.sensitivities());
            },
            monitor);
  } catch (const KeepsFiring&) {
    steadystate::SteadyStateSolution none;
    none.state = x;
    none.simulatedTime = lastEventTime;
    const auto& executions = sim.executions();
    std::map<std::string, int> counts;
    for (const auto& e : executions) ++counts[e.eventId];
    std::string list;
    for (const auto& [id, n] : counts)
      list += (list.empty() ? "'" : ", '") + id + "' " + std::to_string(n) + "×";
    none.reason = "no steady state: the events keep firing (" + std::to_string(kMaxEventTimes) +
                  " event times by t = " + shortNumber(lastEventTime) + ": " + list + ")";
    return none;
  }
  const std::vector<simulation::EventExecution>& executions = sim.executions();

  steadystate::SteadyStateSolution last;
  double lastEnd = 0;
  std::string lastRefusal;
  for (std::size_t k = 1; k < ends.size(); ++k) {
    const double from = ends[k - 1], to = ends[k];
    int fired = 0;
    const std::string executed = describeExecutions(executions, from, to, &fired);
    if (fired > 0 || from <= lastTimeEvent) {
      if (fired > 0)
        lastRefusal = "the events keep changing the state: " + executed + " between t = " +
                      shortNumber(from) + " and t = " + shortNumber(to);
      continue;
    }
    const int switching = firstSwitchingTrigger(events, theta.data(), from, states[k - 1], to,
                                                states[k]);
    if (switching >= 0) {
      lastRefusal = "the trigger of event '" + events.event(switching).id +
                    "' switches between t = " + shortNumber(from) + " and t = " + shortNumber(to);
      continue;
    }
    Eigen::MatrixXd dxStart;
    if (withSensitivities)
      dxStart = Eigen::Map<const Eigen::MatrixXd>(sens[k].data(), static_cast<Eigen::Index>(nx),
                                                  static_cast<Eigen::Index>(np));
    steadystate::SteadyStateSolution sol = steadystate::solveSteadyState(
        model, theta, options, monitor, &states[k], withSensitivities ? &dxStart : nullptr);
    const std::string prefix = "simulation with events to t = " + shortNumber(to) + " (" +
                               describeExecutions(executions, 0, to, nullptr) + "), then ";
    // The solver calls its start "the initial state"; here it is the simulated state at t_k.
    const std::string initial = "the initial state";
    if (const auto at = sol.path.find(initial); at != std::string::npos)
      sol.path.replace(at, initial.size(), "the state at t = " + shortNumber(to));
    sol.path = prefix + sol.path;
    if (!sol.found) return sol;
    // No trigger may switch between x(t_k) and x*, nor at x* once every time event is past.
    const double after = std::max(to, lastTimeEvent) + 1;
    int e = firstSwitchingTrigger(events, theta.data(), to, states[k], to, sol.state);
    if (e < 0) e = firstSwitchingTrigger(events, theta.data(), to, sol.state, after, sol.state);
    if (e < 0) return sol;
    lastRefusal = "the trigger of event '" + events.event(e).id +
                  "' changes its value between the state at t = " + shortNumber(to) +
                  " and the ODE's steady state found from there: the event would fire and move "
                  "the state away from it";
    last = std::move(sol);
    lastEnd = to;
  }
  last.found = false;
  last.foundBy = steadystate::FoundBy::None;
  if (last.state.empty()) last.state = states.back();
  last.simulatedTime = std::max(lastEnd, ends.back());
  last.reason = "no steady state that the events leave alone by t = " +
                shortNumber(ends.back()) + ": " +
                (lastRefusal.empty() ? std::string("the events keep firing") : lastRefusal);
  return last;
}

}  // namespace sensode::tasks::detail
