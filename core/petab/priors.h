// SPDX-License-Identifier: MIT
// PEtab v1 parameter priors (parameter table columns objectivePriorType and
// objectivePriorParameters, https://petab.readthedocs.io/en/latest/v1/documentation_data_format.html
// "Parameter table"), as terms of the objective: the negative log density of each estimated
// parameter's prior, and its derivative with respect to the parameter on its PEtab scale.
//
//   type                      parameters     −log p(v)
//   uniform                   a; b           log(b − a) on [a, b], +inf outside
//   normal                    μ; σ           ½ log(2πσ²) + (v − μ)²/(2σ²)
//   laplace                   μ; b           log(2b) + |v − μ|/b
//   logNormal                 μ; σ           log v + ½ log(2πσ²) + (ln v − μ)²/(2σ²)   (v > 0)
//   logLaplace                μ; b           log(2bv) + |ln v − μ|/b                    (v > 0)
//   parameterScaleUniform / parameterScaleNormal / parameterScaleLaplace: as uniform / normal /
//   laplace, with v the value on the parameter scale.
//
// For the first five, v is the linear value x = fromScale(q) of the parameter q on its scale,
// and the term is −log p(x(q)) without the Jacobian |dx/dq| of the change of variables: the
// density is the one PEtab names, evaluated at the parameter (as pyPESTO's
// pypesto/objective/priors.py does; logLaplace, which pyPESTO lacks, follows its logNormal),
// not a density of q. The derivative is then −(d log p/dx)·(dx/dq). Laplace priors have
// no derivative at v = μ; 0 is used there.
#pragma once

#include <optional>
#include <string>

namespace sensode::petab {

enum class Scale;

enum class PriorType {
  None,
  Uniform,
  Normal,
  Laplace,
  LogNormal,
  LogLaplace,
  ParameterScaleUniform,
  ParameterScaleNormal,
  ParameterScaleLaplace,
};
const char* toString(PriorType t);  // PEtab's spelling ("parameterScaleNormal")
std::optional<PriorType> priorTypeFromString(const std::string& s);

struct Prior {
  PriorType type = PriorType::None;
  double a = 0, b = 0;  // the two objectivePriorParameters, in the table's order
  bool operator==(const Prior&) const = default;
};

// Why (a, b) cannot parameterize `type` (σ or b not > 0, uniform with a >= b, non-finite), or
// nullopt when they can.
std::optional<std::string> validatePrior(const Prior& prior);

struct PriorValue {
  double value = 0;       // −log p
  double derivative = 0;  // d(−log p)/dq, q the parameter on its scale
};

// The term of a parameter whose value on its scale `scale` is `scaled`. `prior.type` must not
// be None (returns zeros then).
PriorValue evaluatePrior(const Prior& prior, Scale scale, double scaled);

}  // namespace sensode::petab
