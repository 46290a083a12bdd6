// SPDX-License-Identifier: MIT
// The simulated observables of a PEtab problem on a fine time grid, for plotting against the
// measurements: one curve per (pre-equilibration condition, simulation condition, observable,
// observableParameters) group. Measurements of one observable with different scale or offset
// parameters (two gels, two antibodies) are different functions of the state; joining their
// values at the measurement times into one line draws a sawtooth that looks like an
// oscillation, and straight segments between sparse times hide the dynamics in between.
//
// The curves come from the objective itself (evaluateObjective with no gradient), run on a copy
// of the problem whose measurement table holds, per group, the grid times with the group's
// observable and noise parameters: the same pre-equilibration, condition overrides, events and
// observable formulas as the objective, so a curve passes exactly through the simulated values
// the objective used at the measurement times (the grid includes them). Noise parameters do not
// change the simulated observable, so groups differing only in them share one curve.
// Steady-state measurements (t = inf) have no curve.
#pragma once

#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"

namespace sensode::petab {

struct ObservableCurve {
  int observable = -1;
  int simulationCondition = -1;
  int preequilibrationCondition = -1;  // -1: none
  // The group's observable parameters as the measurement table gives them (numbers or ids);
  // "" when the observable has none. One text, parameters joined by ';' (PEtab's own syntax).
  std::string observableParameters;
  std::vector<double> times, values;  // ascending times from 0 to the experiment's last time
};

// `gridPoints` equally spaced times from 0 to the last finite measurement time of the
// experiment (plus every measurement time of the group). Throws what evaluateObjective throws.
std::vector<ObservableCurve> observableCurves(const Problem& problem,
                                              const std::vector<double>& scaled,
                                              const ObjectiveOptions& options = {},
                                              int gridPoints = 301,
                                              const ProgressMonitor& monitor = {});

// The text of a measurement's observable parameters (as ObservableCurve::observableParameters).
std::string observableParametersText(const Measurement& m);

}  // namespace sensode::petab
