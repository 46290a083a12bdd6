// SPDX-License-Identifier: MIT
// Why an odeSD step attempt failed, worded twice: a modeller's sentence (IntegrationFailure::what(),
// the fallback sentences of IntegratorStats::fallbacks) and the technical detail behind it
// (IntegrationFailure::details(): which evaluator entry, which iteration test).
#pragma once

#include <functional>
#include <string>

namespace sensode::integrators::odesd {

struct Cause {
  enum class Kind {
    None,
    Diverged,         // ‖δ_m‖ > 2‖δ_{m−1}‖
    TooSlow,          // not converged in maxNewtonIterations
    NonFiniteF,       // f(y) not finite (row = state)
    NonFiniteState,   // the iterate y itself holds ±inf or NaN (row = state, value)
    NonFiniteA,       // ẍ(y) not finite
    NonFiniteJ,       // J entry (row, col)
    NonFiniteJJ,      // J_J entry (row, col)
    NonFiniteParam,   // f_p or a_p entry (row = state, col = model parameter)
    NonFiniteSens,    // Ṡ or S̈ (row = state, col = model parameter)
    Singular,         // W singular or not finite
  };
  Kind kind = Kind::None;
  int row = -1, col = -1;
  double t = 0;
  double value = 0;  // NonFiniteState: the state's value
  bool nonFinite() const { return kind >= Kind::NonFiniteF && kind <= Kind::NonFiniteSens; }
};

// Names of states (by index) and parameters (by model index) as they appear in messages.
struct Names {
  std::function<std::string(int)> state, parameter;
};

// "the rate of change of 'x' is not a finite number at t = 0" — no evaluator jargon.
std::string plainCause(const Cause& why, const Names& names, int maxNewtonIterations);
// "non-finite value in the second-derivative Jacobian entry d a['x'] / d 'x' at t = 0".
std::string technicalCause(const Cause& why, const Names& names, int maxNewtonIterations);

}  // namespace sensode::integrators::odesd
