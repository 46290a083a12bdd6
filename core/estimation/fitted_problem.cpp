// SPDX-License-Identifier: MIT
#include "core/estimation/fitted_problem.h"

#include "core/common/errors.h"

namespace sensode::estimation {

std::vector<std::pair<std::string, double>> bestFitNominalValues(const EstimationResult& result) {
  std::vector<std::pair<std::string, double>> values;
  if (result.best.size() != result.parameters.size()) return values;
  for (std::size_t i = 0; i < result.parameters.size(); ++i)
    values.emplace_back(result.parameters[i].id,
                        petab::fromScale(result.parameters[i].scale, result.best[i]));
  return values;
}

petab::WrittenProblem writeFittedProblem(const std::filesystem::path& yamlFile,
                                         const EstimationResult& result,
                                         const std::filesystem::path& dir) {
  const auto values = bestFitNominalValues(result);
  if (values.empty())
    throw Error(yamlFile.string() + ": no best fit to write (no start succeeded)");
  return petab::writeProblemWithNominalValues(yamlFile, values, dir);
}

}  // namespace sensode::estimation
