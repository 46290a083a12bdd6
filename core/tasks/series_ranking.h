// SPDX-License-Identifier: MIT
// Which of many plotted series a chart should show first: those that vary most relative to their
// own scale. A 32-species model whose first twenty species sit at constant totals and whose
// calcium and IP3 oscillate must open on the oscillators, not on twenty flat lines.
//
// Variation of a column c over the output times: (max c − min c) / max(max |c|, floor), in
// [0, 2]; 0 for a constant column. floor = 1e-6 · (the largest |value| of all columns), so a
// column of rounding noise around 0 (a sensitivity that is exactly 0 up to roundoff) or a trace
// species a million times below the others (a flat line at 0 on the chart) does not rank as
// varying "100 %". Non-finite values are ignored.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tasks/time_course_task.h"

namespace sensode::tasks {

// One number per column of `series` (see above).
std::vector<double> seriesVariation(const TimeCourseResult& series);

// The indices of at most `count` columns, most varying first (ties: column order); a column
// whose variation is below 1e-9 (constant to rounding) is never chosen.
std::vector<std::size_t> mostVaryingColumns(const TimeCourseResult& series, std::size_t count);

}  // namespace sensode::tasks
