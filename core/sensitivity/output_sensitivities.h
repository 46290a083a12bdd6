// SPDX-License-Identifier: MIT
// Sensitivities of reported outputs by the chain rule
//
//     dy/dp = ∂y/∂x · S + ∂y/∂p
//
// with the exact sparse output Jacobians of the compiled model (CompiledModel::outputStateJacobian
// and outputParamJacobian, over the 3·n rows value | amount | concentration of outputs()). ∂y/∂p
// carries what the state sensitivities miss: outputs that are assignment-rule expressions of
// parameters, concentrations divided by a compartment size that is a parameter, reaction rates.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/symbolic/compiled_model.h"

namespace sensode::sensitivity {

class OutputSensitivities {
 public:
  // `rows`: for each reported output, its row in CompiledModel::outputs() (block·n + index);
  // `paramIndices`: the parameters differentiated against (indices into p).
  OutputSensitivities(std::shared_ptr<const symbolic::CompiledModel> model,
                      std::vector<std::size_t> rows, std::vector<int> paramIndices);

  std::size_t numOutputs() const { return rows_.size(); }
  std::size_t numParams() const { return params_.size(); }

  // y (ny values) and dy/dp (ny × ns, row-major: dydp[iy·ns + k]) at (t, x) with state
  // sensitivities s (column-major nx × ns).
  void evaluate(double t, const double* x, const double* p, const double* s, double* y,
                double* dydp);

 private:
  std::shared_ptr<const symbolic::CompiledModel> model_;
  std::vector<std::size_t> rows_;
  std::vector<int> params_;
  std::vector<int> slotOfRow_;        // 3n rows → distinct-row slot, or −1 when not reported
  std::vector<std::size_t> slotOfOutput_;  // reported output → slot
  std::size_t slots_ = 0;
  std::vector<double> yAll_, yxValues_, ypValues_, slotValues_;
};

}  // namespace sensode::sensitivity
