// SPDX-License-Identifier: MIT
// What users of a sensitivity tool compute by hand after a run: how far two methods' dy/dp
// disagree (the cross-check behind the GUI's "Compare methods"), and the scaled sensitivities
// (p/y)·dy/dp of every output and parameter at one time (the GUI's heat map).
//
// Relative discrepancy of method A against a reference R, per entry (t, y, p):
//   d = |A − R| / max_t |R(·, y, p)|
// i.e. relative to the largest magnitude of that output-parameter series over time, so entries
// where R crosses zero do not blow up, and a series that is identically zero in R compares
// absolutely (d = |A|). Max and median are over all entries; maxOverTime[t] over (y, p).
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
};

// Throws InvalidOptions when the two results do not have the same times, outputs and parameters
// or were not both computed scaled (or both unscaled).
SensitivityDiscrepancy compareSensitivities(const SensitivityResult& result,
                                            const SensitivityResult& reference);

// (p/y)·dy/dp at output time index `it`, ny × np row-major. For a result computed scaled, its own
// values; otherwise from dy/dp, y and p. NaN where |y| <= guard (scaling undefined; the task
// reports those as 0 and flags them).
std::vector<double> scaledSensitivitiesAt(const SensitivityResult& result, std::size_t it,
                                          double guard);

}  // namespace sensode::tasks
