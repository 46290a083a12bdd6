// SPDX-License-Identifier: MIT
// The core's answer for a GUI run, computed without any plugin code: the time course of a model
// file on linspace(0, tEnd, points) (last time exactly tEnd, as the task and the CLI compute it),
// for the plugin and host tests to compare their tables with bit for bit.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tasks/time_course_task.h"

namespace sensode::testing {

// `method` as the settings name it ("cvodes", "odesd").
tasks::TimeCourseResult coreTimeCourse(const std::string& modelFile, const char* method,
                                       double tEnd, long points, double rtol, double atol,
                                       std::vector<std::pair<std::string, double>> overrides = {});

}  // namespace sensode::testing
