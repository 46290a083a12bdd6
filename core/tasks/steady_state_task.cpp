// SPDX-License-Identifier: MIT
#include "core/tasks/steady_state_task.h"

#include <chrono>
#include <exception>

#include "core/common/errors.h"
#include "core/simulation/event_simulation.h"
#include "core/tasks/steady_state_events.h"
#include "core/tasks/task_common.h"

namespace sensode::tasks {

const char* toString(SteadyStateResult::Status s) {
  switch (s) {
    case SteadyStateResult::Status::Success: return "success";
    case SteadyStateResult::Status::NoSteadyState: return "no_steady_state";
    case SteadyStateResult::Status::InvalidInput: return "invalid_input";
    case SteadyStateResult::Status::UserAbort: return "user_abort";
    case SteadyStateResult::Status::Failure: return "failure";
  }
  return "unknown";
}

namespace {

Eigen::MatrixXd denseFromCsc(const symbolic::SparsePattern& pat, const std::vector<double>& v) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(pat.rows, pat.cols);
  for (int c = 0; c < pat.cols; ++c)
    for (int k = pat.colPtr[static_cast<std::size_t>(c)];
         k < pat.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      m(pat.rowIdx[static_cast<std::size_t>(k)], c) = v[static_cast<std::size_t>(k)];
  return m;
}

}  // namespace

SteadyStateResult runSteadyState(const SteadyStateProblem& problem,
                                 const SteadyStateOptions& options,
                                 const ProgressMonitor& monitor) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SteadyStateResult result;
  auto finish = [&](SteadyStateResult::Status status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    result.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    // Moved, not copied: finish ends the run, and a copy of a large result is pure waste (in
    // runSensitivities it cost as much as Exp's own work on the 52-species suite models).
    return std::move(result);
  };
  try {
    if (!problem.model) throw detail::InvalidInput("steady state: no model");
    if (auto why = options.validate()) throw InvalidOptions(*why);
    // A delay model's steady states are those of its delay-free twin (delay(g, τ) = g when
    // nothing changes), which has the same states, parameters and outputs; compiled here, only
    // when a steady state of a delay model is asked for.
    std::shared_ptr<const symbolic::CompiledModel> steadyModel = problem.model;
    const auto& twin = problem.model->system().delayFreeTwin;
    if (twin) steadyModel = std::make_shared<const symbolic::CompiledModel>(symbolic::OdeSystem(*twin));
    const symbolic::CompiledModel& model = *steadyModel;
    const symbolic::OdeSystem& sys = model.system();
    if (auto why = simulation::delaysNotSupported(sys, "steady states"))
      throw detail::InvalidInput(*why);
    for (const auto& s : sys.states) result.stateIds.push_back(s.id);
    for (const auto& p : sys.params) result.parameterIds.push_back(p.id);
    const std::vector<detail::OutputColumn> columns =
        detail::selectOutputColumns(model, problem.outputs, {}, {});
    for (const auto& c : columns) result.columns.push_back(c.id);
    result.parameters = resolveParameters(model, problem.overrides);
    detail::initialState(model, 0.0, result.parameters);  // names a non-finite initial value

    const steadystate::ConservedModel conserved(steadyModel);
    result.solution =
        sys.events.empty()
            ? steadystate::solveSteadyState(conserved, result.parameters, options, monitor)
            : detail::solveSteadyStateAcrossEvents(conserved, result.parameters, options, monitor);
    if (twin)
      result.solution.path += " (the delays read as their present values: delay(g, τ) = g at a "
                              "steady state; a simulation and the eigenvalues are those of the "
                              "model without delays)";
    const steadystate::SteadyStateSolution& s = result.solution;
    if (!s.found) return finish(SteadyStateResult::Status::NoSteadyState, s.reason);

    const std::size_t nOut = sys.outputs.size();
    std::vector<double> y(3 * nOut);
    model.outputs(0.0, s.state.data(), result.parameters.data(), y.data());
    for (const auto& c : columns) result.values.push_back(y[c.row(nOut)]);

    if (s.sensitivities.size() > 0) {
      const auto& yxPat = model.outputStateJacobianPattern();
      const auto& ypPat = model.outputParamJacobianPattern();
      std::vector<double> yx(static_cast<std::size_t>(yxPat.nnz())),
          yp(static_cast<std::size_t>(ypPat.nnz()));
      model.outputStateJacobian(0.0, s.state.data(), result.parameters.data(), yx.data());
      model.outputParamJacobian(0.0, s.state.data(), result.parameters.data(), yp.data());
      const Eigen::MatrixXd dy = denseFromCsc(yxPat, yx) * s.sensitivities + denseFromCsc(ypPat, yp);
      for (const auto& c : columns)
        for (Eigen::Index k = 0; k < dy.cols(); ++k)
          result.outputSensitivities.push_back(dy(static_cast<Eigen::Index>(c.row(nOut)), k));
    }
  } catch (const Cancelled& e) {
    return finish(SteadyStateResult::Status::UserAbort, e.what());
  } catch (const InvalidOptions& e) {
    return finish(SteadyStateResult::Status::InvalidInput, e.what());
  } catch (const detail::InvalidInput& e) {
    return finish(SteadyStateResult::Status::InvalidInput, e.what());
  } catch (const std::exception& e) {
    return finish(SteadyStateResult::Status::Failure, e.what());
  }
  return finish(SteadyStateResult::Status::Success, {});
}

}  // namespace sensode::tasks
