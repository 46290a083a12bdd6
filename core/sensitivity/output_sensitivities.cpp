// SPDX-License-Identifier: MIT
#include "core/sensitivity/output_sensitivities.h"

#include <algorithm>

#include "core/common/errors.h"

namespace sensode::sensitivity {

OutputSensitivities::OutputSensitivities(std::shared_ptr<const symbolic::CompiledModel> model,
                                         std::vector<std::size_t> rows,
                                         std::vector<int> paramIndices)
    : model_(std::move(model)), rows_(std::move(rows)), params_(std::move(paramIndices)) {
  if (!model_) throw Error("OutputSensitivities: no model");
  const std::size_t allRows = 3 * model_->system().outputs.size();
  slotOfRow_.assign(allRows, -1);
  for (const std::size_t r : rows_) {
    if (r >= allRows) {
      throw Error("OutputSensitivities: output row " + std::to_string(r) + " outside [0, " +
                  std::to_string(allRows) + ")");
    }
    if (slotOfRow_[r] < 0) slotOfRow_[r] = static_cast<int>(slots_++);
    slotOfOutput_.push_back(static_cast<std::size_t>(slotOfRow_[r]));
  }
  for (const int k : params_) {
    if (k < 0 || k >= model_->np()) {
      throw Error("OutputSensitivities: parameter index " + std::to_string(k) + " outside [0, " +
                  std::to_string(model_->np()) + ")");
    }
  }
  yAll_.assign(allRows, 0.0);
  yxValues_.assign(static_cast<std::size_t>(model_->outputStateJacobianPattern().nnz()), 0.0);
  ypValues_.assign(static_cast<std::size_t>(model_->outputParamJacobianPattern().nnz()), 0.0);
  slotValues_.assign(slots_ * params_.size(), 0.0);
}

void OutputSensitivities::evaluate(double t, const double* x, const double* p, const double* s,
                                   double* y, double* dydp) {
  const symbolic::CompiledModel& m = *model_;
  const std::size_t ns = params_.size();
  const auto nx = static_cast<std::size_t>(m.nx());
  m.outputs(t, x, p, yAll_.data());
  for (std::size_t iy = 0; iy < rows_.size(); ++iy) y[iy] = yAll_[rows_[iy]];
  if (ns == 0 || rows_.empty()) return;

  std::fill(slotValues_.begin(), slotValues_.end(), 0.0);
  // ∂y/∂x · S, column by column of ∂y/∂x (CSC over the states).
  m.outputStateJacobian(t, x, p, yxValues_.data());
  const symbolic::SparsePattern& yx = m.outputStateJacobianPattern();
  for (std::size_t i = 0; i < nx; ++i) {
    for (int k = yx.colPtr[i]; k < yx.colPtr[i + 1]; ++k) {
      const int slot = slotOfRow_[static_cast<std::size_t>(yx.rowIdx[static_cast<std::size_t>(k)])];
      if (slot < 0) continue;
      const double v = yxValues_[static_cast<std::size_t>(k)];
      double* out = &slotValues_[static_cast<std::size_t>(slot) * ns];
      for (std::size_t j = 0; j < ns; ++j) out[j] += v * s[j * nx + i];
    }
  }
  // + ∂y/∂p for the selected parameters.
  m.outputParamJacobian(t, x, p, ypValues_.data());
  const symbolic::SparsePattern& yp = m.outputParamJacobianPattern();
  for (std::size_t j = 0; j < ns; ++j) {
    const auto col = static_cast<std::size_t>(params_[j]);
    for (int k = yp.colPtr[col]; k < yp.colPtr[col + 1]; ++k) {
      const int slot = slotOfRow_[static_cast<std::size_t>(yp.rowIdx[static_cast<std::size_t>(k)])];
      if (slot < 0) continue;
      slotValues_[static_cast<std::size_t>(slot) * ns + j] += ypValues_[static_cast<std::size_t>(k)];
    }
  }
  for (std::size_t iy = 0; iy < rows_.size(); ++iy) {
    const double* from = &slotValues_[slotOfOutput_[iy] * ns];
    std::copy(from, from + ns, dydp + iy * ns);
  }
}

}  // namespace sensode::sensitivity
