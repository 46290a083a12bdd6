// SPDX-License-Identifier: MIT
#include "core/tasks/sensitivity_runs.h"

#include <cmath>
#include <string>

#include "core/common/errors.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/odesd_integrator.h"
#include "core/petab/time_breakpoints.h"
#include "core/sensitivity/finite_differences.h"
#include "core/sensitivity/output_sensitivities.h"
#include "core/sensitivity/peano_baker.h"
#include "core/simulation/event_simulation.h"

namespace sensode::tasks::detail {
namespace {

// Appends one output time to the result: y and dy/dp by the chain rule, x and S.
class Recorder {
 public:
  // `expectedTimes` only sizes the result's arrays once (growing them by doubling re-copied and
  // page-faulted n·ns·nt values several times per run).
  Recorder(std::shared_ptr<const symbolic::CompiledModel> model, const std::vector<double>& p,
           const std::vector<OutputColumn>& columns, const std::vector<int>& params,
           std::size_t expectedTimes, SensitivityResult& result)
      : model_(model), p_(p), outputs_(model, rowsOf(*model, columns), params), result_(result) {
    y_.resize(columns.size());
    dydp_.resize(columns.size() * params.size());
    const std::size_t nx = static_cast<std::size_t>(model->nx());
    result_.times.reserve(expectedTimes);
    result_.outputValues.reserve(expectedTimes * y_.size());
    result_.values.reserve(expectedTimes * dydp_.size());
    result_.states.reserve(expectedTimes * nx);
    result_.stateSensitivities.reserve(expectedTimes * nx * params.size());
  }

  void record(double t, const std::vector<double>& x, const std::vector<double>& s) {
    outputs_.evaluate(t, x.data(), p_.data(), s.data(), y_.data(), dydp_.data());
    result_.times.push_back(t);
    result_.outputValues.insert(result_.outputValues.end(), y_.begin(), y_.end());
    result_.values.insert(result_.values.end(), dydp_.begin(), dydp_.end());
    result_.states.insert(result_.states.end(), x.begin(), x.end());
    // S is column-major (parameter j's column at j·nx); the result is state-major.
    const std::size_t nx = x.size();
    const std::size_t ns = outputs_.numParams();
    const std::size_t at = result_.stateSensitivities.size();
    result_.stateSensitivities.resize(at + nx * ns);
    double* out = result_.stateSensitivities.data() + at;
    for (std::size_t i = 0; i < nx; ++i) {
      for (std::size_t j = 0; j < ns; ++j) out[i * ns + j] = s[j * nx + i];
    }
  }

  static std::vector<std::size_t> rowsOf(const symbolic::CompiledModel& model,
                                         const std::vector<OutputColumn>& columns) {
    std::vector<std::size_t> rows;
    for (const OutputColumn& c : columns) rows.push_back(c.row(model.system().outputs.size()));
    return rows;
  }

 private:
  std::shared_ptr<const symbolic::CompiledModel> model_;
  const std::vector<double>& p_;
  sensitivity::OutputSensitivities outputs_;
  SensitivityResult& result_;
  std::vector<double> y_, dydp_;
};


void recordEventMarks(const simulation::EventSimulation& sim, SensitivityResult& result) {
  simulation::EventMarks marks = simulation::eventMarks(sim.executions());
  result.eventTimes = std::move(marks.times);
  result.eventIds = std::move(marks.ids);
}

// Runs the simulation driver through the output times, recording each with the driver's S;
// `collectStats` runs whether the run ends or throws.
template <class CollectStats>
void runRecorded(simulation::EventSimulation& sim, const Setup& s, Recorder& recorder,
                 CollectStats collectStats) {
  std::vector<double> state;
  try {
    sim.run(s.t0, s.x0, s.p, s.problem->times,
            [&](double t, const double* x) {
              state.assign(x, x + s.model->nx());
              recorder.record(t, state, sim.sensitivities());
            },
            detail::wholeRunMonitor(*s.monitor, s.t0, s.tEnd));
  } catch (...) {
    collectStats();
    throw;
  }
  collectStats();
}

// S(τ⁺) = S(τ⁻) + (f(τ⁻) − f(τ⁺))·dτ/dp_k for each sensitivity column (S column-major).
void addSwitchJump(const Setup& s, const petab::TimeBreakpoint& sw, const std::vector<double>& x,
                   std::vector<double>& sens) {
  const auto nx = static_cast<std::size_t>(s.model->nx());
  // The switch is `t − τ < 0` or alike: the neighbouring doubles are on either side of it.
  std::vector<double> before(nx), after(nx);
  s.model->rhs(std::nextafter(sw.time, -INFINITY), x.data(), s.p.data(), before.data());
  s.model->rhs(std::nextafter(sw.time, INFINITY), x.data(), s.p.data(), after.data());
  for (std::size_t j = 0; j < s.params.size(); ++j) {
    const double dTau = sw.dTime[static_cast<std::size_t>(s.params[j])];
    if (dTau == 0.0) continue;
    for (std::size_t i = 0; i < nx; ++i) sens[j * nx + i] += (before[i] - after[i]) * dTau;
  }
}

}  // namespace

// odeSD direct or CVODES forward: the integrator computes S with the states.
void runDirect(const Setup& s, integrators::Method method, SensitivityResult& result) {
  Recorder recorder(s.model, s.p, s.columns, s.params, s.problem->times.size(), result);
  // The simulation driver applies the jumps at events and keeps the history of delay equations.
  if (simulation::needsSimulationDriver(s.model->system())) {
    simulation::EventSimulation sim(s.model, method, s.options->integrator);
    sim.enableSensitivities(s.params, s.s0, s.options->errorControl);
    result.stats.simulations = 1;
    runRecorded(sim, s, recorder, [&] {
      result.stats.integrator = sim.stats();
      result.stats.sensitivityEvals = result.stats.integrator.sensitivityRhsEvals;
      recordEventMarks(sim, result);
    });
    return;
  }
  // Switches of the right-hand side at times that depend on parameters (Brannmark's insulin
  // step at t = insulin_time_1): the sensitivity equations hold ∂f/∂p of a piecewise, which is 0
  // almost everywhere, so moving the switch — x(t > τ) changes by (f(τ⁻) − f(τ⁺))·dτ/dp — was
  // missing (odeSD and CVODES gave 0 for dIR/d insulin_time_1 = 0.42 at t = 2 with τ = 1). The
  // run stops at each switch, adds that jump to S and restarts, as the PEtab objective does
  // (petab/time_breakpoints.h). A switch at t0 itself is not one: there y is not differentiable
  // in τ (left and right derivatives differ), and the run reports the side it integrates on.
  const std::vector<petab::TimeBreakpoint> switches =
      s.tEnd > s.t0 ? petab::timeBreakpoints(s.model->system(), s.p, s.t0, s.tEnd)
                    : std::vector<petab::TimeBreakpoint>{};
  std::size_t nextSwitch = 0;
  std::unique_ptr<integrators::Integrator> integrator;
  integrators::IntegratorStats finished;  // of the integrators of earlier segments
  auto collectStats = [&] {
    result.stats.integrator = finished;
    if (integrator) integrators::accumulate(result.stats.integrator, integrator->stats());
    result.stats.sensitivityEvals = result.stats.integrator.sensitivityRhsEvals;
  };
  std::vector<double> x = s.x0, sens = s.s0;
  double tCurrent = s.t0;
  // A fresh integrator from (tCurrent, x, S) that lands exactly on the next switch.
  auto start = [&] {
    if (integrator) integrators::accumulate(finished, integrator->stats());
    integrator = integrators::makeIntegrator(method);
    integrator->initialize(s.model, s.options->integrator, tCurrent, x, s.p);
    integrator->enableSensitivities(s.params, sens, s.options->errorControl);
    if (nextSwitch < switches.size()) {
      if (auto* c = dynamic_cast<integrators::CvodesIntegrator*>(integrator.get()))
        c->setStopTime(switches[nextSwitch].time);
      else if (auto* d = dynamic_cast<integrators::OdeSdIntegrator*>(integrator.get()))
        d->setStopTime(switches[nextSwitch].time);
    }
  };
  const ProgressMonitor runMonitor = detail::wholeRunMonitor(*s.monitor, s.t0, s.tEnd);
  auto advance = [&](double t) {
    if (t <= tCurrent) return;
    integrator->advanceTo(t, x, runMonitor);
    integrator->sensitivities(sens);
    tCurrent = t;
  };
  try {
    if (s.tEnd > s.t0) {
      start();
      result.stats.simulations = 1;
    }
    for (const double t : s.problem->times) {
      while (nextSwitch < switches.size() && switches[nextSwitch].time <= t) {
        const petab::TimeBreakpoint& sw = switches[nextSwitch++];
        advance(sw.time);
        addSwitchJump(s, sw, x, sens);
        start();
      }
      advance(t);
      recorder.record(t, x, sens);
    }
  } catch (...) {
    collectStats();
    throw;
  }
  collectStats();
}

namespace {

// PBSR / Exp on the trajectory of options.trajectory, in one integration: the integrator's step
// callback (Integrator::setStepCallback) reports every accepted step [ta, tb] with its dense
// output, and the propagator advances over the grid points inside it — the output times in
// (ta, tb] and the step end tb (the grid is the step grid plus the output times) — taking the
// states it needs inside each interval (sub-grid points, midpoints) from that dense output.
// (Before the hook the trajectory was integrated twice: once for the grid, once more for the
// states.) Steps past tEnd only contribute the output times up to tEnd.
// The propagator as the simulation driver's TrajectorySensitivities (models with events).
class PropagatorAcrossEvents : public simulation::TrajectorySensitivities {
 public:
  explicit PropagatorAcrossEvents(sensitivity::PeanoBakerPropagator& p) : p_(p) {}
  void restart(double t, const std::vector<double>& x, const std::vector<double>& s) override {
    p_.restart(t, x, s);
  }
  void advance(double t1, const StateSource& states) override { p_.advance(t1, states); }
  void sensitivities(std::vector<double>& s) override { p_.sensitivities(s); }

 private:
  sensitivity::PeanoBakerPropagator& p_;
};

sensitivity::PeanoBakerOptions peanoBakerOptions(const Setup& s, SensitivityMethod method) {
  sensitivity::PeanoBakerOptions o = s.options->peanoBaker;
  o.method = method == SensitivityMethod::Exp ? sensitivity::PeanoBakerMethod::Exp
                                              : sensitivity::PeanoBakerMethod::Pbsr;
  return o;
}

// PBSR / Exp on a model with events: the simulation driver integrates the trajectory, feeds the
// propagator its steps, and at each event jumps S (sensitivity_jumps.h) and restarts the
// propagator with it (issue 15: "PBSR and Exp restart on each event interval with the jumped S").
void runPeanoBakerAcrossEvents(const Setup& s, SensitivityMethod method,
                               SensitivityResult& result) {
  Recorder recorder(s.model, s.p, s.columns, s.params, s.problem->times.size(), result);
  sensitivity::PeanoBakerPropagator propagator(s.model, s.p, s.params,
                                               peanoBakerOptions(s, method));
  propagator.start(s.t0, s.x0, s.s0);
  PropagatorAcrossEvents adapter(propagator);
  simulation::EventSimulation sim(s.model, s.options->trajectory, s.options->integrator);
  sim.enablePropagatedSensitivities(s.params, s.s0, adapter);
  auto collectStats = [&] {
    result.stats.integrator = sim.stats();
    result.stats.peanoBaker = propagator.stats();
    result.stats.sensitivityEvals = propagator.stats().jacobianEvals;
    recordEventMarks(sim, result);
  };
  result.stats.simulations = 1;
  runRecorded(sim, s, recorder, collectStats);
}

}  // namespace

void runPeanoBaker(const Setup& s, SensitivityMethod method, SensitivityResult& result) {
  if (!s.model->system().events.empty()) {
    runPeanoBakerAcrossEvents(s, method, result);
    return;
  }
  Recorder recorder(s.model, s.p, s.columns, s.params, s.problem->times.size(), result);
  const std::vector<double>& times = s.problem->times;
  std::size_t next = 0;
  while (next < times.size() && times[next] == s.t0) {
    recorder.record(s.t0, s.x0, s.s0);
    ++next;
  }
  if (next == times.size()) return;

  std::unique_ptr<integrators::Integrator> trajectory;
  sensitivity::PeanoBakerPropagator propagator(s.model, s.p, s.params,
                                               peanoBakerOptions(s, method));
  auto collectStats = [&] {
    if (trajectory) result.stats.integrator = trajectory->stats();
    result.stats.peanoBaker = propagator.stats();
    result.stats.sensitivityEvals = propagator.stats().jacobianEvals;
  };

  try {
    propagator.start(s.t0, s.x0, s.s0);
    std::vector<double> sens;
    // Advance to grid point g with states from the current step's dense output; record the
    // output times equal to g.
    auto advance = [&](double g, integrators::StepDenseOutput& dense) {
      const auto nx = static_cast<std::size_t>(s.model->nx());
      const sensitivity::StateSource states = [&dense, nx](double t, std::vector<double>& x) {
        x.resize(nx);
        dense.state(t, x.data());
      };
      propagator.advance(g, states);
      if (next < times.size() && times[next] == g) {
        propagator.sensitivities(sens);
        while (next < times.size() && times[next] == g) {
          recorder.record(g, propagator.state(), sens);
          ++next;
        }
      }
    };
    trajectory = integrators::makeIntegrator(s.options->trajectory);
    trajectory->initialize(s.model, s.options->integrator, s.t0, s.x0, s.p);
    trajectory->setStepCallback(
        [&](double, double tb, integrators::StepDenseOutput& dense) {
          while (next < times.size() && times[next] < tb) advance(times[next], dense);
          if (tb < s.tEnd || (next < times.size() && times[next] == tb)) advance(tb, dense);
        });
    result.stats.simulations = 1;
    const ProgressMonitor monitor = detail::wholeRunMonitor(*s.monitor, s.t0, s.tEnd);
    std::vector<double> x;
    trajectory->advanceTo(s.tEnd, x, monitor);
    if (next < times.size()) {
      throw Error("PBSR/Exp: the trajectory ended at t = " + exactNumber(propagator.time()) +
                  " before the output time " + exactNumber(times[next]));
    }
  } catch (...) {
    collectStats();
    throw;
  }
  collectStats();
}

// Finite differences of the whole pipeline (initial assignments, outputs included):
// sensitivity/finite_differences.h, at min(integrator, fd) tolerances.
void runFiniteDifferences(const Setup& s, SensitivityResult& result) {
  const SensitivityOptions& o = *s.options;
  sensitivity::FiniteDifferenceOptions fd;
  fd.relativeStep = o.fdRelativeStep;
  fd.richardson = o.fdRichardson;
  fd.integrator = o.trajectory;
  fd.integration = o.integrator;
  fd.integration.rtol = std::min(fd.integration.rtol, o.fdRtol);
  fd.integration.atol = std::min(fd.integration.atol, o.fdAtol);
  sensitivity::FiniteDifferenceProblem problem;
  problem.model = s.model;
  problem.t0 = s.t0;
  problem.times = s.problem->times;
  problem.p = s.p;
  problem.params = s.params;
  problem.outputRows = Recorder::rowsOf(*s.model, s.columns);
  sensitivity::FiniteDifferenceResult fdResult;
  auto collectStats = [&] {
    result.stats.integrator = fdResult.integrator;
    result.stats.sensitivityEvals = fdResult.perturbedRhsEvals;
    result.stats.simulations = fdResult.simulations;
    result.stats.fdSteps = fdResult.steps;
    result.stats.fallbacks = fdResult.fallbacks;
  };
  try {
    sensitivity::finiteDifferences(
        problem, fd,
        [&](int run, int runs) {
          return detail::wholeRunMonitor(*s.monitor, s.t0, s.tEnd, run, runs);
        },
        fdResult);
  } catch (...) {
    collectStats();
    throw;
  }
  collectStats();
  result.times = s.problem->times;
  result.states = std::move(fdResult.states);
  result.outputValues = std::move(fdResult.outputs);
  result.stateSensitivities = std::move(fdResult.stateSensitivities);
  result.values = std::move(fdResult.outputSensitivities);
}


}  // namespace sensode::tasks::detail
