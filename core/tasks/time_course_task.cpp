// SPDX-License-Identifier: MIT
#include "core/tasks/time_course_task.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "core/common/errors.h"
#include "core/simulation/event_simulation.h"
#include "core/tasks/task_common.h"

namespace sensode::tasks {

const char* toString(Termination t) {
  switch (t) {
    case Termination::Success: return "success";
    case Termination::IntegrationFailure: return "integration_failure";
    case Termination::UserAbort: return "user_abort";
    case Termination::InvalidInput: return "invalid_input";
  }
  return "unknown";
}

using detail::firstIds;
using detail::InvalidInput;
using detail::OutputColumn;

std::vector<double> resolveParameters(
    const symbolic::CompiledModel& model,
    const std::vector<std::pair<std::string, double>>& overrides) {
  std::vector<double> p = model.nominalParameters();
  const symbolic::OdeSystem& sys = model.system();
  for (const auto& [id, value] : overrides) {
    const int k = sys.findParam(id);
    if (k < 0) {
      throw InvalidOptions("unknown parameter id '" + id + "' in --set (known: " +
                           firstIds(sys.params, [](const symbolic::ParamVar& v) { return v.id; }) +
                           ")");
    }
    if (!std::isfinite(value)) {
      throw InvalidOptions("value of '" + id + "' in --set = " + detail::exactNumber(value) +
                           ". Violated constraint: finite");
    }
    p[static_cast<std::size_t>(k)] = value;
  }
  return p;
}

TimeCourseResult runTimeCourse(const TimeCourseProblem& problem, const TimeCourseOptions& options,
                               const ProgressMonitor& monitor) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  TimeCourseResult result;
  std::unique_ptr<integrators::Integrator> integrator;
  std::unique_ptr<simulation::EventSimulation> eventSimulation;  // models with events

  auto finish = [&](Termination termination, std::string message) {
    result.termination = termination;
    result.message = std::move(message);
    if (integrator) result.stats = integrator->stats();
    if (eventSimulation) result.stats = eventSimulation->stats();
    result.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    // Moved, not copied: finish ends the run, and a copy of a large result is pure waste (in
    // runSensitivities it cost as much as Exp's own work on the 52-species suite models).
    return std::move(result);
  };

  try {
    if (!problem.model) throw InvalidInput("time course: no model");
    const symbolic::CompiledModel& model = *problem.model;
    if (auto problemText = options.validate()) throw InvalidOptions(*problemText);

    detail::checkOutputTimes(problem.t0, problem.times);

    const std::vector<OutputColumn> columns = detail::selectOutputColumns(
        model, problem.outputs, problem.forceAmount, problem.forceConcentration);
    for (const OutputColumn& c : columns) result.columns.push_back(c.id);
    const std::vector<double> p = resolveParameters(model, problem.overrides);

    std::vector<double> x = detail::initialState(model, problem.t0, p);

    // The integrator reports tEnd of each advanceTo; callers want the end of the whole run.
    const double tEnd = problem.times.back();
    const ProgressMonitor runMonitor = detail::wholeRunMonitor(monitor, problem.t0, tEnd);

    const std::size_t nOut = model.system().outputs.size();
    std::vector<double> y(3 * nOut);
    result.times.reserve(problem.times.size());
    result.values.reserve(problem.times.size() * columns.size());
    auto record = [&](double t, const double* state) {
      model.outputs(t, state, p.data(), y.data());
      result.times.push_back(t);
      for (const OutputColumn& c : columns) result.values.push_back(y[c.row(nOut)]);
    };
    if (!model.system().events.empty()) {  // the simulation driver stops and restarts at events
      eventSimulation = std::make_unique<simulation::EventSimulation>(
          problem.model, options.method, options.integrator);
      eventSimulation->setEventSink([&](double t, const double* before, const double* after) {
        result.eventTimes.push_back(t);
        if (!problem.eventRows) return;
        record(t, before);
        record(t, after);
      });
      eventSimulation->run(problem.t0, x, p, problem.times, record, runMonitor);
      return finish(Termination::Success, {});
    }

    if (tEnd > problem.t0) {
      integrator = integrators::makeIntegrator(options.method);
      integrator->initialize(problem.model, options.integrator, problem.t0, x, p);
    }

    double tCurrent = problem.t0;
    for (double t : problem.times) {
      if (t > tCurrent) {
        integrator->advanceTo(t, x, runMonitor);
        tCurrent = t;
      }
      record(t, x.data());
    }
  } catch (const IntegrationFailure& e) {
    return finish(Termination::IntegrationFailure, e.what());
  } catch (const Cancelled& e) {
    return finish(Termination::UserAbort, e.what());
  } catch (const InvalidOptions& e) {
    return finish(Termination::InvalidInput, e.what());
  } catch (const InvalidInput& e) {
    return finish(Termination::InvalidInput, e.what());
  } catch (const std::exception& e) {
    return finish(Termination::IntegrationFailure, e.what());
  }
  return finish(Termination::Success, {});
}

}  // namespace sensode::tasks
