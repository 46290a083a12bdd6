// SPDX-License-Identifier: MIT
#include "core/estimation/fit_preparation.h"

#include <algorithm>
#include <map>

namespace sensode::estimation::detail {
namespace {

// The options' parameters in PEtab table order (defaults for an empty list). Throws
// InvalidOptions naming the id that does not match the table.
std::vector<EstimatedParameter> resolveParameters(const petab::Problem& problem,
                                                  const std::vector<EstimatedParameter>& given) {
  std::vector<EstimatedParameter> table = defaultParameters(problem);
  if (given.empty()) return table;
  std::map<std::string, const EstimatedParameter*> byId;
  for (const EstimatedParameter& p : given) {
    if (!byId.emplace(p.id, &p).second)
      throw InvalidOptions("EstimationOptions::parameters: '" + p.id + "' is listed twice");
  }
  for (EstimatedParameter& t : table) {
    const auto it = byId.find(t.id);
    if (it == byId.end())
      throw InvalidOptions("EstimationOptions::parameters: '" + t.id +
                           "' is estimated in the PEtab parameter table but missing (list every "
                           "estimated parameter; estimate = false holds one fixed)");
    if (it->second->scale != t.scale)
      throw InvalidOptions("EstimationOptions::parameters: '" + t.id + "' has scale " +
                           petab::toString(it->second->scale) + ", the PEtab table " +
                           petab::toString(t.scale));
    t = *it->second;
    byId.erase(it);
  }
  if (!byId.empty())
    throw InvalidOptions("EstimationOptions::parameters: '" + byId.begin()->first +
                         "' is not an estimated parameter of the PEtab table");
  return table;
}

}  // namespace

PreparedFit prepareFit(const std::filesystem::path& yaml, const EstimationOptions& options) {
  PreparedFit fit;
  fit.problem = petab::loadProblem(yaml);
  fit.parameters = resolveParameters(*fit.problem, options.parameters);
  const std::vector<int> table = petab::estimatedParameters(*fit.problem);
  FitSetup& setup = fit.setup;
  for (std::size_t i = 0; i < fit.parameters.size(); ++i) {
    const EstimatedParameter& p = fit.parameters[i];
    setup.point.push_back(p.start);
    if (!p.estimate) continue;
    setup.free.push_back(static_cast<int>(i));
    setup.lower.push_back(p.lower);
    setup.upper.push_back(p.upper);
    fit.freeTable.push_back(table[i]);
    fit.freeParameters.push_back(p);
  }
  if (setup.free.empty())
    throw InvalidOptions(yaml.string() + ": no parameter to estimate (every parameter is held fixed)");
  for (const std::string& id : options.profileParameters) {
    const auto it = std::find_if(fit.freeParameters.begin(), fit.freeParameters.end(),
                                 [&](const EstimatedParameter& p) { return p.id == id; });
    if (it == fit.freeParameters.end())
      throw InvalidOptions("EstimationOptions::profileParameters: '" + id +
                           "' is not a parameter this fit estimates");
    fit.profiled.push_back(static_cast<int>(it - fit.freeParameters.begin()));
  }
  setup.objective = options.objective;
  setup.gradient = options.gradient;
  return fit;
}

}  // namespace sensode::estimation::detail
