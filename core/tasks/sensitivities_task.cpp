// SPDX-License-Identifier: MIT
#include "core/tasks/sensitivities_task.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <unordered_set>

#include "core/common/errors.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/odesd_integrator.h"
#include "core/petab/time_breakpoints.h"
#include "core/sensitivity/finite_differences.h"
#include "core/simulation/event_simulation.h"
#include "core/sensitivity/output_sensitivities.h"
#include "core/tasks/task_common.h"
#include "core/tasks/undefined_outputs.h"

namespace sensode::tasks {

const char* toString(SensitivityMethod m) {
  switch (m) {
    case SensitivityMethod::OdeSd: return "odesd";
    case SensitivityMethod::Cvodes: return "cvodes";
    case SensitivityMethod::Pbsr: return "pbsr";
    case SensitivityMethod::Exp: return "exp";
    case SensitivityMethod::FiniteDifferences: return "fd";
  }
  return "unknown";
}

std::optional<SensitivityMethod> sensitivityMethodFromString(const std::string& s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const SensitivityMethod m :
       {SensitivityMethod::OdeSd, SensitivityMethod::Cvodes, SensitivityMethod::Pbsr,
        SensitivityMethod::Exp, SensitivityMethod::FiniteDifferences}) {
    if (lower == toString(m)) return m;
  }
  return std::nullopt;
}

namespace {

using detail::exactNumber;
using detail::InvalidInput;
using detail::OutputColumn;

std::string violation(const char* field, const std::string& value, const char* constraint) {
  return std::string("SensitivityOptions::") + field + " = " + value +
         ". Violated constraint: " + constraint;
}

// Indices into the model's parameter vector for `ids` (empty = all), InvalidInput on unknown or
// repeated ids.
std::vector<int> selectParameters(const symbolic::CompiledModel& model,
                                  const std::vector<std::string>& ids) {
  const symbolic::OdeSystem& sys = model.system();
  std::vector<int> indices;
  if (ids.empty()) {
    for (int k = 0; k < model.np(); ++k) indices.push_back(k);
    return indices;
  }
  std::unordered_set<int> seen;
  for (const std::string& id : ids) {
    const int k = sys.findParam(id);
    if (k < 0) {
      throw InvalidInput(
          "unknown parameter id '" + id + "' (known: " +
          detail::firstIds(sys.params, [](const symbolic::ParamVar& v) { return v.id; }) + ")");
    }
    if (!seen.insert(k).second) throw InvalidInput("parameter id '" + id + "' given twice");
    indices.push_back(k);
  }
  return indices;
}

// S0 = ∂x0/∂p for the selected parameters, dense column-major nx × ns.
std::vector<double> initialSensitivities(const symbolic::CompiledModel& model, double t0,
                                         const std::vector<double>& p,
                                         const std::vector<int>& params) {
  const symbolic::SparsePattern& pattern = model.initialSensitivityPattern();
  std::vector<double> sparse(static_cast<std::size_t>(pattern.nnz()));
  model.initialSensitivity(t0, p.data(), sparse.data());
  const auto nx = static_cast<std::size_t>(model.nx());
  std::vector<double> s0(nx * params.size(), 0.0);
  for (std::size_t j = 0; j < params.size(); ++j) {
    const auto col = static_cast<std::size_t>(params[j]);
    for (int k = pattern.colPtr[col]; k < pattern.colPtr[col + 1]; ++k) {
      const double v = sparse[static_cast<std::size_t>(k)];
      const int row = pattern.rowIdx[static_cast<std::size_t>(k)];
      if (!std::isfinite(v)) {
        throw InvalidInput("non-finite initial sensitivity d '" +
                           model.system().states[static_cast<std::size_t>(row)].id + "' / d '" +
                           model.system().params[col].id + "': " + exactNumber(v));
      }
      s0[j * nx + static_cast<std::size_t>(row)] = v;
    }
  }
  return s0;
}

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

// Everything the methods share.
struct Setup {
  std::shared_ptr<const symbolic::CompiledModel> model;
  const SensitivityProblem* problem = nullptr;
  const SensitivityOptions* options = nullptr;
  const ProgressMonitor* monitor = nullptr;
  std::vector<OutputColumn> columns;
  std::vector<double> p;
  std::vector<int> params;
  std::vector<double> x0, s0;
  double t0 = 0, tEnd = 0;
};

void recordEventMarks(const simulation::EventSimulation& sim, SensitivityResult& result) {
  simulation::EventMarks marks = simulation::eventMarks(sim.executions());
  result.eventTimes = std::move(marks.times);
  result.eventIds = std::move(marks.ids);
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

// odeSD direct or CVODES forward: the integrator computes S with the states.
void runDirect(const Setup& s, integrators::Method method, SensitivityResult& result) {
  Recorder recorder(s.model, s.p, s.columns, s.params, s.problem->times.size(), result);
  // The simulation driver applies the jumps at events and keeps the history of delay equations.
  if (simulation::needsSimulationDriver(s.model->system())) {
    simulation::EventSimulation sim(s.model, method, s.options->integrator);
    sim.enableSensitivities(s.params, s.s0, s.options->errorControl);
    std::vector<double> state;
    auto finishStats = [&] {
      result.stats.integrator = sim.stats();
      result.stats.sensitivityEvals = result.stats.integrator.sensitivityRhsEvals;
      recordEventMarks(sim, result);
    };
    try {
      result.stats.simulations = 1;
      sim.run(s.t0, s.x0, s.p, s.problem->times,
              [&](double t, const double* x) {
                state.assign(x, x + s.model->nx());
                recorder.record(t, state, sim.sensitivities());
              },
              detail::wholeRunMonitor(*s.monitor, s.t0, s.tEnd));
    } catch (...) {
      finishStats();
      throw;
    }
    finishStats();
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
  std::vector<double> state;
  try {
    result.stats.simulations = 1;
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

std::string shortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The failure's technical detail, or its message when it has none.
std::string detailOf(const IntegrationFailure& e) {
  return e.details().empty() ? std::string(e.what()) : e.details();
}

// The default method never fails where another succeeds: odeSD direct sensitivities, else CVODES
// forward sensitivities (the same integration by BDF: needs f, J and ∂f/∂p only, not ẍ, J_J and
// ∂ẍ/∂p; the configured corrector, then the augmented system), else central finite differences
// of CVODES time courses (needs no derivative of the model at all: where ∂f/∂p is not finite at
// a single point, both direct methods stop at that point). Every method that failed is one sentence in
// stats.fallbacks; the result (data and statistics) is that of the method that succeeded.
void runWithFallbacks(const Setup& s, SensitivityResult& result) {
  auto clear = [&] {
    std::vector<std::string> fallbacks = std::move(result.stats.fallbacks);
    result.times.clear();
    result.outputValues.clear();
    result.values.clear();
    result.states.clear();
    result.stateSensitivities.clear();
    result.eventTimes.clear();
    result.eventIds.clear();
    result.stats = {};
    result.stats.fallbacks = std::move(fallbacks);
  };
  std::string odeSdFailure, odeSdDetails;
  try {
    runDirect(s, integrators::Method::OdeSd, result);
    return;
  } catch (const IntegrationFailure& e) {
    odeSdFailure = e.what();
    odeSdDetails = detailOf(e);
  }
  clear();
  std::string cvodesFailure, cvodesDetails;
  try {
    runDirect(s, integrators::Method::Cvodes, result);
    result.stats.fallbacks.push_back("odeSD direct sensitivities failed (" + odeSdFailure +
                                     "); computed with CVODES forward sensitivities instead");
    return;
  } catch (const IntegrationFailure& e) {
    cvodesFailure = e.what();
    cvodesDetails = detailOf(e);
  }
  // The staggered and simultaneous correctors test S's error apart from x's, with tolerances
  // atol/|p̄_k|: on BIOMD0000000013 (atol 1e-12) the staggered error test failed repeatedly at
  // t = 0.045 where the augmented system (one error norm over [x; S]) integrates to the end.
  if (s.options->integrator.sensitivityCorrector != integrators::SensitivityCorrector::Augmented) {
    clear();
    SensitivityOptions augmented = *s.options;
    augmented.integrator.sensitivityCorrector = integrators::SensitivityCorrector::Augmented;
    Setup retry = s;
    retry.options = &augmented;
    try {
      runDirect(retry, integrators::Method::Cvodes, result);
      result.stats.fallbacks.push_back(
          "odeSD direct sensitivities failed (" + odeSdFailure + ") and so did CVODES forward "
          "sensitivities (" + cvodesFailure + "); computed by CVODES on the augmented system "
          "[x; S] instead");
      return;
    } catch (const IntegrationFailure& e) {
      cvodesFailure += "; on the augmented system: " + std::string(e.what());
      cvodesDetails += "; augmented: " + detailOf(e);
    }
  }
  clear();
  try {
    runFiniteDifferences(s, result);
  } catch (const IntegrationFailure& e) {
    throw IntegrationFailure(odeSdFailure + "; CVODES forward sensitivities, tried instead, failed "
                                            "too: " + cvodesFailure +
                                 "; and so did finite differences: " + e.what(),
                             e.t(), e.stepSize(),
                             "odeSD: " + odeSdDetails + "; CVODES: " + cvodesDetails +
                                 "; finite differences: " + detailOf(e));
  }
  result.stats.fallbacks.push_back(
      "odeSD direct sensitivities failed (" + odeSdFailure + ") and so did CVODES forward "
      "sensitivities (" + cvodesFailure + "); computed by finite differences instead (" +
      std::to_string(result.stats.simulations) + " simulations at rtol " +
      shortNumber(std::min(s.options->integrator.rtol, s.options->fdRtol)) + ")");
}

// values ← (p/y)·values, 0 and flagged where |y| ≤ guard.
void scale(SensitivityResult& result, const std::vector<double>& p, const std::vector<int>& params,
           double guard) {
  const std::size_t ny = result.outputIds.size();
  const std::size_t ns = result.parameterIds.size();
  const std::size_t nt = result.times.size();
  result.scaled = true;
  result.guarded.assign(nt * ny, 0);
  result.guardedCount = 0;
  for (std::size_t it = 0; it < nt; ++it) {
    for (std::size_t iy = 0; iy < ny; ++iy) {
      const std::size_t a = it * ny + iy;
      const double y = result.outputValues[a];
      double* v = &result.values[a * ns];
      if (!(std::abs(y) > guard)) {
        result.guarded[a] = 1;
        ++result.guardedCount;
        std::fill(v, v + ns, 0.0);
        continue;
      }
      for (std::size_t j = 0; j < ns; ++j) {
        v[j] *= p[static_cast<std::size_t>(params[j])] / y;
      }
    }
  }
}

}  // namespace

std::optional<std::string> SensitivityOptions::validate() const {
  if (auto why = integrator.validate()) return why;
  if (auto why = peanoBaker.validate()) return why;
  if (!(fdRelativeStep > 0) || !(fdRelativeStep < 0.5)) {
    return violation("fdRelativeStep", exactNumber(fdRelativeStep), "0 < fdRelativeStep < 0.5");
  }
  if (!(fdRtol > 0) || !(fdRtol < 1)) {
    return violation("fdRtol", exactNumber(fdRtol), "0 < fdRtol < 1");
  }
  if (!(fdAtol > 0) || !std::isfinite(fdAtol)) {
    return violation("fdAtol", exactNumber(fdAtol), "0 < fdAtol < inf");
  }
  return std::nullopt;
}

namespace {

SensitivityResult runOnModel(const SensitivityProblem& problem, const SensitivityOptions& options,
                             const ProgressMonitor& monitor) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SensitivityResult result;
  Setup setup;

  auto finish = [&](Termination termination, std::string message, std::string details = {}) {
    result.termination = termination;
    result.message = std::move(message);
    result.details = std::move(details);
    result.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    // Moved, not copied: finish ends the run, and copying a large result cost as much as a fast
    // method's own work (Exp on the 52-species suite models).
    return std::move(result);
  };

  try {
    if (!problem.model) throw InvalidInput("sensitivities: no model");
    if (auto why = options.validate()) throw InvalidOptions(*why);
    const symbolic::CompiledModel& model = *problem.model;
    // PBSR and Exp propagate S with the ODE's Jacobian; a differential-algebraic model (algebraic
    // rules, fast reactions) gets IDAS forward sensitivities instead (below).
    const bool dae = model.system().isDae();
    detail::checkOutputTimes(problem.t0, problem.times);

    setup.model = problem.model;
    setup.problem = &problem;
    setup.options = &options;
    setup.monitor = &monitor;
    setup.columns = detail::selectOutputColumns(model, problem.outputs, problem.forceAmount,
                                                problem.forceConcentration);
    setup.p = resolveParameters(model, problem.overrides);
    setup.params = selectParameters(model, problem.parameters);
    setup.t0 = problem.t0;
    setup.tEnd = problem.times.back();
    setup.x0 = detail::initialState(model, problem.t0, setup.p);
    setup.s0 = initialSensitivities(model, problem.t0, setup.p, setup.params);

    for (const OutputColumn& c : setup.columns) result.outputIds.push_back(c.id);
    for (const int k : setup.params) {
      result.parameterIds.push_back(model.system().params[static_cast<std::size_t>(k)].id);
      result.parameterValues.push_back(setup.p[static_cast<std::size_t>(k)]);
    }
    for (const symbolic::StateVar& v : model.system().states) result.stateIds.push_back(v.id);

    // (Outputs that read a delay need the solution's history: they are checked as recorded.)
    if (problem.times.front() == problem.t0 && model.system().delays.empty()) {
      // An output with no value at t0 is refused before the (possibly long) computation.
      std::vector<double> atStart(setup.columns.size());
      std::vector<double> all(3 * model.system().outputs.size());
      model.outputs(setup.t0, setup.x0.data(), setup.p.data(), all.data());
      for (std::size_t j = 0; j < setup.columns.size(); ++j)
        atStart[j] = all[setup.columns[j].row(model.system().outputs.size())];
      detail::checkOutputsDefined(model, setup.columns, {setup.t0}, setup.x0, setup.p, atStart);
    }
    switch (options.method) {
      case SensitivityMethod::OdeSd: runWithFallbacks(setup, result); break;
      case SensitivityMethod::Cvodes: runDirect(setup, integrators::Method::Cvodes, result); break;
      case SensitivityMethod::Pbsr:
      case SensitivityMethod::Exp:
        if (dae) {
          runDirect(setup, integrators::Method::Cvodes, result);
          result.stats.fallbacks.push_back(
              std::string(toString(options.method)) +
              " needs an ODE dx/dt = f(x); for this differential-algebraic model IDAS forward "
              "sensitivities were computed instead");
          break;
        }
        // The Peano–Baker series propagate dS/dt = J(t)·S: a delay adds S(t − τ) terms they
        // do not have. odeSD direct sensitivities carry them (symbolic/delays.h).
        if (const auto& delays = model.system().delays; !delays.empty()) {
          runWithFallbacks(setup, result);
          result.stats.fallbacks.insert(
              result.stats.fallbacks.begin(),
              std::string(toString(options.method)) + " has no delayed sensitivity terms for " +
                  symbolic::describeDelay(*model.system().pool, delays.front().node) +
                  " (element '" + delays.front().element +
                  "'); odeSD direct sensitivities ran instead");
          break;
        }
        runPeanoBaker(setup, options.method, result);
        break;
      case SensitivityMethod::FiniteDifferences: runFiniteDifferences(setup, result); break;
    }
    detail::checkOutputsDefined(model, setup.columns, result.times, result.states, setup.p,
                                result.outputValues);
    if (options.scaled) scale(result, setup.p, setup.params, options.integrator.atol);
  } catch (const IntegrationFailure& e) {
    return finish(Termination::IntegrationFailure, e.what(), e.details());
  } catch (const Cancelled& e) {
    return finish(Termination::UserAbort, e.what());
  } catch (const InvalidOptions& e) {
    return finish(Termination::InvalidInput, e.what());
  } catch (const InvalidInput& e) {
    return finish(Termination::InvalidInput, e.what());
  } catch (const std::exception& e) {
    return finish(Termination::IntegrationFailure, e.what());
  }
  return finish(Termination::Success, {});
}

}  // namespace

SensitivityResult runSensitivities(const SensitivityProblem& problem,
                                   const SensitivityOptions& options,
                                   const ProgressMonitor& monitor) {
  return detail::runWithFastReactionFallback(
      problem, [&](const SensitivityProblem& p) { return runOnModel(p, options, monitor); });
}

}  // namespace sensode::tasks
