// SPDX-License-Identifier: MIT
#include "core/simulation/event_simulation.h"

#include <algorithm>
#include <cmath>

#include "core/common/errors.h"
#include "core/simulation/event_simulation_impl.h"

namespace sensode::simulation {

void EventSimulation::Impl::fail(int e, const std::string& reason) const {
  throw SbmlError(model->system().modelFile, events.event(e).id, reason);
}

double EventSimulation::Impl::nextQueueTime() const {
  double t = kInf;
  for (const Pending& q : queue) t = std::min(t, q.time);
  return t;
}

void EventSimulation::Impl::schedule(int e, double t, const std::vector<double>& x) {
  const double d = events.hasDelay(e) ? events.delay(e, t, x.data(), pp()) : 0.0;
  if (!std::isfinite(d) || d < 0)
    fail(e, "event delay is " + num(d) + " at t = " + num(t) + " (it must be finite and >= 0)");
  Pending pe{e, t + d, t, {}, false, {}, {}};
  if (sens)
    pe.executionTimeSensitivities =
        delayedExecutionTimeDerivative(jumpContext(), e, t, x, S, dTaudP);
  if (events.event(e).useValuesFromTriggerTime) {
    pe.values.resize(events.event(e).assignments.size());
    events.assignmentValues(e, t, x.data(), pp(), pe.values.data());
    pe.hasValues = true;
    if (sens) pe.valueSensitivities = valueDerivatives(e, t, x);
  }
  queue.push_back(std::move(pe));
}

void EventSimulation::Impl::cancelIfNotPersistent(int e) {
  if (events.event(e).persistent) return;
  std::erase_if(queue, [e](const Pending& q) { return q.event == e; });
}

void EventSimulation::Impl::handleSwitches(double t, const std::vector<double>& x,
                                           const std::vector<double>& now) {
  for (int e = 0; e < ne(); ++e) {
    const auto i = static_cast<std::size_t>(e);
    if (triggerState[i] == 0 && now[i] != 0) schedule(e, t, x);
    if (triggerState[i] != 0 && now[i] == 0) cancelIfNotPersistent(e);
    triggerState[i] = now[i];
  }
}

void EventSimulation::Impl::execute(const Pending& pe, double t, std::vector<double>& x) {
  const auto& def = events.event(pe.event);
  const std::vector<double> before = sens ? x : std::vector<double>{};
  // Executions at this time (and what they trigger) move with the execution time.
  if (sens) dTaudP = pe.executionTimeSensitivities;
  std::vector<double> values = pe.values;
  if (!pe.hasValues) {
    values.resize(def.assignments.size());
    events.assignmentValues(pe.event, t, x.data(), pp(), values.data());
  }
  // Species in concentration: amount = value × the compartment size before this execution
  // (suite cases 01779, 01505: a compartment assigned by the same event changes the
  // concentration afterwards, keeping the amount).
  std::vector<double> scales(def.assignments.size());
  events.assignmentScales(pe.event, t, x.data(), pp(), scales.data());
  std::vector<double> sizeBefore(def.rescaled.size()), sizeAfter(def.rescaled.size());
  events.rescaleSizes(pe.event, t, x.data(), pp(), sizeBefore.data());
  for (std::size_t i = 0; i < def.assignments.size(); ++i)
    x[static_cast<std::size_t>(def.assignments[i].state)] = values[i] * scales[i];
  // Concentration states in a compartment the event resized keep their amounts.
  events.rescaleSizes(pe.event, t, x.data(), pp(), sizeAfter.data());
  for (std::size_t i = 0; i < def.rescaled.size(); ++i)
    x[static_cast<std::size_t>(def.rescaled[i].state)] *= sizeBefore[i] / sizeAfter[i];
  executions.push_back({t, def.id});
  if (sens) jumpSensitivities(pe, t, before, x);
}

void EventSimulation::Impl::processEvents(double t, std::vector<double>& x) {
  const std::vector<double> before = x;
  const std::size_t executed = executions.size();
  runDue(t, x);
  if (eventSink && executions.size() > executed) eventSink(t, before.data(), x.data());
}

void EventSimulation::Impl::runDue(double t, std::vector<double>& x) {
  std::vector<double> now(static_cast<std::size_t>(ne()));
  events.triggers(t, x.data(), pp(), now.data());
  handleSwitches(t, x, now);
  for (int n = 0;; ++n) {
    std::vector<std::size_t> due;
    for (std::size_t i = 0; i < queue.size(); ++i)
      if (queue[i].time <= t) due.push_back(i);
    if (due.empty()) return;
    if (n >= kMaxCascade)
      fail(queue[due.front()].event, "more than " + std::to_string(kMaxCascade) +
                                         " event executions at t = " + num(t) +
                                         " (events that keep triggering each other)");
    double best = -kInf;
    std::vector<std::size_t> tied;
    for (std::size_t i : due) {
      const int e = queue[i].event;
      double pr = events.hasPriority(e) ? events.priority(e, t, x.data(), pp()) : -kInf;
      if (std::isnan(pr)) pr = -kInf;
      if (tied.empty() || pr > best) {
        best = pr;
        tied.assign(1, i);
      } else if (pr == best) {
        tied.push_back(i);
      }
    }
    std::size_t pick = tied.front();
    if (tied.size() > 1) {
      std::uniform_int_distribution<std::size_t> choose(0, tied.size() - 1);
      pick = tied[choose(random)];
    }
    const Pending pe = queue[pick];
    queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(pick));
    execute(pe, t, x);
    events.triggers(t, x.data(), pp(), now.data());
    handleSwitches(t, x, now);
  }
}

void EventSimulation::Impl::propagateTo(double t, integrators::StepDenseOutput& dense) {
  const auto nx = static_cast<std::size_t>(model->nx());
  propagator->advance(t, [&dense, nx](double tq, std::vector<double>& x) {
    x.resize(nx);
    dense.state(tq, x.data());
  });
}

void EventSimulation::Impl::propagateOver(double tEnd, integrators::StepDenseOutput& dense) {
  while (!propagationDone() && (*times)[propagatedOutput] <= tEnd) {
    const double T = (*times)[propagatedOutput++];
    propagateTo(T, dense);
    std::vector<double> x(static_cast<std::size_t>(model->nx()));
    dense.state(T, x.data());
    propagator->sensitivities(S);
    propagated.push_back({T, std::move(x), S});
  }
  if (!propagationDone()) propagateTo(tEnd, dense);
}

void EventSimulation::Impl::propagateToStop(integrators::StepDenseOutput& dense) {
  bool reportedHere = false;  // an output was reported by this call (x, S hold it)
  std::vector<double> x(static_cast<std::size_t>(model->nx()));
  while (nextOutput < times->size() && (*times)[nextOutput] < stopTime) {
    const double T = (*times)[nextOutput];
    dropPropagatedBefore(T);
    const bool repeated = nextOutput > 0 && (*times)[nextOutput - 1] == T;
    if (repeated && reportedHere) {
      // the same time again: x and S as just reported
    } else if (!propagated.empty() && propagated.front().t == T) {
      x = std::move(propagated.front().x);
      S = std::move(propagated.front().s);
      propagated.pop_front();
    } else {
      propagateTo(T, dense);
      dense.state(T, x.data());
      propagator->sensitivities(S);
      propagatedOutput = std::max(propagatedOutput, nextOutput + 1);
    }
    (*output)(T, x.data());
    reportedHere = true;
    ++nextOutput;
  }
  if (propagationDone()) return;
  propagateTo(stopTime, dense);
  propagator->sensitivities(S);
}

void EventSimulation::Impl::dropPropagatedBefore(double t) {
  while (!propagated.empty() && propagated.front().t < t) propagated.pop_front();
}

void EventSimulation::Impl::takePropagated(double T) {
  if (propagated.empty() && model->nx() == 0) return;  // no states: no steps, S is empty
  dropPropagatedBefore(T);
  if (propagated.empty() || propagated.front().t != T)
    throw Error(
        "sensitivities across events: no propagated sensitivities for the output at "
        "t = " +
        num(T) + " (internal error)");
  S = std::move(propagated.front().s);
  propagated.pop_front();
}

void EventSimulation::Impl::restart(double t, const std::vector<double>& x) {
  forgetScannedOutputs();
  if (integrator)
    integrators::accumulate(finished, integrator->stats());
  else {
    integrator = integrators::makeIntegrator(method);
    integrator->setStepCallback(
        [this](double a, double b, integrators::StepDenseOutput& d) { onStep(a, b, d); });
  }
  integrators::IntegratorOptions o = options;
  // Method of steps: t − τ must lie in a finished step (delay_history.h).
  if (history) o.maxStepSize = std::min(o.maxStepSize, history->smallestConstantDelay());
  if (o.initialStepSize > o.maxStepSize) o.initialStepSize = 0;
  integrator->initialize(model, o, t, x, *p);
  if (propagator) {
    propagator->restart(t, x, S);
    propagatedOutput = nextOutput;
    propagated.clear();
  } else if (sens) {
    integrator->enableSensitivities(sensParams, S, errorControl);
  }
  resetScan(t, x);
}

void EventSimulation::Impl::integrateAgainToStop(const ProgressMonitor& monitor) {
  scanning = false;
  S = sSafe;
  restart(tSafe, xSafe);
  std::vector<double> x = xSafe;
  double reached = tSafe;
  // A stop a rounding error after the last time reached (a time event just after an output
  // time) is taken as that time: integrators refuse an output time that close.
  auto distinct = [&](double t) { return t - reached > 1e-12 * std::max(1.0, std::abs(t)); };
  while (nextOutput < times->size() && (*times)[nextOutput] < stopTime) {
    const double T = (*times)[nextOutput];
    if (distinct(T)) {
      integrator->advanceTo(T, x, monitor);
      integrator->sensitivities(S);
      reached = T;
    }
    (*output)(T, x.data());
    ++nextOutput;
  }
  if (distinct(stopTime)) {
    integrator->advanceTo(stopTime, x, monitor);
    integrator->sensitivities(S);
  }
  scanning = true;
  computeTriggerTimeDerivative(stopTime, stopState);
}

void EventSimulation::Impl::computeTriggerTimeDerivative(double t, const std::vector<double>& x) {
  if (stopCause.kind == Cause::Delayed) {
    for (const Pending& q : queue)
      if (q.time <= t) {
        dTaudP = q.executionTimeSensitivities;
        return;
      }
  }
  if (stopCause.kind == Cause::Bisected) {
    const auto [root, timeRoot] =
        switchingRoot(jumpContext(), t, x, kSwitchWindow * std::max(1.0, std::abs(t)));
    if (root >= 0)
      stopCause = {Cause::Root, root};
    else if (timeRoot >= 0)
      stopCause = {Cause::TimeRoot, timeRoot};
  }
  switch (stopCause.kind) {
    case Cause::TimeRoot:
      dTaudP = timeEventDerivative(jumpContext(), stopCause.index);
      return;
    case Cause::Root:
      dTaudP = rootTimeDerivative(jumpContext(), stopCause.index, t, x, S);
      return;
    case Cause::Delayed:
    case Cause::Bisected:
      break;
  }
  throw Error("sensitivities across events: a trigger switched at t = " + num(t) +
              " where none of its relationals changes sign (a discontinuous function inside "
              "the trigger): the event time's derivative dτ/dp is undefined");
}

std::vector<double> EventSimulation::Impl::valueDerivatives(int e, double t,
                                                            const std::vector<double>& x) {
  return assignmentValueDerivatives(jumpContext(), e, t, x, S, dTaudP);
}

void EventSimulation::Impl::jumpSensitivities(const Pending& pe, double t,
                                              const std::vector<double>& xMinus,
                                              const std::vector<double>& xPlus) {
  if (!events.event(pe.event).rescaled.empty())
    fail(pe.event,
         "sensitivities across an event that resizes a compartment holding species "
         "in concentration are not supported yet");
  const std::vector<double> dValue =
      pe.valueSensitivities.empty() ? valueDerivatives(pe.event, t, xMinus) : pe.valueSensitivities;
  simulation::jumpSensitivities(jumpContext(), pe.event, t, xMinus, xPlus, dValue, dTaudP, S);
}

EventSimulation::EventSimulation(std::shared_ptr<const symbolic::CompiledModel> model,
                                 integrators::Method method,
                                 const integrators::IntegratorOptions& options)
    : impl_(std::make_unique<Impl>(std::move(model), method, options)) {}

EventSimulation::~EventSimulation() = default;

void EventSimulation::run(double t0, std::vector<double> x, const std::vector<double>& p,
                          const std::vector<double>& times, const OutputSink& output,
                          const ProgressMonitor& monitor) {
  Impl& d = *impl_;
  const auto nx = static_cast<std::size_t>(d.model->nx());
  const auto ne = static_cast<std::size_t>(d.ne());
  d.p = &p;
  d.times = &times;
  d.output = &output;
  d.nextOutput = 0;
  d.queue.clear();
  d.executions.clear();
  d.restarts = 0;
  d.sens = d.sensEnabled;
  d.random.seed(kRandomSeed);  // the same ties resolved the same way in every run
  if (d.integrator) d.integrator.reset();
  d.finished = {};
  d.triggerState.assign(ne, 0);
  for (std::size_t e = 0; e < ne; ++e)
    d.triggerState[e] = d.events.event(static_cast<int>(e)).initialValue ? 1 : 0;
  d.timeRootValues.resize(static_cast<std::size_t>(d.events.numTimeRoots()));
  d.events.timeRoots(p.data(), d.timeRootValues.data());
  const auto nr = static_cast<std::size_t>(d.events.numRoots());
  for (auto* v : {&d.xs, &d.xR}) v->assign(nx, 0);
  for (auto* v : {&d.gs, &d.gR}) v->assign(nr, 0);
  for (auto* v : {&d.trig, &d.trigR}) v->assign(ne, 0);

  // Scan pieces: the smallest gap between output times (the resolution the caller asked for).
  d.sampleSpacing = kInf;
  for (std::size_t i = 1; i < times.size(); ++i)
    if (times[i] > times[i - 1])
      d.sampleSpacing = std::min(d.sampleSpacing, times[i] - times[i - 1]);
  if (!times.empty() && times.back() > t0)
    d.sampleSpacing = std::min(d.sampleSpacing, times.back() - t0);

  double t = t0;
  if (d.sens) {
    d.S = d.s0;
    d.dTaudP.assign(d.ns(), 0.0);  // t0 does not depend on p
  }
  // The model reads its delay inputs from this run's history until run() returns.
  struct DetachHistory {
    const symbolic::CompiledModel* model;
    const symbolic::EventFunctions* events;
    ~DetachHistory() {
      model->attachDelayHistory(nullptr);
      events->attachDelayHistory(nullptr);
    }
  } detach{d.model.get(), &d.events};
  d.breakpoints.clear();
  d.nextBreakpoint = 0;
  if (d.history) {
    d.history->start(t0, x.data(), p.data(), d.sens ? d.S.data() : nullptr);
    d.model->attachDelayHistory(d.history.get());
    d.events.attachDelayHistory(d.history.get());
    if (!times.empty()) d.breakpoints = d.history->breakpoints(t0, times.back());
  }
  d.scanning = true;
  d.processEvents(t, x);
  d.model->makeConsistent(t, x.data(), p.data());
  auto markSafe = [&] {
    d.tSafe = t;
    d.xSafe = x;
    d.sSafe = d.S;
  };
  markSafe();
  bool needInit = true;
  while (d.nextOutput < times.size()) {
    const double T = times[d.nextOutput];
    // An output at the time of the last events (or a rounding error after it, which an
    // integrator refuses to step to): the state after them.
    if (T <= t || T - t <= 1e-12 * std::max(1.0, std::abs(T))) {
      output(T, x.data());
      ++d.nextOutput;
      continue;
    }
    if (needInit) {
      d.restart(t, x);
      needInit = false;
    }
    // A propagated discontinuity of a delay before T: integrate to it and restart there.
    while (d.nextBreakpoint < d.breakpoints.size() && d.breakpoints[d.nextBreakpoint] <= t)
      ++d.nextBreakpoint;
    const bool toBreakpoint =
        d.nextBreakpoint < d.breakpoints.size() && d.breakpoints[d.nextBreakpoint] < T &&
        T - d.breakpoints[d.nextBreakpoint] > 1e-12 * std::max(1.0, std::abs(T));
    try {
      if (toBreakpoint) {
        const double tb = d.breakpoints[d.nextBreakpoint++];
        d.integrator->advanceTo(tb, x, monitor);
        if (d.sens) d.integrator->sensitivities(d.S);
        t = tb;
        needInit = true;
        markSafe();
        continue;
      }
      // An output inside the step the scan went through: its states are at hand.
      if (d.sens || !d.takeScannedOutput(T, x)) d.integrator->advanceTo(T, x, monitor);
      if (d.propagator)
        d.takePropagated(T);
      else if (d.sens)
        d.integrator->sensitivities(d.S);
      t = T;
      output(T, x.data());
      ++d.nextOutput;
      markSafe();
    } catch (const RootStop&) {
      if (d.propagator) {
        // Nothing is reported after the last output: no S to carry across these events.
        if (d.propagationDone() && d.nextOutput >= times.size())
          d.sens = false;
        else
          d.computeTriggerTimeDerivative(d.stopTime, d.stopState);
      } else if (d.sens) {
        d.integrateAgainToStop(monitor);
      }
      t = d.stopTime;
      x = d.stopState;
      ++d.restarts;
      d.processEvents(t, x);
      d.model->makeConsistent(t, x.data(), p.data());  // DAE: algebraic states after the events
      needInit = true;
      markSafe();
    }
  }
}

void EventSimulation::enableSensitivities(const std::vector<int>& paramIndices,
                                          const std::vector<double>& s0, bool errorControl) {
  Impl& d = *impl_;
  d.sensEnabled = true;
  d.sensParams = paramIndices;
  d.s0 = s0;
  d.errorControl = errorControl;
  d.events.enableDerivatives();
  if (d.history) d.history->enableSensitivities(paramIndices);
}

void EventSimulation::enablePropagatedSensitivities(const std::vector<int>& paramIndices,
                                                    const std::vector<double>& s0,
                                                    TrajectorySensitivities& propagator) {
  enableSensitivities(paramIndices, s0, false);
  impl_->propagator = &propagator;
}

const std::vector<double>& EventSimulation::sensitivities() const { return impl_->S; }

IntegratorStats EventSimulation::stats() const {
  IntegratorStats total = impl_->finished;
  if (impl_->integrator) integrators::accumulate(total, impl_->integrator->stats());
  return total;
}

const std::vector<EventExecution>& EventSimulation::executions() const { return impl_->executions; }

int EventSimulation::restarts() const { return impl_->restarts; }

void EventSimulation::setEventSink(EventSink sink) { impl_->eventSink = std::move(sink); }

EventMarks eventMarks(const std::vector<EventExecution>& executions) {
  EventMarks marks;
  for (const EventExecution& e : executions) {
    if (!marks.times.empty() && marks.times.back() == e.time) {
      marks.ids.back() += ", " + e.eventId;
    } else {
      marks.times.push_back(e.time);
      marks.ids.push_back(e.eventId);
    }
  }
  return marks;
}

bool needsSimulationDriver(const symbolic::OdeSystem& system) {
  return !system.events.empty() || !system.delays.empty();
}

std::optional<std::string> delaysNotSupported(const symbolic::OdeSystem& system,
                                              const std::string& what) {
  if (system.delays.empty()) return std::nullopt;
  const symbolic::DelayDef& d = system.delays.front();
  return SbmlError(system.modelFile, d.element,
                   "unsupported SBML feature: " + symbolic::describeDelay(*system.pool, d.node) +
                       " in " + what)
      .what();
}

std::optional<std::string> eventsNotSupported(const symbolic::OdeSystem& system,
                                              const std::string& what) {
  if (system.events.empty()) return std::nullopt;
  return SbmlError(system.modelFile, system.events.front().id,
                   "unsupported SBML feature: events in " + what +
                       " (not supported yet; time courses of this model work)")
      .what();
}

}  // namespace sensode::simulation
