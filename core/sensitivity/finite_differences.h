// SPDX-License-Identifier: MIT
// Finite differences of the whole simulation pipeline (initial assignments, integration,
// outputs): the independent check of the analytic sensitivity methods (the `fd` method of the
// sensitivities task), 3 or 4 extra simulations per parameter and step candidate.
//
// The step. δ_k = relativeStep·scale_k. The relative step 1e-4 is what the measurements recorded
// on SensitivityOptions::fdRelativeStep found best at fdRtol 1e-12: smaller steps drown in
// integration noise (~(10…100)·rtol·|y|, amplified by 1/δ), larger ones in truncation. The scale
// is the parameter's own size |p_k| — except that a parameter setting initial values
// (∂x0/∂p_k ≠ 0: species initial amounts and concentrations, compartment sizes, anything an
// initial assignment reads) may be far below the sizes it influences: Brannmark's IRp starts at
// 1.8e-9 while IRS is ~10, so δ = 1e-4·1.8e-9 moved IRS by less than its integration noise and
// the difference gave +9.73 for a sensitivity of −1.52. Where p_k ≠ 0 and the size its states
// reach (max_t |x_i(t)| / |∂x0_i/∂p_k|) or the size the model's states reach exceeds 10·|p_k|,
// the step is the best of several (a ladder from that size down by factors of 10, then |p_k|): the
// one with the smallest error estimate, the relative difference between D(δ) and D(δ/2),
// size-weighted over every state and output, which is large both when noise drowns the
// difference and when the response is visibly nonlinear over the step.
//
// The formula. Central differences where p ± δ keeps the sign of p, extrapolated (Richardson)
// wherever D(δ) and D(δ/2) differ by more than their integration noise (elsewhere the larger
// step's D(δ) is kept: extrapolating noise amplifies it):
// D(δ) = (y(p+δ) − y(p−δ))/(2δ) has error c₂δ² + c₄δ⁴ + …, so (4·D(δ/2) − D(δ))/3 cancels the δ²
// term — the one that left 3e-5 on the repressilator and 2e-2 on Borghans' oscillator at δ =
// 1e-4, where S grows secularly and S''' with it. Where δ > |p|/2 (a scale larger than p, or
// p = 0), the one-sided second-order F(h) = (4y(p+h) − y(p+2h) − 3y(p))/(2h), h = ±δ with the
// sign of p (+ for 0), so that no run sees a negative rate, amount or size (central
// differences blew up on Bachmann), extrapolated as (4F(h/2) − F(h))/3. For p = 0, δ starts at
// relativeStep and is adapted (≤ 4 times): grown while the response drowns in integration noise,
// shrunk while some state's response is visibly nonlinear relative to its own first difference;
// extrapolated like the others. The states such a step leaves in the noise (Raia's il13_level:
// IL13_Rec saturates beyond 4e-7, Rec is 1.4) take their values from wider steps, value by value
// (second pass below). Steps are rounded down to powers
// of two, so that the perturbed values are exact and a linear response comes out exact.
//
// Responses lost in noise. Where step and half step disagree by more than 1e-3 (size-weighted),
// or, in a second pass, by more than 1e-5 of some quantity's largest sensitivity over all
// parameters, 1000-fold larger scales are tried (Okuonghae's theta = 1.9e-12 moves total_pop
// ~1e8 by 322 per unit: δ = 1e-4·|p| is far below its noise); one is taken only where it agrees
// with the smaller step within that step's uncertainty, so that a saturated or nonlinear
// response at the larger step is never taken for accuracy.
//
// Quantities a parameter does not reach. A state or output whose equations never see p, directly
// or through other states (core/sensitivity/structural_influence.h), has the exact sensitivity 0;
// its difference would be the runs' integration noise over δ (Lang's kPhFoxE = 5e-16 and
// _Cyt__CCND ~1e11: 3.5e16), so it is reported as 0.
//
// Where p is the threshold of a piecewise switch the difference includes the jump that the
// analytic sensitivities omit (Brannmark's insulin_time_1); no step choice removes that.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::sensitivity {

struct FiniteDifferenceProblem {
  std::shared_ptr<const symbolic::CompiledModel> model;
  double t0 = 0;
  std::vector<double> times;             // output times, ascending, >= t0
  std::vector<double> p;                 // the point where the derivatives are taken
  std::vector<int> params;               // indices into p to differentiate against
  std::vector<std::size_t> outputRows;   // rows of CompiledModel::outputs() to report
};

struct FiniteDifferenceOptions {
  double relativeStep = 1e-4;
  // Extrapolate the central and one-sided formulas (2 and 1 more runs) where the step and its
  // half differ by more than their noise.
  bool richardson = true;
  integrators::Method integrator = integrators::Method::Cvodes;
  integrators::IntegratorOptions integration;  // the (tight) tolerances of every simulation
};

enum class FiniteDifferenceScheme { Central, OneSided, AdaptedFromZero };
const char* toString(FiniteDifferenceScheme s);  // "central", "one-sided", "adapted from 0"

struct FiniteDifferenceStep {
  double delta = 0;  // signed: the largest perturbation is p + delta (central: p ± delta)
  double scale = 0;  // the scale delta was taken relative to
  FiniteDifferenceScheme scheme = FiniteDifferenceScheme::Central;
  bool extrapolated = false;  // Richardson, where truncation showed above the noise
  // The relative difference between D(δ) and D(δ/2) (extrapolated candidates; 0 otherwise).
  double errorEstimate = 0;
  // Values (states and outputs × times) taken from a wider step, the widest of them: where δ
  // served some quantities but left others in the noise (second pass in finiteDifferences).
  long widerValues = 0;
  double widerDelta = 0;
  // States and outputs the parameter does not reach (structural_influence.h), whose values are
  // exactly 0 rather than differences of the runs' noise.
  long unreached = 0;
  bool operator==(const FiniteDifferenceStep&) const = default;
};

// "central, extrapolated", "adapted from 0, 3 quantities not reached (0)", ... for statistics.
std::string describe(const FiniteDifferenceStep& step);

struct FiniteDifferenceResult {
  std::vector<double> states;                // x, nt × nx (unperturbed run)
  std::vector<double> outputs;               // y, nt × ny
  std::vector<double> stateSensitivities;    // nt × nx × ns, row-major
  std::vector<double> outputSensitivities;   // nt × ny × ns, row-major
  std::vector<FiniteDifferenceStep> steps;   // per parameter
  integrators::IntegratorStats integrator;   // all simulations summed
  long perturbedRhsEvals = 0;                // right-hand sides of the perturbed simulations
  long simulations = 0;
  // What was done instead of failing (a step reduced after a perturbed simulation failed), one
  // sentence each.
  std::vector<std::string> fallbacks;
};

// Fills `result` (stats as far as it got when an integration fails, then rethrows). `monitorFor`
// gives the progress monitor of simulation `run` (0 = unperturbed) of at most `runs`.
void finiteDifferences(const FiniteDifferenceProblem& problem,
                       const FiniteDifferenceOptions& options,
                       const std::function<ProgressMonitor(int run, int runs)>& monitorFor,
                       FiniteDifferenceResult& result);

}  // namespace sensode::sensitivity
