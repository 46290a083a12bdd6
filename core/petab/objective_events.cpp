// SPDX-License-Identifier: MIT
// The objective's time courses on models with SBML events: the event simulation driver with
// forward sensitivities (their jumps at each execution: core/simulation/sensitivity_jumps.h).
#include <cmath>
#include <string>
#include <vector>

#include "core/petab/objective_evaluator.h"
#include "core/simulation/event_simulation.h"

namespace sensode::petab::detail {

void Evaluator::timeCourseWithEvents(const std::vector<std::size_t>& timed,
                                     const std::vector<double>& x0,
                                     const Eigen::MatrixXd& s0Model, const Eigen::MatrixXd& dFlow,
                                     const std::vector<double>& thetaS,
                                     const Eigen::MatrixXd& dS) {
  const int nx = model_.nx();
  // Switching times of the right-hand side move with the parameters (time_breakpoints.h); the
  // driver steps across them without that term, so the gradient would miss it.
  bool ambiguous = false;
  if (!timeBreakpoints(sys_, thetaS, 0.0, pr_.measurements[timed.back()].time, &ambiguous).empty())
    throw PetabError(sys_.modelFile + ": " +
                     (sys_.events.empty()
                          ? "'" + sys_.delays.front().element + "': PEtab objectives of a model "
                            "with both delays"
                          : "event '" + sys_.events.front().id + "': PEtab objectives of a model "
                            "with both SBML events") +
                     " and switches of the right-hand side at parameter-dependent times are not "
                     "supported yet");
  const integrators::Method kind = o_.forwardIntegrator;
  simulation::EventSimulation simulation(pr_.model, kind, timeCourseOptions());
  std::vector<int> k;
  Eigen::MatrixXd dK;
  std::vector<double> s0;
  if (forward()) {
    sensitivityColumns(s0Model, dFlow, k, dK, s0);
    simulation.enableSensitivities(k, s0, o_.sensitivityErrorControl);
  }
  std::vector<double> times;
  for (std::size_t i : timed)
    if (times.empty() || pr_.measurements[i].time > times.back())
      times.push_back(pr_.measurements[i].time);
  std::size_t next = 0;  // into timed
  std::vector<double> x(static_cast<std::size_t>(nx));
  Eigen::MatrixXd dxdq;
  // The state after the events at t, as the driver reports outputs.
  const auto output = [&](double t, const double* state) {
    x.assign(state, state + nx);
    if (forward()) {
      const std::vector<double>& s = simulation.sensitivities();
      dxdq = Eigen::Map<const Eigen::MatrixXd>(s.data(), nx, static_cast<Eigen::Index>(k.size())) * dK;
    }
    for (; next < timed.size() && pr_.measurements[timed[next]].time == t; ++next)
      addMeasurement(pr_.measurements[timed[next]], x, thetaS, t, dS, forward() ? &dxdq : nullptr,
                     nullptr, nullptr);
  };
  simulation.run(0.0, x0, thetaS, times, output, monitor_);
  ++result_.simulations;
  integrators::accumulate(result_.integration, simulation.stats());
  note(sys_.events.empty() ? "time courses with delays: the simulation driver (method of steps)"
                           : "time courses with SBML events: the event simulation driver");
  if (forward())
    note(std::string("time-course data: forward sensitivities with jumps at events (") +
         (kind == integrators::Method::OdeSd ? "odeSD direct" : "CVODES") + ")");
}

}  // namespace sensode::petab::detail
