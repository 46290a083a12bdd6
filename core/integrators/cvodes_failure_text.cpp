// SPDX-License-Identifier: MIT
#include "core/integrators/cvodes_failure_text.h"

#include "core/common/format.h"

namespace sensode::integrators::cvodes_detail {
namespace {

std::string num(double v) { return preciseNumber(v); }

}  // namespace

std::string stateLabel(const symbolic::CompiledModel& model, int i) {
  const auto& states = model.system().states;
  if (i >= 0 && i < static_cast<int>(states.size())) {
    return "'" + states[static_cast<std::size_t>(i)].id + "'";
  }
  return "#" + std::to_string(i);
}

std::string parameterLabel(const symbolic::CompiledModel& model, int k) {
  const auto& params = model.system().params;
  if (k >= 0 && k < static_cast<int>(params.size())) {
    return "'" + params[static_cast<std::size_t>(k)].id + "'";
  }
  return "#" + std::to_string(k);
}

std::string describe(const CallbackRecord& record, const symbolic::CompiledModel& model) {
  const auto state = [&](int i) { return stateLabel(model, i); };
  const auto param = [&](int k) { return parameterLabel(model, k); };
  switch (record.kind) {
    case CallbackRecord::Kind::NonFiniteRhs:
      return "non-finite value in f for state " + state(record.row) + " at t = " + num(record.t);
    case CallbackRecord::Kind::NonFiniteJacobian:
      return "non-finite value in the Jacobian entry d f[" + state(record.row) + "] / d " +
             state(record.col) + " at t = " + num(record.t);
    case CallbackRecord::Kind::NonFiniteParamJacobian:
      return "non-finite value in the parameter Jacobian entry d f[" + state(record.row) +
             "] / d " + param(record.col) + " at t = " + num(record.t);
    case CallbackRecord::Kind::NonFiniteSensitivityRhs:
      return "non-finite sensitivity derivative d/dt (d " + state(record.row) + " / d " +
             param(record.col) + ") at t = " + num(record.t);
    case CallbackRecord::Kind::Exception:
      return "error while evaluating the model at t = " + num(record.t) + ": " + record.what;
    case CallbackRecord::Kind::NonFiniteState:
    case CallbackRecord::Kind::NonFiniteTime:
    case CallbackRecord::Kind::NoProgress:
    case CallbackRecord::Kind::Cancelled:
      return plain(record, model);
    case CallbackRecord::Kind::None:
      break;
  }
  return {};
}

std::string plain(const CallbackRecord& record, const symbolic::CompiledModel& model) {
  const auto state = [&](int i) { return stateLabel(model, i); };
  const auto param = [&](int k) { return parameterLabel(model, k); };
  const std::string at = " at t = " + num(record.t);
  switch (record.kind) {
    case CallbackRecord::Kind::NonFiniteRhs:
      return "the rate of change of " + state(record.row) + " is not a finite number" + at;
    case CallbackRecord::Kind::NonFiniteJacobian:
      return "the rate of change of " + state(record.row) +
             " has no finite derivative with respect to " + state(record.col) + at;
    case CallbackRecord::Kind::NonFiniteParamJacobian:
      return "the rate of change of " + state(record.row) +
             " has no finite derivative with respect to the parameter " + param(record.col) + at;
    case CallbackRecord::Kind::NonFiniteSensitivityRhs:
      return "the sensitivity of " + state(record.row) + " to " + param(record.col) +
             " changes at a rate that is not finite" + at;
    case CallbackRecord::Kind::Exception:
      return "the model could not be evaluated" + at + ": " + record.what;
    case CallbackRecord::Kind::NonFiniteState:
      // record.t is the end of the attempted step, which CVODES then cut.
      return "state " + state(record.row) + " became non-finite (" + num(record.value) +
             ") in a step to t = " + num(record.t);
    case CallbackRecord::Kind::NonFiniteTime:
      return "the step size is not a number: CVODES evaluated the model at t = " + num(record.t);
    case CallbackRecord::Kind::NoProgress:
      return "no progress: " + std::to_string(kMaxCallbacksPerStep) +
             " model evaluations within one step" + at;
    case CallbackRecord::Kind::Cancelled:
      return "cancelled" + at;
    case CallbackRecord::Kind::None:
      break;
  }
  return {};
}

}  // namespace sensode::integrators::cvodes_detail
