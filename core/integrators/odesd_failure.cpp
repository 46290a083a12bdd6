// SPDX-License-Identifier: MIT
#include "core/integrators/odesd_failure.h"

#include <cstdio>

namespace sensode::integrators::odesd {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string plainCause(const Cause& why, const Names& names, int maxNewtonIterations) {
  const std::string at = " at t = " + num(why.t);
  switch (why.kind) {
    case Cause::Kind::Diverged:
    case Cause::Kind::TooSlow:
      return "the implicit step equations could not be solved (Newton iteration" +
             std::string(why.kind == Cause::Kind::Diverged
                             ? " diverged)"
                             : " did not converge in " + std::to_string(maxNewtonIterations) +
                                   " iterations)");
    case Cause::Kind::NonFiniteF:
      return "the rate of change of " + names.state(why.row) + " is not a finite number" + at;
    case Cause::Kind::NonFiniteState:
      return "state " + names.state(why.row) + " became non-finite (" + num(why.value) + ")" + at;
    case Cause::Kind::NonFiniteA:
      // Where f is finite but ẍ = J·f is not, a rate law is not differentiable at this state
      // (x^n with n < 1 at x = 0).
      return "the second time derivative of " + names.state(why.row) +
             " is not finite" + at + " (a rate law is not smooth at this state)";
    case Cause::Kind::NonFiniteJ:
      return "the rate of change of " + names.state(why.row) +
             " has no finite derivative with respect to " + names.state(why.col) + at +
             " (a rate law is not smooth at this state, e.g. x^n with n < 1 at x = 0)";
    case Cause::Kind::NonFiniteJJ:
      return "the second time derivative of " + names.state(why.row) +
             " has no finite derivative with respect to " + names.state(why.col) + at +
             " (a rate law is not smooth enough at this state, e.g. x^n with n < 2 at x = 0)";
    case Cause::Kind::NonFiniteParam:
      return "the rate of change of " + names.state(why.row) +
             " has no finite derivative with respect to the parameter " +
             names.parameter(why.col) + at;
    case Cause::Kind::NonFiniteSens:
      return "the sensitivity of " + names.state(why.row) + " to " + names.parameter(why.col) +
             " changes at a rate that is not finite" + at;
    case Cause::Kind::Singular:
      return "the implicit step equations could not be solved (singular Newton matrix)";
    case Cause::Kind::None: break;
  }
  return "unknown cause";
}

std::string technicalCause(const Cause& why, const Names& names, int maxNewtonIterations) {
  const std::string at = " at t = " + num(why.t);
  switch (why.kind) {
    case Cause::Kind::Diverged: return "Newton iteration diverged (‖δ_m‖ > 2‖δ_m−1‖)";
    case Cause::Kind::TooSlow:
      return "Newton iteration did not converge in " + std::to_string(maxNewtonIterations) +
             " iterations";
    case Cause::Kind::NonFiniteF:
      return "non-finite value in f for state " + names.state(why.row) + at;
    case Cause::Kind::NonFiniteState:
      return "non-finite iterate: state " + names.state(why.row) + " = " + num(why.value) + at;
    case Cause::Kind::NonFiniteA:
      return "non-finite value in the second derivative a = J·f of state " +
             names.state(why.row) + at;
    case Cause::Kind::NonFiniteJ:
      return "non-finite value in the Jacobian entry d f[" + names.state(why.row) + "] / d " +
             names.state(why.col) + at;
    case Cause::Kind::NonFiniteJJ:
      return "non-finite value in the second-derivative Jacobian entry d a[" +
             names.state(why.row) + "] / d " + names.state(why.col) + at;
    case Cause::Kind::NonFiniteParam:
      return "non-finite value in f_p or a_p entry d f[" + names.state(why.row) + "] / d " +
             names.parameter(why.col) + at;
    case Cause::Kind::NonFiniteSens:
      return "non-finite sensitivity derivative Ṡ or S̈ entry [" + names.state(why.row) + ", " +
             names.parameter(why.col) + "]" + at;
    case Cause::Kind::Singular: return "singular Newton matrix W = I − (h/2)J + (h²/12)J_J";
    case Cause::Kind::None: break;
  }
  return "unknown cause";
}

}  // namespace sensode::integrators::odesd
