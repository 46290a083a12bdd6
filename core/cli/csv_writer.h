// SPDX-License-Identifier: MIT
// CSV output of the command-line tool. Numbers are written with %.17g so that they read back to
// the same double; non-finite values use the SBML Test Suite's spellings NaN, INF and -INF.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "core/tasks/time_course_task.h"

namespace sensode::cli {

// %.17g, or NaN / INF / -INF.
std::string formatNumber(double v);
// The same text written at `at` (at least 32 characters free); returns its end.
char* appendNumber(char* at, double v);

// One CSV field, quoted when it contains a comma, a quote or a line break.
std::string csvField(const std::string& text);

// Header `time,<id>,...`, then one row per output time.
void writeTimeCourseCsv(std::ostream& out, const tasks::TimeCourseResult& result);
// Same into `file`; throws sensode::Error naming the file when it cannot be written.
void writeTimeCourseCsv(const std::filesystem::path& file, const tasks::TimeCourseResult& result);

}  // namespace sensode::cli
