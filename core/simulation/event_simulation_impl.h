// SPDX-License-Identifier: MIT
// EventSimulation's state and its parts, private to core/simulation: event_simulation.cpp runs
// the loop between output times, the event queue, the restarts and the sensitivity jumps;
// event_scan.cpp scans each accepted step for trigger switches on the dense output, locates them
// and keeps the states it found at the output times.
#pragma once

#include <cstdio>
#include <deque>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/simulation/delay_history.h"
#include "core/simulation/event_simulation.h"
#include "core/simulation/sensitivity_jumps.h"
#include "core/symbolic/event_functions.h"

namespace sensode::simulation {

namespace event_detail {

// Width of a located trigger time, relative to max(|t|, step length): far below any tolerance a
// time course is compared at, and reached in a few dozen dense-output evaluations.
inline constexpr double kTimeTolerance = 1e-12;
// Executions at one time before the cascade is declared endless (an event that retriggers itself).
inline constexpr int kMaxCascade = 100000;
// Illinois iterations before plain bisection takes over (guarantees the bracket shrinks).
inline constexpr int kIllinoisIterations = 60;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::mt19937::result_type kRandomSeed = 20261125;
// Upper bound on the pieces one step is scanned in (see Impl::onStep).
inline constexpr double kMaxPiecesPerStep = 1000;
// A trigger located by bisection switched because of the root function whose zero lies within
// this (relative to max(1, |t|)) of the located time: far wider than the 1e-12 bracket, far
// narrower than any two distinct crossings an integration resolves.
inline constexpr double kSwitchWindow = 1e-8;

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

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace event_detail

// Only the driver's own two files include this header.
using namespace event_detail;
using integrators::IntegratorStats;

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
  double sampleSpacing = kInf;  // longest piece of a step scanned at once
  double tLeft = 0;             // where the trigger scan stands
  std::vector<double> gLeft;    // root functions there
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
  std::vector<double> S;   // nx × ns column-major, at the current time
  std::vector<double> s0;  // S at t0 (before events at t0)
  double tSafe = 0;        // the last time with x and S both known
  std::vector<double> xSafe, sSafe;
  std::vector<double> dTaudP;  // dτ/dp (ns) of the events being processed
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

  [[noreturn]] void fail(int e, const std::string& reason) const;

  double nextQueueTime() const;

  // ---- the event queue ----
  void schedule(int e, double t, const std::vector<double>& x);

  void cancelIfNotPersistent(int e);

  // Triggers now `now` against their last values: false → true schedules, true → false cancels
  // non-persistent pending executions.
  void handleSwitches(double t, const std::vector<double>& x, const std::vector<double>& now);

  void execute(const Pending& pe, double t, std::vector<double>& x);

  // Everything that happens at time t: triggers that switched, then the due executions one at a
  // time (highest priority first), re-evaluating every trigger after each.
  void processEvents(double t, std::vector<double>& x);

  void runDue(double t, std::vector<double>& x);

  // ---- root location on the dense output ----
  void resetScan(double t, const std::vector<double>& x);

  // x is left as it was where the triggers and root functions read no state, unless
  // withState (a stop's state): the dense output of a stiff odeSD step is an implicit sub-step,
  // and triggers on time alone (BIOMD0000000153's 21 pulses, 0000000301's) need none.
  void evaluateAt(double t, integrators::StepDenseOutput& dense, std::vector<double>& x,
                  std::vector<double>& g, std::vector<double>& tr, bool withState = false);

  // Root of g_k in (a, b] where its sign class (g > 0) changes: Illinois regula falsi, then
  // bisection; returns the right end of the final bracket (the side after the change).
  double locateRoot(int k, double a, double ga, double b, double gb,
                    integrators::StepDenseOutput& dense, double tol);

  // Where trigger e leaves its value at a, by bisection (triggers that are no relational).
  double bisectTrigger(int e, double a, double b, integrators::StepDenseOutput& dense, double tol);

  // The step is scanned in pieces no longer than the output spacing: the integrator's step size
  // follows the states, not the triggers, and a trigger such as sin(10 t) < 0 over states that
  // barely move (suite case 00936) changes sign several times inside one long step. The pieces
  // end at the output times inside the step, where the outputs will ask for the states too
  // (odeSD keeps a stiff step's dense values for them), then at the step's end.
  void onStep(double tStart, double tEnd, integrators::StepDenseOutput& dense);

  void forgetScannedOutputs();

  // The scan's states at output time T of the step just taken, if it kept them.
  bool takeScannedOutput(double T, std::vector<double>& x);

  // ---- propagated sensitivities (TrajectorySensitivities) ----
  bool propagationDone() const { return propagatedOutput >= times->size(); }

  void propagateTo(double t, integrators::StepDenseOutput& dense);

  // A step that ended without a stop: S through the output times in it (kept for run(), which
  // reports them when advanceTo returns) and to its end. Nothing once every output is passed.
  void propagateOver(double tEnd, integrators::StepDenseOutput& dense);

  // A step aborted at stopTime: the outputs before it are reported here (from the dense output),
  // then S is propagated to the stop, where it is S⁻ for the jumps.
  void propagateToStop(integrators::StepDenseOutput& dense);

  // Entries of earlier outputs: a repeated output time is reported from S as it stands.
  void dropPropagatedBefore(double t);

  // S at the output time T run() reports after advanceTo (propagated mode).
  void takePropagated(double T);

  // Trigger switches in (tLeft, right]: stops at the first switch to true (throws RootStop).
  void scan(double right, integrators::StepDenseOutput& dense);

  // Output times before the stop that lie inside the aborted step come from its dense output.
  void emitOutputsBefore(double t, integrators::StepDenseOutput& dense);

  void restart(double t, const std::vector<double>& x);

  // S is not part of the dense output: after a stop, integrate again from the last point where x
  // and S were both known, through the outputs before the stop (now with S) to the stop itself,
  // which gives S⁻; then dτ/dp for the jumps.
  void integrateAgainToStop(const ProgressMonitor& monitor);

  // ---- sensitivity jumps (sensitivity_jumps.h) ----
  std::size_t ns() const { return sensParams.size(); }

  JumpContext jumpContext() const { return {*model, events, pp(), sensParams}; }

  // dτ/dp for the events triggered at the stop, from what located it. A delayed execution
  // carries its own (Pending::executionTimeSensitivities, set in execute()); triggers that switch
  // at the same time take that of the first one due. A switch found by bisection (a logical or
  // piecewise trigger) takes the root function of the relational that switched there.
  void computeTriggerTimeDerivative(double t, const std::vector<double>& x);

  std::vector<double> valueDerivatives(int e, double t, const std::vector<double>& x);

  // The value's derivative is taken at the trigger when the event uses values from the trigger
  // time (so that an earlier execution in the cascade does not leak in), else now.
  void jumpSensitivities(const Pending& pe, double t, const std::vector<double>& xMinus,
                         const std::vector<double>& xPlus);
};

}  // namespace sensode::simulation
