// SPDX-License-Identifier: MIT
#include "core/simulation/event_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <deque>
#include <random>

#include "core/common/errors.h"
#include "core/simulation/delay_history.h"
#include "core/simulation/sensitivity_jumps.h"
#include "core/symbolic/event_functions.h"

namespace sensode::simulation {

using integrators::IntegratorStats;

namespace {

// Width of a located trigger time, relative to max(|t|, step length): far below any tolerance a
// time course is compared at, and reached in a few dozen dense-output evaluations.
constexpr double kTimeTolerance = 1e-12;
// Executions at one time before the cascade is declared endless (an event that retriggers itself).
constexpr int kMaxCascade = 100000;
// Illinois iterations before plain bisection takes over (guarantees the bracket shrinks).
constexpr int kIllinoisIterations = 60;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::mt19937::result_type kRandomSeed = 20261125;
// Upper bound on the pieces one step is scanned in (see Impl::onStep).
constexpr double kMaxPiecesPerStep = 1000;
// A trigger located by bisection switched because of the root function whose zero lies within
// this (relative to max(1, |t|)) of the located time: far wider than the 1e-12 bracket, far
// narrower than any two distinct crossings an integration resolves.
constexpr double kSwitchWindow = 1e-8;

// Thrown by the step callback out of advanceTo(): a trigger switched to true (or a delayed
// execution is due) at Impl::stopTime. Private to the driver; the integrator is initialized again.
struct RootStop {};

// One scheduled execution of an event.
struct Pending {
  int event;
  double time;
  double triggerTime;
  std::vector<double> values;  // set when the event uses values from the trigger time
  bool hasValues = false;
  // With sensitivities and values from the trigger time: the total derivatives of those values,
  // d(value_i)/dp_j at the trigger (assignments × ns, row-major).
  std::vector<double> valueSensitivities;
  // With sensitivities: dτ_e/dp of the execution time (the trigger's dτ/dp plus dd/dp).
  std::vector<double> executionTimeSensitivities;
};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace

struct EventSimulation::Impl {
  Impl(std::shared_ptr<const symbolic::CompiledModel> m, integrators::Method meth,
       const integrators::IntegratorOptions& o)
      : model(std::move(m)), method(meth), options(o), events(model->system()) {
    if (model->hasDelays()) history = std::make_unique<DelayHistory>(model->system());
  }

  std::shared_ptr<const symbolic::CompiledModel> model;
  integrators::Method method;
  integrators::IntegratorOptions options;
  symbolic::EventFunctions events;
  std::unique_ptr<integrators::Integrator> integrator;
  IntegratorStats finished;  // summed over the integrations before the current one
  std::vector<EventExecution> executions;
  int restarts = 0;
  std::mt19937 random{kRandomSeed};  // tie-breaking among equal priorities
  // Delay differential equations (method of steps): the solution's history, attached to the
  // model for the length of a run, and the propagated discontinuities the integration stops at.
  std::unique_ptr<DelayHistory> history;
  std::vector<double> breakpoints;
  std::size_t nextBreakpoint = 0;

  // ---- one run ----
  const std::vector<double>* p = nullptr;
  const std::vector<double>* times = nullptr;
  const OutputSink* output = nullptr;
  EventSink eventSink;
  std::size_t nextOutput = 0;
  std::vector<Pending> queue;
  std::vector<double> triggerState;  // the value each trigger had when last looked at (0/1)
  std::vector<double> timeRootValues;
  double sampleSpacing = kInf;       // longest piece of a step scanned at once
  double tLeft = 0;                  // where the trigger scan stands
  std::vector<double> gLeft;         // root functions there
  double stopTime = 0;
  std::vector<double> stopState;
  // What located the stop: a root function, a time event, a delayed execution, or bisection on
  // a trigger's value. The sensitivity jump needs dτ/dp from the first two.
  struct Cause {
    enum Kind { Root, TimeRoot, Delayed, Bisected } kind = Bisected;
    int index = 0;
  };
  Cause stopCause;
  bool scanning = true;

  // ---- forward sensitivities (enableSensitivities) ----
  bool sensEnabled = false;  // enableSensitivities was called
  bool sens = false;         // S is carried in this run (off after the last output, propagated)
  std::vector<int> sensParams;
  bool errorControl = true;
  std::vector<double> S;                  // nx × ns column-major, at the current time
  std::vector<double> s0;                 // S at t0 (before events at t0)
  double tSafe = 0;                       // the last time with x and S both known
  std::vector<double> xSafe, sSafe;
  std::vector<double> dTaudP;             // dτ/dp (ns) of the events being processed
  // Propagated mode (enablePropagatedSensitivities): S follows the integrator's steps.
  TrajectorySensitivities* propagator = nullptr;
  std::size_t propagatedOutput = 0;  // the next output time the propagator has not passed
  // (t, x, S) at the output times the propagator has passed but run() has not reported yet.
  struct Propagated {
    double t;
    std::vector<double> x, s;
  };
  std::deque<Propagated> propagated;
  std::vector<double> xs, gs, trig, xR, gR, trigR;  // scratch
  std::vector<int> switchedScratch;
  // The states the scan found at the output times inside the last step (scannedTimes[i] with
  // nx values from scannedStates[i·nx]): run() reports them instead of asking the integrator
  // again, which on a stiff odeSD step would solve the same implicit sub-step a second time.
  // Only without sensitivities and delays, and for the step just scanned.
  std::vector<double> scannedTimes, scannedStates;
  std::size_t scannedNext = 0;
  static constexpr std::size_t kMaxScannedValues = std::size_t{1} << 19;  // 4 MB

  const double* pp() const { return p->data(); }
  int ne() const { return events.numEvents(); }

  [[noreturn]] void fail(int e, const std::string& reason) const {
    throw SbmlError(model->system().modelFile, events.event(e).id, reason);
  }

  double nextQueueTime() const {
    double t = kInf;
    for (const Pending& q : queue) t = std::min(t, q.time);
    return t;
  }

  // ---- the event queue ----
  void schedule(int e, double t, const std::vector<double>& x) {
    const double d = events.hasDelay(e) ? events.delay(e, t, x.data(), pp()) : 0.0;
    if (!std::isfinite(d) || d < 0)
      fail(e, "event delay is " + num(d) + " at t = " + num(t) + " (it must be finite and >= 0)");
    Pending pe{e, t + d, t, {}, false, {}, {}};
    if (sens) pe.executionTimeSensitivities =
                  delayedExecutionTimeDerivative(jumpContext(), e, t, x, S, dTaudP);
    if (events.event(e).useValuesFromTriggerTime) {
      pe.values.resize(events.event(e).assignments.size());
      events.assignmentValues(e, t, x.data(), pp(), pe.values.data());
      pe.hasValues = true;
      if (sens) pe.valueSensitivities = valueDerivatives(e, t, x);
    }
    queue.push_back(std::move(pe));
  }

  void cancelIfNotPersistent(int e) {
    if (events.event(e).persistent) return;
    std::erase_if(queue, [e](const Pending& q) { return q.event == e; });
  }

  // Triggers now `now` against their last values: false → true schedules, true → false cancels
  // non-persistent pending executions.
  void handleSwitches(double t, const std::vector<double>& x, const std::vector<double>& now) {
    for (int e = 0; e < ne(); ++e) {
      const auto i = static_cast<std::size_t>(e);
      if (triggerState[i] == 0 && now[i] != 0) schedule(e, t, x);
      if (triggerState[i] != 0 && now[i] == 0) cancelIfNotPersistent(e);
      triggerState[i] = now[i];
    }
  }

  void execute(const Pending& pe, double t, std::vector<double>& x) {
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

  // Everything that happens at time t: triggers that switched, then the due executions one at a
  // time (highest priority first), re-evaluating every trigger after each.
  void processEvents(double t, std::vector<double>& x) {
    const std::vector<double> before = x;
    const std::size_t executed = executions.size();
    runDue(t, x);
    if (eventSink && executions.size() > executed) eventSink(t, before.data(), x.data());
  }

  void runDue(double t, std::vector<double>& x) {
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

  // ---- root location on the dense output ----
  void resetScan(double t, const std::vector<double>& x) {
    tLeft = t;
    gLeft.resize(static_cast<std::size_t>(events.numRoots()));
    events.roots(t, x.data(), pp(), gLeft.data());
  }

  // x is left as it was where the triggers and root functions read no state, unless
  // withState (a stop's state): the dense output of a stiff odeSD step is an implicit sub-step,
  // and triggers on time alone (BIOMD0000000153's 21 pulses, 0000000301's) need none.
  void evaluateAt(double t, integrators::StepDenseOutput& dense, std::vector<double>& x,
                  std::vector<double>& g, std::vector<double>& tr, bool withState = false) {
    if (withState || events.readsStates()) dense.state(t, x.data());
    events.roots(t, x.data(), pp(), g.data());
    events.triggers(t, x.data(), pp(), tr.data());
  }

  // Root of g_k in (a, b] where its sign class (g > 0) changes: Illinois regula falsi, then
  // bisection; returns the right end of the final bracket (the side after the change).
  double locateRoot(int k, double a, double ga, double b, double gb,
                    integrators::StepDenseOutput& dense, double tol) {
    const auto ki = static_cast<std::size_t>(k);
    const bool leftClass = ga > 0;
    int side = 0;
    for (int it = 0; b - a > tol && it < kIllinoisIterations + 200; ++it) {
      double m = it < kIllinoisIterations ? b - gb * (b - a) / (gb - ga) : 0.5 * (a + b);
      // g_k = 0 at b (a time, a threshold hit exactly): the secant stays at b; one value a
      // tolerance before b decides, where halving took a dozen (BIOMD0000000144).
      if (gb == 0 && b - tol > a) m = b - tol;
      if (!(m > a && m < b)) m = 0.5 * (a + b);
      evaluateAt(m, dense, xs, gs, trig);
      const double gm = gs[ki];
      if ((gm > 0) == leftClass) {
        a = m;
        ga = gm;
        if (side == -1) gb *= 0.5;
        side = -1;
      } else {
        b = m;
        gb = gm;
        if (side == +1) ga *= 0.5;
        side = +1;
      }
    }
    return b;
  }

  // Where trigger e leaves its value at a, by bisection (triggers that are no relational).
  double bisectTrigger(int e, double a, double b, integrators::StepDenseOutput& dense, double tol) {
    const double before = triggerState[static_cast<std::size_t>(e)];
    while (b - a > tol) {
      const double m = 0.5 * (a + b);
      if (!(m > a && m < b)) break;
      evaluateAt(m, dense, xs, gs, trig);
      (trig[static_cast<std::size_t>(e)] == before ? a : b) = m;
    }
    return b;
  }

  // The step is scanned in pieces no longer than the output spacing: the integrator's step size
  // follows the states, not the triggers, and a trigger such as sin(10 t) < 0 over states that
  // barely move (suite case 00936) changes sign several times inside one long step. The pieces
  // end at the output times inside the step, where the outputs will ask for the states too
  // (odeSD keeps a stiff step's dense values for them), then at the step's end.
  void onStep(double tStart, double tEnd, integrators::StepDenseOutput& dense) {
    if (history) history->addStep(tStart, tEnd, dense);
    forgetScannedOutputs();
    if (!scanning) return;
    double left = tLeft = std::max(tLeft, tStart);
    // The scan reads the states wherever a trigger or root function does; then its values at the
    // output times are the outputs' own (the same dense output at the same time).
    const bool keep = events.readsStates() && !sens && !propagator && !history;
    auto scanTo = [&](double right, bool isOutput) {
      // (1e-9: a gap of one spacing, 0.3 − 0.2 = 0.09999999999999998 / 0.1, is one piece)
      const double pieces =
          std::clamp(std::ceil((right - left) / sampleSpacing - 1e-9), 1.0, kMaxPiecesPerStep);
      for (double i = 1; i <= pieces; ++i)
        scan(i == pieces ? right : left + (right - left) * (i / pieces), dense);
      left = right;
      if (keep && isOutput && scannedStates.size() + xR.size() <= kMaxScannedValues) {
        scannedTimes.push_back(right);
        scannedStates.insert(scannedStates.end(), xR.begin(), xR.end());
      }
    };
    // Nothing after the last output time is reported: a step that ends beyond it (a stiff run's
    // last step can be ten output spacings long) is scanned up to it.
    const double end = times->empty() ? tEnd : std::min(tEnd, times->back());
    try {
      for (std::size_t k = nextOutput; k < times->size() && (*times)[k] <= end; ++k)
        if ((*times)[k] > left) scanTo((*times)[k], true);
      if (end > left) scanTo(end, false);
    } catch (const RootStop&) {
      forgetScannedOutputs();  // run() reports the outputs before the stop (emitOutputsBefore)
      if (propagator) propagateToStop(dense);
      throw;
    }
    tLeft = tEnd;
    if (propagator) propagateOver(tEnd, dense);
  }

  void forgetScannedOutputs() {
    scannedTimes.clear();
    scannedStates.clear();
    scannedNext = 0;
  }

  // The scan's states at output time T of the step just taken, if it kept them.
  bool takeScannedOutput(double T, std::vector<double>& x) {
    while (scannedNext < scannedTimes.size() && scannedTimes[scannedNext] < T) ++scannedNext;
    if (scannedNext == scannedTimes.size() || scannedTimes[scannedNext] != T) return false;
    const auto nx = x.size();
    const auto from = scannedStates.begin() + static_cast<long>(scannedNext * nx);
    std::copy(from, from + static_cast<long>(nx), x.begin());
    return true;
  }

  // ---- propagated sensitivities (TrajectorySensitivities) ----
  bool propagationDone() const { return propagatedOutput >= times->size(); }

  void propagateTo(double t, integrators::StepDenseOutput& dense) {
    const auto nx = static_cast<std::size_t>(model->nx());
    propagator->advance(t, [&dense, nx](double tq, std::vector<double>& x) {
      x.resize(nx);
      dense.state(tq, x.data());
    });
  }

  // A step that ended without a stop: S through the output times in it (kept for run(), which
  // reports them when advanceTo returns) and to its end. Nothing once every output is passed.
  void propagateOver(double tEnd, integrators::StepDenseOutput& dense) {
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

  // A step aborted at stopTime: the outputs before it are reported here (from the dense output),
  // then S is propagated to the stop, where it is S⁻ for the jumps.
  void propagateToStop(integrators::StepDenseOutput& dense) {
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

  // Entries of earlier outputs: a repeated output time is reported from S as it stands.
  void dropPropagatedBefore(double t) {
    while (!propagated.empty() && propagated.front().t < t) propagated.pop_front();
  }

  // S at the output time T run() reports after advanceTo (propagated mode).
  void takePropagated(double T) {
    if (propagated.empty() && model->nx() == 0) return;  // no states: no steps, S is empty
    dropPropagatedBefore(T);
    if (propagated.empty() || propagated.front().t != T)
      throw Error("sensitivities across events: no propagated sensitivities for the output at "
                  "t = " + num(T) + " (internal error)");
    S = std::move(propagated.front().s);
    propagated.pop_front();
  }

  // Trigger switches in (tLeft, right]: stops at the first switch to true (throws RootStop).
  void scan(double right, integrators::StepDenseOutput& dense) {
    double left = tLeft;
    const std::size_t nr = gLeft.size();
    Cause passedRoot{};  // the last candidate passed without a stop in this piece
    double passedRootTime = -kInf;
    for (;;) {
      evaluateAt(right, dense, xR, gR, trigR);
      const double tol =
          std::max(kTimeTolerance * std::max(std::abs(right), right - left), 1e-300);
      double candidate = kInf;
      Cause cause{};
      auto consider = [&](double t, Cause c) {
        if (t < candidate) candidate = t, cause = c;
      };
      for (std::size_t k = 0; k < nr; ++k)
        if ((gLeft[k] > 0) != (gR[k] > 0))
          consider(locateRoot(static_cast<int>(k), left, gLeft[k], right, gR[k], dense, tol),
                   {Cause::Root, static_cast<int>(k)});
      for (std::size_t j = 0; j < timeRootValues.size(); ++j)
        if (timeRootValues[j] > left && timeRootValues[j] <= right)
          consider(timeRootValues[j], {Cause::TimeRoot, static_cast<int>(j)});
      const double due = nextQueueTime();
      if (due > left && due <= right) consider(due, {Cause::Delayed, 0});
      // A trigger that has switched by the candidate (or by the end) without a root function
      // changing sign there (t > c just after c; a non-relational trigger) switched earlier:
      // bisect on its value.
      // The values at `right` are at hand: each evaluation of odeSD's dense output on a stiff
      // step is an implicit sub-step (BIOMD0000000149: 313 of them for 101 outputs, a third
      // of them repeats of the one just made).
      const double check = candidate == kInf ? right : candidate;
      if (check == right) {
        xs = xR, gs = gR, trig = trigR;
      } else {
        evaluateAt(check, dense, xs, gs, trig);
      }
      double earliest = kInf;
      bool bisected = false;  // bisectTrigger leaves xs, gs, trig at its last midpoint
      std::vector<int>& switched = switchedScratch;
      switched.clear();
      for (int e = 0; e < ne(); ++e)
        if (trig[static_cast<std::size_t>(e)] != triggerState[static_cast<std::size_t>(e)])
          switched.push_back(e);
      // A trigger that switched at the located root, as its relational's does, has not switched
      // a tolerance before it: one value there instead of bisecting [left, check] again (30–50
      // sub-steps per event on BIOMD0000000144). A bisection would only matter if it ended
      // before check − tol.
      if (!switched.empty() && candidate != kInf && check - tol > left) {
        evaluateAt(check - tol, dense, xs, gs, trig);
        bisected = true;
        std::erase_if(switched, [&](int e) {
          return trig[static_cast<std::size_t>(e)] == triggerState[static_cast<std::size_t>(e)];
        });
      }
      for (int e : switched) {
        earliest = std::min(earliest, bisectTrigger(e, left, check, dense, tol));
        bisected = true;
      }
      if (earliest < check - tol || candidate == kInf) consider(earliest, {Cause::Bisected, 0});
      if (candidate == kInf) break;

      if (bisected || candidate != check || !events.readsStates())
        evaluateAt(candidate, dense, xs, gs, trig, true);
      bool stop = candidate == due;
      for (std::size_t e = 0; e < static_cast<std::size_t>(ne()); ++e)
        stop = stop || (triggerState[e] == 0 && trig[e] != 0);
      if (stop) {
        stopTime = candidate;
        stopState = xs;
        stopCause = cause;
        // A switch found by bisection just after a root function's sign change or a time event's
        // time (t > c switches just after c) has that root as its trigger function.
        // (A root located where g = 0 exactly leaves a strict trigger still false there; it
        // switches one bisection later.)
        if (cause.kind == Cause::Bisected) {
          if (passedRoot.kind == Cause::Root && candidate - passedRootTime <= 4 * tol)
            stopCause = passedRoot;
          for (std::size_t k = 0; k < nr && stopCause.kind == Cause::Bisected; ++k)
            if ((gLeft[k] > 0) != (gs[k] > 0)) stopCause = {Cause::Root, static_cast<int>(k)};
          for (std::size_t j = 0; j < timeRootValues.size() && stopCause.kind == Cause::Bisected;
               ++j)
            if (timeRootValues[j] >= left && timeRootValues[j] <= candidate)
              stopCause = {Cause::TimeRoot, static_cast<int>(j)};
        }
        // With sensitivities the outputs before the stop are integrated again (S is not part of
        // the dense output); see EventSimulation::run.
        if (!sens) emitOutputsBefore(candidate, dense);
        throw RootStop{};
      }
      // Only switches to false here: they cancel, and need no restart.
      for (int e = 0; e < ne(); ++e) {
        const auto i = static_cast<std::size_t>(e);
        if (triggerState[i] != 0 && trig[i] == 0) cancelIfNotPersistent(e);
        triggerState[i] = trig[i];
      }
      left = candidate;
      tLeft = candidate;
      gLeft = gs;
      passedRoot = cause;
      passedRootTime = candidate;
    }
    tLeft = right;
    gLeft = gR;
  }

  // Output times before the stop that lie inside the aborted step come from its dense output.
  void emitOutputsBefore(double t, integrators::StepDenseOutput& dense) {
    std::vector<double> x(xs.size());
    while (nextOutput < times->size() && (*times)[nextOutput] < t) {
      dense.state((*times)[nextOutput], x.data());
      (*output)((*times)[nextOutput], x.data());
      ++nextOutput;
    }
  }

  void restart(double t, const std::vector<double>& x) {
    forgetScannedOutputs();
    if (integrator) integrators::accumulate(finished, integrator->stats());
    else {
      integrator = integrators::makeIntegrator(method);
      integrator->setStepCallback([this](double a, double b, integrators::StepDenseOutput& d) {
        onStep(a, b, d);
      });
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

  // S is not part of the dense output: after a stop, integrate again from the last point where x
  // and S were both known, through the outputs before the stop (now with S) to the stop itself,
  // which gives S⁻; then dτ/dp for the jumps.
  void integrateAgainToStop(const ProgressMonitor& monitor) {
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

  // ---- sensitivity jumps (sensitivity_jumps.h) ----
  std::size_t ns() const { return sensParams.size(); }

  JumpContext jumpContext() const { return {*model, events, pp(), sensParams}; }

  // dτ/dp for the events triggered at the stop, from what located it. A delayed execution
  // carries its own (Pending::executionTimeSensitivities, set in execute()); triggers that switch
  // at the same time take that of the first one due. A switch found by bisection (a logical or
  // piecewise trigger) takes the root function of the relational that switched there.
  void computeTriggerTimeDerivative(double t, const std::vector<double>& x) {
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
      if (root >= 0) stopCause = {Cause::Root, root};
      else if (timeRoot >= 0) stopCause = {Cause::TimeRoot, timeRoot};
    }
    switch (stopCause.kind) {
      case Cause::TimeRoot: dTaudP = timeEventDerivative(jumpContext(), stopCause.index); return;
      case Cause::Root:
        dTaudP = rootTimeDerivative(jumpContext(), stopCause.index, t, x, S);
        return;
      case Cause::Delayed:
      case Cause::Bisected: break;
    }
    throw Error("sensitivities across events: a trigger switched at t = " + num(t) +
                " where none of its relationals changes sign (a discontinuous function inside "
                "the trigger): the event time's derivative dτ/dp is undefined");
  }

  std::vector<double> valueDerivatives(int e, double t, const std::vector<double>& x) {
    return assignmentValueDerivatives(jumpContext(), e, t, x, S, dTaudP);
  }

  // The value's derivative is taken at the trigger when the event uses values from the trigger
  // time (so that an earlier execution in the cascade does not leak in), else now.
  void jumpSensitivities(const Pending& pe, double t, const std::vector<double>& xMinus,
                         const std::vector<double>& xPlus) {
    if (!events.event(pe.event).rescaled.empty())
      fail(pe.event, "sensitivities across an event that resizes a compartment holding species "
                     "in concentration are not supported yet");
    const std::vector<double> dValue = pe.valueSensitivities.empty()
                                           ? valueDerivatives(pe.event, t, xMinus)
                                           : pe.valueSensitivities;
    simulation::jumpSensitivities(jumpContext(), pe.event, t, xMinus, xPlus, dValue, dTaudP, S);
  }
};

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
    if (times[i] > times[i - 1]) d.sampleSpacing = std::min(d.sampleSpacing, times[i] - times[i - 1]);
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
    const bool toBreakpoint = d.nextBreakpoint < d.breakpoints.size() &&
                              d.breakpoints[d.nextBreakpoint] < T &&
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
      if (d.propagator) d.takePropagated(T);
      else if (d.sens) d.integrator->sensitivities(d.S);
      t = T;
      output(T, x.data());
      ++d.nextOutput;
      markSafe();
    } catch (const RootStop&) {
      if (d.propagator) {
        // Nothing is reported after the last output: no S to carry across these events.
        if (d.propagationDone() && d.nextOutput >= times.size()) d.sens = false;
        else d.computeTriggerTimeDerivative(d.stopTime, d.stopState);
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

const std::vector<EventExecution>& EventSimulation::executions() const {
  return impl_->executions;
}

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
