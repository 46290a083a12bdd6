// SPDX-License-Identifier: MIT
// Steady states of models with events (issue 15). A steady state of such a model is a state the
// ODE rests in *and* that no event will change again. COPASI's steady-state task ignores events
// and libRoadRunner refuses models with events by default; Sensode does what a modeller who
// plots the time course expects:
//
//  1. Simulate from x₀ with the events (core/simulation) to t = 10, 100, 1000, ... (up to
//     SteadyStateOptions::maxSimulationTime), with forward sensitivities when they are wanted.
//  2. After the first decade (t_{k−1}, t_k] in which no event executed, with every trigger the
//     same at both ends of it and every time event (t ⋚ c) in the past, solve for the steady
//     state from x(t_k) (Newton, the simulation fallback: steady_state_solver.h); the
//     conservation totals and their sensitivities come from x(t_k) and S(t_k), which carry the
//     events' changes (a dose changes a total).
//  3. Accept x* only when every trigger has the same value at x* as at x(t_k), now and after
//     the last time event: no event can fire on the way there or afterwards. Otherwise simulate
//     the next decade.
//
// When events still execute in the last decade (a periodic stimulus, a reset that keeps
// firing) or a trigger would switch at x*, there is no steady state: the reason names the
// event, when it fired last and how often it fired in that decade.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/steadystate/steady_state_solver.h"

namespace sensode::tasks::detail {

// The steady state of a model with events (steps above). solution.path starts with what the
// simulation across the events did ("simulation with events to t = 100 (1 execution: dose at
// t = 5), then ...").
steadystate::SteadyStateSolution solveSteadyStateAcrossEvents(
    const steadystate::ConservedModel& model, const std::vector<double>& theta,
    const steadystate::SteadyStateOptions& options, const ProgressMonitor& monitor);

}  // namespace sensode::tasks::detail
