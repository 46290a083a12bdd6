// SPDX-License-Identifier: MIT
// The argument checks the SUNDIALS integrators (CVODES, IDAS) make before they touch SUNDIALS,
// with one wording for both: `who` is the class ("CvodesIntegrator") the message names; and the
// advanceTo() calls that need no SUNDIALS step.
#pragma once

#include <string>
#include <vector>

#include "core/integrators/integrator.h"

namespace sensode::integrators {

// initialize(): valid options (InvalidOptions), a finite t0 (InvalidOptions), and x0 and p of
// the model's sizes (Error).
void checkInitialValues(const std::string& who, const symbolic::CompiledModel& model,
                        const IntegratorOptions& options, double t0,
                        const std::vector<double>& x0, const std::vector<double>& p);

// advanceTo(): tout finite and not before the current time t (InvalidOptions).
void checkOutputTime(const std::string& who, double tout, double t);

// advanceTo() without a step (after checkOutputTime): tout equal to the current time t gives the
// last state; a model without states only moves the clock to tout (after asking the monitor).
// True when it handled the call (x, and t, set).
bool advanceWithoutSteps(double tout, int nx, double& t, const std::vector<double>& xLast,
                         std::vector<double>& x, const ProgressMonitor& monitor);

// setStopTime(): tStop not before the current time t (InvalidOptions).
void checkStopTime(const std::string& who, double tStop, double t);

// enableSensitivities(): parameter indices in [0, np) and nx × ns initial sensitivities
// (InvalidOptions).
void checkSensitivityRequest(const std::string& who, int np, int nx,
                             const std::vector<int>& paramIndices, const std::vector<double>& s0);

// p̄_k = |p_k| (1 when p_k is 0 or not finite) for each sensitivity parameter: the scale of
// SUNDIALS's estimated sensitivity tolerances (rtol and atol/p̄_k), so that S_k·p̄_k is controlled
// like the states.
std::vector<double> sensitivityScales(const std::vector<double>& p,
                                      const std::vector<int>& paramIndices);

}  // namespace sensode::integrators
