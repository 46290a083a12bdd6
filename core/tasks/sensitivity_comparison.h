// SPDX-License-Identifier: MIT
// What users of a sensitivity tool compute by hand after a run: how far two methods' dy/dp
// disagree (the cross-check behind the GUI's "Compare methods"), and the scaled sensitivities
// (p/y)·dy/dp of every output and parameter at one time (the GUI's heat map).
//
// Discrepancy of method A against a reference R, per entry (t, y, p):
//   d = |A − R| / max(max_t |R(·, y, p)|,  ρ · r_y / |p|)
// i.e. relative to the largest magnitude of that output-parameter series over time (so entries
// where R crosses zero do not blow up), but never to less than a floor: ρ = kFloorMargin · rtol
// (rtol the relative tolerance the methods ran at) times the output's largest response to any
// parameter, r_y = max over t and p' of |p' · dR(t, y)/dp'|, divided by |p| (for scaled results,
// (p/y)·dy/dp already, the floor is ρ · max |R(·, y, ·)|; where p = 0, ρ · max |R(·, y, ·)|).
// A sensitivity that is exactly 0 while others of the same output are not (Huang–Ferrell's
// concentrations w.r.t. the compartment size, 4e-12: the size cancels, every method returns
// noise) would otherwise read as a disagreement of 1 to 1e7. That noise was measured at 1–2 × rtol
// of r_y (CVODES, odeSD and finite differences at rtol 1e-6, times 0–100), and an integration's
// global error is typically 10–100 × rtol: a sensitivity below 1000 × rtol of what the other
// parameters do to the same output is at the noise level, and a difference there is measured
// against that level (it shows as ~1e-3, not as 1). Where even the floor is 0 the entry compares
// absolutely (d = |A|). Entries the reference marks structurally zero
// (SensitivityResult::unreached) are left out and counted in `structuralZeros`.
// Max and median are over the remaining entries; maxOverTime[t] over (y, p).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/tasks/sensitivities_task.h"

namespace sensode::tasks {

struct SensitivityDiscrepancy {
  double maxRelative = 0;
  double medianRelative = 0;
  // Where the maximum is (indices into the reference's times, outputs, parameters).
  std::size_t worstTime = 0, worstOutput = 0, worstParameter = 0;
  std::vector<double> maxOverTime;  // nt
  std::size_t comparedEntries = 0;  // entries in max and median (nt × ny × np less the zeros)
  std::size_t structuralZeros = 0;  // (y, p) series left out as structurally zero
  std::size_t flooredSeries = 0;    // (y, p) series judged against the floor, not their own size
  double floorTolerance = 0;        // ρ = kFloorMargin · rtol
};

inline constexpr double kFloorMargin = 1000;

// Throws InvalidOptions when the two results do not have the same times, outputs and parameters
// or were not both computed scaled (or both unscaled).
// `rtol`: the relative tolerance the methods ran at (ρ = kFloorMargin · rtol); 0: no floor.
SensitivityDiscrepancy compareSensitivities(const SensitivityResult& result,
                                            const SensitivityResult& reference, double rtol = 0);

// The parameter (index into result.parameterIds) with the largest effect: the largest
// |(p/y)·dy/dp| over all times and outputs (where |y| > guard; scaledSensitivitiesAt). Ties go
// to the first. 0 when nothing is defined.
std::size_t mostInfluentialParameter(const SensitivityResult& result, double guard);

// (p/y)·dy/dp at output time index `it`, ny × np row-major. For a result computed scaled, its own
// values; otherwise from dy/dp, y and p. NaN where |y| <= guard (scaling undefined; the task
// reports those as 0 and flags them).
std::vector<double> scaledSensitivitiesAt(const SensitivityResult& result, std::size_t it,
                                          double guard);

}  // namespace sensode::tasks
