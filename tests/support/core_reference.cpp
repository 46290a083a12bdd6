// SPDX-License-Identifier: MIT
#include "support/core_reference.h"

#include <memory>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"

namespace sensode::testing {

tasks::TimeCourseResult coreTimeCourse(const std::string& modelFile, const char* method,
                                       double tEnd, long points, double rtol, double atol,
                                       std::vector<std::pair<std::string, double>> overrides) {
  const auto m = model::importSbmlFile(modelFile);
  tasks::TimeCourseProblem problem;
  problem.model = std::make_shared<symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
  for (long i = 0; i < points; ++i)
    problem.times.push_back(tEnd * static_cast<double>(i) / static_cast<double>(points - 1));
  problem.times.back() = tEnd;
  problem.overrides = std::move(overrides);
  tasks::TimeCourseOptions options;
  options.method = *integrators::methodFromString(method);
  options.integrator.rtol = rtol;
  options.integrator.atol = atol;
  return tasks::runTimeCourse(problem, options);
}

}  // namespace sensode::testing
