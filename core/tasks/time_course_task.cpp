// SPDX-License-Identifier: MIT
#include "core/tasks/time_course_task.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <unordered_map>
#include <unordered_set>

#include "core/common/errors.h"

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

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// "a, b, c, d, e, ..." — the first few ids, for "unknown id" messages.
template <class Range, class IdOf>
std::string firstIds(const Range& range, IdOf idOf, std::size_t limit = 8) {
  std::string s;
  std::size_t n = 0;
  for (const auto& item : range) {
    if (n == limit) return s + ", ...";
    if (n > 0) s += ", ";
    s += idOf(item);
    ++n;
  }
  return n == 0 ? std::string("none") : s;
}

// Raised inside runTimeCourse for problems with the problem itself (Termination::InvalidInput).
class InvalidInput : public Error {
 public:
  using Error::Error;
};

// A column of the result: which output, and which block of CompiledModel::outputs().
struct Column {
  std::string id;
  std::size_t index;  // into value/amount/concentration block
  int block;          // 0 value, 1 amount, 2 concentration
};

// True when e depends on t or on a state (parameters are constant during a run).
bool isTimeVarying(const symbolic::OdeSystem& sys,
                   const std::unordered_set<symbolic::Expr>& stateSymbols, symbolic::Expr e) {
  for (symbolic::Expr dep : sys.pool->dependencies(e)) {
    if (dep == sys.time || stateSymbols.count(dep) != 0) return true;
  }
  return false;
}

std::vector<Column> selectColumns(const symbolic::CompiledModel& model,
                                  const TimeCourseProblem& problem) {
  const symbolic::OdeSystem& sys = model.system();
  const auto& outs = sys.outputs;
  auto outputIdOf = [](const symbolic::OutputVar& o) { return o.id; };

  std::vector<std::size_t> chosen;
  if (!problem.outputs.empty()) {
    for (const std::string& id : problem.outputs) {
      const int k = sys.findOutput(id);
      if (k < 0) {
        throw InvalidInput("unknown output id '" + id + "' (known: " + firstIds(outs, outputIdOf) +
                           ")");
      }
      chosen.push_back(static_cast<std::size_t>(k));
    }
  } else {
    // Every species, then every other quantity whose value changes in time (reaction rates only
    // on request).
    for (std::size_t k = 0; k < outs.size(); ++k) {
      if (outs[k].kind == symbolic::OutputKind::Species) chosen.push_back(k);
    }
    std::unordered_set<symbolic::Expr> stateSymbols;
    for (const auto& s : sys.states) stateSymbols.insert(s.symbol);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const auto kind = outs[k].kind;
      if (kind == symbolic::OutputKind::Species || kind == symbolic::OutputKind::Reaction) continue;
      if (isTimeVarying(sys, stateSymbols, outs[k].value)) chosen.push_back(k);
    }
  }

  std::unordered_map<std::string, int> forced;
  for (const std::string& id : problem.forceAmount) {
    if (sys.findOutput(id) < 0) throw InvalidInput("unknown output id '" + id + "' in forceAmount");
    forced[id] = 1;
  }
  for (const std::string& id : problem.forceConcentration) {
    if (sys.findOutput(id) < 0) {
      throw InvalidInput("unknown output id '" + id + "' in forceConcentration");
    }
    auto it = forced.find(id);
    if (it != forced.end()) {
      throw InvalidInput("output id '" + id + "' is in both forceAmount and forceConcentration");
    }
    forced[id] = 2;
  }

  std::vector<Column> columns;
  columns.reserve(chosen.size());
  for (std::size_t k : chosen) {
    auto it = forced.find(outs[k].id);
    columns.push_back({outs[k].id, k, it == forced.end() ? 0 : it->second});
  }
  return columns;
}

}  // namespace

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
      throw InvalidOptions("value of '" + id + "' in --set = " + num(value) +
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

  auto finish = [&](Termination termination, std::string message) {
    result.termination = termination;
    result.message = std::move(message);
    if (integrator) result.stats = integrator->stats();
    result.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };

  try {
    if (!problem.model) throw InvalidInput("time course: no model");
    const symbolic::CompiledModel& model = *problem.model;
    if (auto problemText = options.validate()) throw InvalidOptions(*problemText);

    // Times: finite, ascending (equal neighbours allowed), none before t0.
    if (!std::isfinite(problem.t0)) throw InvalidInput("t0 = " + num(problem.t0) + " is not finite");
    if (problem.times.empty()) throw InvalidInput("no output times");
    for (std::size_t i = 0; i < problem.times.size(); ++i) {
      const double t = problem.times[i];
      if (!std::isfinite(t)) {
        throw InvalidInput("output time #" + std::to_string(i + 1) + " = " + num(t) +
                           " is not finite");
      }
      if (t < problem.t0) {
        throw InvalidInput("output time #" + std::to_string(i + 1) + " = " + num(t) +
                           " is before t0 = " + num(problem.t0));
      }
      if (i > 0 && t < problem.times[i - 1]) {
        throw InvalidInput("output times are not ascending: #" + std::to_string(i) + " = " +
                           num(problem.times[i - 1]) + ", #" + std::to_string(i + 1) + " = " +
                           num(t));
      }
    }

    const std::vector<Column> columns = selectColumns(model, problem);
    for (const Column& c : columns) result.columns.push_back(c.id);
    const std::vector<double> p = resolveParameters(model, problem.overrides);

    const auto nx = static_cast<std::size_t>(model.nx());
    std::vector<double> x(nx);
    model.initialState(problem.t0, p.data(), x.data());
    for (std::size_t i = 0; i < nx; ++i) {
      if (!std::isfinite(x[i])) {
        throw InvalidInput("non-finite initial value for '" + model.system().states[i].id +
                           "': " + num(x[i]));
      }
    }

    // The integrator reports tEnd of each advanceTo; callers want the end of the whole run.
    ProgressMonitor runMonitor;
    runMonitor.token = monitor.token;
    const double tEnd = problem.times.back();
    if (monitor.callback) {
      runMonitor.callback = [&monitor, tEnd](const ProgressInfo& info) {
        ProgressInfo whole = info;
        whole.tEnd = tEnd;
        return monitor.callback(whole);
      };
    }

    if (tEnd > problem.t0) {
      integrator = integrators::makeIntegrator(options.method);
      integrator->initialize(problem.model, options.integrator, problem.t0, x, p);
    }

    const std::size_t nOut = model.system().outputs.size();
    std::vector<double> y(3 * nOut);
    result.times.reserve(problem.times.size());
    result.values.reserve(problem.times.size() * columns.size());
    double tCurrent = problem.t0;
    for (double t : problem.times) {
      if (t > tCurrent) {
        integrator->advanceTo(t, x, runMonitor);
        tCurrent = t;
      }
      model.outputs(t, x.data(), p.data(), y.data());
      result.times.push_back(t);
      for (const Column& c : columns) {
        result.values.push_back(y[static_cast<std::size_t>(c.block) * nOut + c.index]);
      }
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
