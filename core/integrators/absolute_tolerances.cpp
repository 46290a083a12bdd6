// SPDX-License-Identifier: MIT
#include "core/integrators/absolute_tolerances.h"

#include <cmath>
#include <exception>
#include <string>
#include <unordered_map>

namespace sensode::integrators {

std::vector<double> absoluteTolerances(const symbolic::CompiledModel& model, double atol, double t0,
                                       const std::vector<double>& x0, const std::vector<double>& p) {
  const symbolic::OdeSystem& sys = model.system();
  const int nx = model.nx();
  std::vector<double> result(static_cast<std::size_t>(nx), atol);
  if (nx == 0) return result;

  // Output row of each species' value (the first block of outputs()).
  std::unordered_map<std::string, int> valueRow;
  for (std::size_t k = 0; k < sys.outputs.size(); ++k)
    if (sys.outputs[k].kind == symbolic::OutputKind::Species)
      valueRow.emplace(sys.outputs[k].id, static_cast<int>(k));

  const symbolic::SparsePattern& pattern = model.outputStateJacobianPattern();
  std::vector<double> values(static_cast<std::size_t>(pattern.nnz()));
  try {
    model.outputStateJacobian(t0, x0.data(), p.data(), values.data());
  } catch (const std::exception&) {
    return result;  // e.g. a delay model without its history yet: atol for every state
  }
  for (int i = 0; i < nx; ++i) {
    const symbolic::StateVar& s = sys.states[static_cast<std::size_t>(i)];
    if (s.kind != symbolic::StateKind::SpeciesAmount) continue;
    const auto row = valueRow.find(s.id);
    if (row == valueRow.end()) continue;
    for (int k = pattern.colPtr[static_cast<std::size_t>(i)];
         k < pattern.colPtr[static_cast<std::size_t>(i) + 1]; ++k) {
      if (pattern.rowIdx[static_cast<std::size_t>(k)] != row->second) continue;
      const double perAmount = values[static_cast<std::size_t>(k)];  // 1 / size
      if (perAmount > 0 && std::isfinite(perAmount) && std::isfinite(atol / perAmount) &&
          atol / perAmount > 0)
        result[static_cast<std::size_t>(i)] = atol / perAmount;
      break;
    }
  }
  return result;
}

}  // namespace sensode::integrators
