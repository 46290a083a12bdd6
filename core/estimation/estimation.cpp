// SPDX-License-Identifier: MIT
// runEstimation: multistart, statistics and profiles (being implemented on this branch).
#include "core/estimation/estimation.h"

namespace sensode::estimation {

EstimationResult runEstimation(const EstimationProblem&, const EstimationOptions&,
                               const ProgressMonitor&, const StartCallback&) {
  EstimationResult r;
  r.status = EstimationResult::Status::Failure;
  r.message = "parameter estimation is not implemented yet (API only)";
  return r;
}

}  // namespace sensode::estimation
