// SPDX-License-Identifier: MIT
#include "core/tasks/time_course_task.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "core/common/errors.h"
#include "core/simulation/event_simulation.h"
#include "core/tasks/task_common.h"
#include "core/tasks/undefined_outputs.h"

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

namespace {

// One integration of the time course with `method`: fills result.times/values (partial on
// failure) and result.stats; throws what the integrator throws.
void integrate(const TimeCourseProblem& problem, const TimeCourseOptions& options,
               integrators::Method method, const std::vector<OutputColumn>& columns,
               const std::vector<double>& p, const ProgressMonitor& runMonitor,
               TimeCourseResult& result) {
  const symbolic::CompiledModel& model = *problem.model;
  result.times.clear();
  result.values.clear();
  result.eventTimes.clear();
  result.eventIds.clear();
  result.undefinedOutputs.clear();
  result.stats = {};
  detail::UndefinedOutputLog undefined(model);
  const std::size_t nOut = model.system().outputs.size();
  std::vector<double> y(3 * nOut);
  result.times.reserve(problem.times.size());
  result.values.reserve(problem.times.size() * columns.size());
  auto record = [&](double t, const double* state) {
    model.outputs(t, state, p.data(), y.data());
    result.times.push_back(t);
    for (const OutputColumn& c : columns) {
      const double v = y[c.row(nOut)];
      if (!std::isfinite(v)) undefined.note(c, t, state, p.data(), v);
      result.values.push_back(v);
    }
  };
  // The simulation driver stops and restarts at events and keeps the history of delay equations.
  if (simulation::needsSimulationDriver(model.system())) {
    simulation::EventSimulation events(problem.model, method, options.integrator);
    std::size_t named = 0;  // executions already in result.eventIds
    events.setEventSink([&](double t, const double* before, const double* after) {
      result.eventTimes.push_back(t);
      std::string ids;
      for (const auto& all = events.executions(); named < all.size(); ++named)
        ids += (ids.empty() ? "" : ", ") + all[named].eventId;
      result.eventIds.push_back(std::move(ids));
      if (!problem.eventRows) return;
      record(t, before);
      record(t, after);
    });
    try {
      events.run(problem.t0, detail::initialState(model, problem.t0, p), p, problem.times, record,
                 runMonitor);
    } catch (...) {
      result.stats = events.stats();
      throw;
    }
    result.stats = events.stats();
    result.undefinedOutputs = undefined.take();
    return;
  }
  std::unique_ptr<integrators::Integrator> integrator;
  try {
    std::vector<double> x = detail::initialState(model, problem.t0, p);
    if (problem.times.back() > problem.t0) {
      integrator = integrators::makeIntegrator(method);
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
  } catch (...) {
    if (integrator) result.stats = integrator->stats();
    throw;
  }
  if (integrator) result.stats = integrator->stats();
  result.undefinedOutputs = undefined.take();
}

}  // namespace

// The default method never fails where another succeeds: when odeSD (the default) fails, the
// time course is computed again from t0 with CVODES BDF, and the result says so in
// stats.fallbacks (where a successful odeSD run lists its own bridges with CVODES over points it
// cannot step from, OdeSdOptions::maxBridges). Only when CVODES fails as well is the run a
// failure; the message then names both attempts.
namespace {

TimeCourseResult runOnModel(const TimeCourseProblem& problem, const TimeCourseOptions& options,
                            const ProgressMonitor& monitor) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  TimeCourseResult result;

  auto finish = [&](Termination termination, std::string message, std::string details = {}) {
    result.termination = termination;
    result.message = std::move(message);
    result.details = std::move(details);
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

    // The integrator reports tEnd of each advanceTo; callers want the end of the whole run.
    const double tEnd = problem.times.back();
    const ProgressMonitor runMonitor = detail::wholeRunMonitor(monitor, problem.t0, tEnd);

    try {
      integrate(problem, options, options.method, columns, p, runMonitor, result);
    } catch (const IntegrationFailure& odeSd) {
      // (A differential-algebraic model ran with IDAS under either name: nothing to retry.)
      if (options.method != integrators::Method::OdeSd || model.system().isDae()) throw;
      try {
        integrate(problem, options, integrators::Method::Cvodes, columns, p, runMonitor, result);
      } catch (const IntegrationFailure& cvodes) {
        throw IntegrationFailure(
            std::string(odeSd.what()) + "; CVODES BDF, run instead from t = " +
                detail::exactNumber(problem.t0) + ", failed too: " + cvodes.what(),
            cvodes.t(), cvodes.stepSize(),
            "odeSD: " + (odeSd.details().empty() ? std::string(odeSd.what()) : odeSd.details()) +
                "; CVODES: " +
                (cvodes.details().empty() ? std::string(cvodes.what()) : cvodes.details()));
      }
      // (The failed run's own fallback sentences are part of its message.) A solution that
      // blows up under one method and not under another sits on a knife edge: Crauste's exact
      // solution from odeSD's state at t = 9 (5e-4 off the reference, CVODES's is 8e-4 off the
      // other way) blows up at t = 10.24 too — worth a word to the modeller.
      const std::string what = odeSd.what();
      result.stats.fallbacks.insert(
          result.stats.fallbacks.begin(),
          "odeSD could not finish the time course (" + what + "); it was computed again from t = " +
              detail::exactNumber(problem.t0) +
              " with CVODES BDF, whose steps and evaluations the statistics show" +
              (what.find("blowing up") != std::string::npos
                   ? ". A solution that blows up under one method only is very sensitive to small "
                     "errors: compare with a tighter rtol"
                   : ""));
    }
  } catch (const IntegrationFailure& e) {
    return finish(Termination::IntegrationFailure, e.what(), e.details());
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

}  // namespace

TimeCourseResult runTimeCourse(const TimeCourseProblem& problem, const TimeCourseOptions& options,
                               const ProgressMonitor& monitor) {
  return detail::runWithFastReactionFallback(
      problem, [&](const TimeCourseProblem& p) { return runOnModel(p, options, monitor); });
}

}  // namespace sensode::tasks
