// SPDX-License-Identifier: MIT
#include "core/tasks/task_common.h"

#include "core/tasks/time_course_task.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace sensode::tasks::detail {

std::string exactNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string fastReactionFallback(const std::string& failure) {
  return "rapid equilibrium of the fast reactions failed (" + failure +
         "); the run was repeated with the fast reactions as ordinary reactions " +
         symbolic::kFastRateFactorText +
         " times faster (a stiff ODE whose equilibrium lags by ~10^-8 of the model's time "
         "scale; docs/dae.md)";
}

std::string fastReactionRetryFailed(const std::string& failure) {
  return std::string("with the fast reactions as ordinary reactions ") +
         symbolic::kFastRateFactorText + " times faster, the run failed too: " + failure;
}

namespace {

// True when e depends on t or on a state (parameters are constant during a run).
bool isTimeVarying(const symbolic::OdeSystem& sys,
                   const std::unordered_set<symbolic::Expr>& stateSymbols, symbolic::Expr e) {
  for (symbolic::Expr dep : sys.pool->dependencies(e)) {
    if (dep == sys.time || stateSymbols.count(dep) != 0) return true;
  }
  return false;
}

// Indices into sys.outputs of the default columns: every species, then every other quantity
// whose value changes in time (reaction rates only on request).
std::vector<std::size_t> defaultOutputIndices(const symbolic::OdeSystem& sys) {
  const auto& outs = sys.outputs;
  std::vector<std::size_t> chosen;
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
  return chosen;
}

}  // namespace

std::vector<OutputColumn> selectOutputColumns(const symbolic::CompiledModel& model,
                                              const std::vector<std::string>& outputs,
                                              const std::vector<std::string>& forceAmount,
                                              const std::vector<std::string>& forceConcentration) {
  const symbolic::OdeSystem& sys = model.system();
  const auto& outs = sys.outputs;
  auto outputIdOf = [](const symbolic::OutputVar& o) { return o.id; };

  std::vector<std::size_t> chosen;
  if (!outputs.empty()) {
    std::unordered_set<std::string> seen;
    for (const std::string& id : outputs) {
      const int k = sys.findOutput(id);
      if (k < 0) {
        throw InvalidInput("unknown output id '" + id + "' (known: " + firstIds(outs, outputIdOf) +
                           ")");
      }
      if (!seen.insert(id).second) throw InvalidInput("output id '" + id + "' given twice");
      chosen.push_back(static_cast<std::size_t>(k));
    }
  } else {
    chosen = defaultOutputIndices(sys);
  }

  std::unordered_map<std::string, int> forced;
  for (const std::string& id : forceAmount) {
    if (sys.findOutput(id) < 0) throw InvalidInput("unknown output id '" + id + "' in forceAmount");
    forced[id] = 1;
  }
  for (const std::string& id : forceConcentration) {
    if (sys.findOutput(id) < 0) {
      throw InvalidInput("unknown output id '" + id + "' in forceConcentration");
    }
    auto it = forced.find(id);
    if (it != forced.end()) {
      throw InvalidInput("output id '" + id + "' is in both forceAmount and forceConcentration");
    }
    forced[id] = 2;
  }

  std::vector<OutputColumn> columns;
  columns.reserve(chosen.size());
  for (std::size_t k : chosen) {
    auto it = forced.find(outs[k].id);
    columns.push_back({outs[k].id, k, it == forced.end() ? 0 : it->second});
  }
  return columns;
}

void checkOutputTimes(double t0, const std::vector<double>& times) {
  if (!std::isfinite(t0)) throw InvalidInput("t0 = " + exactNumber(t0) + " is not finite");
  if (times.empty()) throw InvalidInput("no output times");
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double t = times[i];
    if (!std::isfinite(t)) {
      throw InvalidInput("output time #" + std::to_string(i + 1) + " = " + exactNumber(t) +
                         " is not finite");
    }
    if (t < t0) {
      throw InvalidInput("output time #" + std::to_string(i + 1) + " = " + exactNumber(t) +
                         " is before t0 = " + exactNumber(t0));
    }
    if (i > 0 && t < times[i - 1]) {
      throw InvalidInput("output times are not ascending: #" + std::to_string(i) + " = " +
                         exactNumber(times[i - 1]) + ", #" + std::to_string(i + 1) + " = " +
                         exactNumber(t));
    }
  }
}

std::vector<double> initialState(const symbolic::CompiledModel& model, double t0,
                                 const std::vector<double>& p) {
  const auto nx = static_cast<std::size_t>(model.nx());
  std::vector<double> x(nx);
  model.initialState(t0, p.data(), x.data());
  for (std::size_t i = 0; i < nx; ++i) {
    if (!std::isfinite(x[i])) {
      throw InvalidInput("non-finite initial value for '" + model.system().states[i].id +
                         "': " + exactNumber(x[i]));
    }
  }
  return x;
}

ProgressMonitor wholeRunMonitor(const ProgressMonitor& monitor, double t0, double tEnd, int run,
                                int runs) {
  ProgressMonitor whole;
  whole.token = monitor.token;
  if (!monitor.callback) return whole;
  whole.callback = [callback = monitor.callback, t0, tEnd, run, runs](const ProgressInfo& info) {
    ProgressInfo mapped = info;
    mapped.tEnd = tEnd;
    if (runs > 1 && tEnd > t0) {
      // Integrators step past tout: clip, so that the fraction never runs into the next run.
      const double within = std::clamp((info.t - t0) / (tEnd - t0), 0.0, 1.0);
      const double fraction = (run + within) / runs;
      mapped.t = t0 + fraction * (tEnd - t0);
    }
    return callback(mapped);
  };
  return whole;
}

}  // namespace sensode::tasks::detail

namespace sensode::tasks {

std::vector<std::string> defaultOutputIds(const symbolic::OdeSystem& system) {
  std::vector<std::string> ids;
  for (const std::size_t k : detail::defaultOutputIndices(system)) ids.push_back(system.outputs[k].id);
  return ids;
}

}  // namespace sensode::tasks
