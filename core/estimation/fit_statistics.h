// SPDX-License-Identifier: MIT
// Statistics at the optimum (internal to core/estimation), as Hemker (1972) and COPASI's
// parameter-estimation result give them: the Fisher information from the forward
// sensitivities of the observables and noise (fit_objective.h: fisherInformation), its
// eigen-decomposition (identifiability: a small eigenvalue is a direction the data do not
// determine), the covariance FIM⁻¹ — a pseudo-inverse over the eigenvalues above
// n·ε·λ_max when FIM is singular, with the standard error of a parameter that has a component
// in the null space reported as +inf —, standard errors, correlations, Wald intervals
// q ± z_{(1+level)/2}·SE on the parameter scale (and mapped to linear values), χ² = Σ r² of the
// weighted residuals with N − n degrees of freedom, and per-observable residual summaries.
#pragma once

#include <vector>

#include "core/estimation/estimation.h"

namespace sensode::estimation::detail {

// Φ⁻¹(p), 0 < p < 1 (Acklam's rational approximation refined by one Halley step on erfc:
// |error| < 1e-15 relative).
double normalQuantile(double p);

// `evaluation` at the optimum with simulatedSensitivities (Forward, measurementSensitivities);
// `free`: positions of the fitted parameters among the table's estimated ones, `parameters`
// their EstimatedParameter entries (ids, scales) in the same order.
FitStatistics computeStatistics(const petab::Problem& problem,
                                const petab::ObjectiveResult& evaluation,
                                const std::vector<int>& free,
                                const std::vector<EstimatedParameter>& parameters,
                                double confidenceLevel);

}  // namespace sensode::estimation::detail
