// SPDX-License-Identifier: MIT
// The simulation driver for models with events: integrates between discontinuities with any
// Integrator (through its interface only), finds where triggers switch on the integrator's dense
// output, runs the SBML event queue (delays, priorities, persistence, cascades at one time) and
// restarts the integrator after every change of state (for odeSD its start procedure).
//
// Root location: after each accepted step [t0, t1] the driver evaluates the triggers and their
// root functions (EventFunctions) at t1. A root function that changed sign is located by the
// Illinois variant of regula falsi on the dense output; a trigger that switched without any root
// function changing sign (a trigger that is not a relational) is located by bisection on its
// value; times of time events (t ⋚ c(p)) and of delayed executions are taken exactly. Both
// brackets end on the side where the trigger has switched, 1e-12 × max(|t|, piece) wide. Steps
// are scanned in pieces no longer than the smallest output spacing (the step size follows the
// states, not the triggers), ending at the output times inside the step and going no further
// than the last one; the states the scan finds at output times are the ones reported there, and
// where no trigger and no root function reads the states the scan evaluates none (on a stiff
// odeSD step each dense value is an implicit sub-step). A switch to true stops the integration
// there: the callback throws a private exception out of advanceTo(), outputs inside the aborted
// step come from its dense output, and the integrator is initialized again after the events
// (odeSD: its start procedure). The scan is event_scan.cpp; the rest event_simulation.cpp.
//
// Delay differential equations (delay() in rates, rules and outputs): the method of steps. The
// driver keeps the solution's history from every accepted step's dense output (DelayHistory),
// attaches it to the model for the length of run(), caps the step size at the smallest constant
// delay and restarts the integrator at the propagated discontinuities t0 + k·τ.
//
// Semantics (SBML L3V2 §4.12, as the Test Suite checks them): a trigger fires when it goes from
// false to true (its value before t0 is initialValue); an execution is due at the trigger time
// plus the delay (evaluated at the trigger time); due executions at one time run one at a time,
// highest priority first (priorities evaluated when choosing; an event without priority ranks
// below all with one), ties chosen at random with a fixed seed (the suite's
// RandomEventExecution cases need an even choice, not file order); after every execution all
// triggers are evaluated again, so events triggered by an assignment fire at the same time and
// a non-persistent event whose trigger turned false is cancelled. Assignment values come from the
// trigger time when useValuesFromTriggerTime, else from the execution time.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::simulation {

// Sensitivities propagated along the state trajectory by a method outside the integrator (PBSR,
// Exp: sensitivity/peano_baker.h). The driver feeds it the integrator's accepted steps and
// restarts it after every event with the jumped S, so that it only ever sees a smooth trajectory.
class TrajectorySensitivities {
 public:
  using StateSource = std::function<void(double t, std::vector<double>& x)>;
  virtual ~TrajectorySensitivities() = default;
  // Starts (again) at (t, x) with S (column-major nx × ns).
  virtual void restart(double t, const std::vector<double>& x, const std::vector<double>& s) = 0;
  // Propagates S to t1 (>= the current time); states in (current, t1] from `states`, increasing.
  virtual void advance(double t1, const StateSource& states) = 0;
  virtual void sensitivities(std::vector<double>& s) = 0;
};

// One execution of an event, for logs and plots.
struct EventExecution {
  double time;
  std::string eventId;
};

// Executions grouped for plots: each time at which events executed once, with the ids executed
// there in order ("dose" or "reset, dose").
struct EventMarks {
  std::vector<double> times;
  std::vector<std::string> ids;
};
EventMarks eventMarks(const std::vector<EventExecution>& executions);

class EventSimulation {
 public:
  EventSimulation(std::shared_ptr<const symbolic::CompiledModel> model, integrators::Method method,
                  const integrators::IntegratorOptions& options);
  ~EventSimulation();

  // Forward sensitivities S = ∂x/∂p for the parameters `paramIndices` from s0 (column-major
  // nx × ns), through the integrator's own (CVODES forward, odeSD direct), with the jumps at
  // events of issue 15: with h the trigger's root function (t − c for a time event),
  // dτ/dp = −(∂h/∂x·S⁻ + ∂h/∂p) / (∂h/∂x·f⁻ + ∂h/∂t) and, per execution x⁺ = g(x⁻, p),
  // S⁺ = ∂g/∂x·S⁻ + ∂g/∂p + (∂g/∂x·f⁻ + ∂g/∂t − f⁺)·dτ/dp (cascades at one time apply it in
  // turn; ∂g/∂t for assignments that use the time). A delayed execution at τ_e = τ + d jumps
  // with dτ_e/dp = dτ/dp + dd/dp (d's total derivative at the trigger, whose dτ/dp it carries);
  // values from the trigger time are differentiated there. A logical or piecewise trigger found
  // by bisection takes h from the relational that switched (the root function with a zero at
  // the located time). A trigger switched by a discontinuous function alone, and events that
  // resize a compartment of concentration states, throw Error. Call before run().
  void enableSensitivities(const std::vector<int>& paramIndices, const std::vector<double>& s0,
                           bool errorControl);
  // The same jumps with S propagated along the trajectory by `propagator` (PBSR, Exp) instead of
  // by the integrator: on each interval between events it advances over the step ends and the
  // output times with states from the step's dense output, up to the located event time (S⁻);
  // the driver jumps S and restarts it there. `propagator` must outlive run(). Call before run().
  void enablePropagatedSensitivities(const std::vector<int>& paramIndices,
                                     const std::vector<double>& s0,
                                     TrajectorySensitivities& propagator);
  // S at the time of the output being reported (valid inside the OutputSink).
  const std::vector<double>& sensitivities() const;

  // State at an output time, after the events at that time.
  using OutputSink = std::function<void(double t, const double* x)>;
  // Integrates from (t0, x0) with parameters p through `times` (ascending, all >= t0), calling
  // `output` once per time. Events at t0 (triggers true at t0 whose initialValue is false) run
  // before the output at t0. Throws IntegrationFailure, Cancelled, or Error for a model whose
  // events cannot be run (a negative or non-finite delay, a cascade that never ends).
  void run(double t0, std::vector<double> x0, const std::vector<double>& p,
           const std::vector<double>& times, const OutputSink& output,
           const ProgressMonitor& monitor = {});

  // Called once per time at which events changed the state (after the outputs before it and
  // before an output at that time), with the state before and after all executions there.
  using EventSink = std::function<void(double t, const double* before, const double* after)>;
  void setEventSink(EventSink sink);

  // Integrator statistics summed over every restart.
  integrators::IntegratorStats stats() const;
  const std::vector<EventExecution>& executions() const;
  int restarts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when a time course of `system` must run through EventSimulation: it has events, or
// delay() terms (the driver keeps the history, delay_history.h).
bool needsSimulationDriver(const symbolic::OdeSystem& system);

// The message refusing `what` for a model with delay() terms (naming file, element and the first
// delay), or nullopt when it has none.
std::optional<std::string> delaysNotSupported(const symbolic::OdeSystem& system,
                                              const std::string& what);

// For computations that do not handle events yet (sensitivities, steady states, PEtab objectives):
// the message refusing `what` for a model with events, naming the file and the first event, or
// nullopt when the model has none. Never a silent number that ignores the events.
std::optional<std::string> eventsNotSupported(const symbolic::OdeSystem& system,
                                              const std::string& what);

}  // namespace sensode::simulation
