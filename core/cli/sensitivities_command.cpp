// SPDX-License-Identifier: MIT
// sensode sensitivities MODEL.xml [--params ID,ID,...|all] [--method odesd|cvodes|pbsr|exp|fd]
//                       [--scaled] [--t-end T] [--points N | --times t1,t2,...] [--rtol R]
//                       [--atol A] [--set ID=VALUE ...] [--trajectory odesd|cvodes]
//                       [--outputs ID,...] [--no-error-control] [--strict-error-control]
//                       [--fd-step H] [--fd-no-extrapolation]
//                       [--corrector staggered|simultaneous|augmented]
//                       [--out FILE.csv] [--stats FILE.json]
//
// Imports the model, compiles it, runs the sensitivities task and writes dy/dp in long format
// (CSV header `time,variable,parameter,value`, one row per entry: times outermost, then outputs,
// then parameters) and the statistics (JSON: simulate's keys plus sens_evals and the method's
// own counts). Stdout gets a short human summary. An output with no value at some output times is
// NaN there with NaN sensitivities, a warning on stderr and "undefined_outputs" in --stats.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "core/cli/arguments.h"
#include "core/cli/command_setup.h"
#include "core/cli/commands.h"
#include "core/cli/csv_writer.h"
#include "core/cli/output_times.h"
#include "core/cli/stats_json.h"
#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

// The method used when --method is absent: odeSD's direct sensitivities (the task's default).
constexpr tasks::SensitivityMethod kDefaultMethod = tasks::SensitivityOptions{}.method;

const std::vector<OptionSpec>& sensitivitiesOptions() {
  static const std::vector<OptionSpec> specs = {
      {"--params", "ID,ID,...|all",
       "parameters to differentiate against: global, local (REACTION.ID), species initial "
       "values, compartment sizes (default all)"},
      {"--method", "odesd|cvodes|pbsr|exp|fd",
       std::string("sensitivity method (default ") + tasks::toString(kDefaultMethod) + ")"},
      {"--scaled", "", "report (p/y)*dy/dp; 0 where |y| <= atol"},
      {"--t-end", "T", "end time; output times linspace(0, T, N) (default 10)"},
      {"--points", "N", "number of output times including t = 0 (default 101)"},
      {"--times", "t1,t2,...", "explicit ascending output times (instead of --t-end/--points)"},
      {"--rtol", "R", "relative tolerance (default 1e-6)"},
      {"--atol", "A", "absolute tolerance in the units of the output (a species in concentration: of its concentration; default 1e-12)"},
      {"--set", "ID=VALUE",
       "override a parameter, species initial value or compartment size; repeatable", true},
      {"--trajectory", "odesd|cvodes",
       "pbsr/exp/fd: integrator of the state trajectory (default cvodes)"},
      {"--outputs", "ID,...",
       "outputs to differentiate, in this order (default: species, then time-varying "
       "quantities)"},
      {"--no-error-control", "", "odesd/cvodes: leave S out of the local error test"},
      {"--strict-error-control", "",
       "odesd: keep S in the error test however many steps it costs (default: over 8x the "
       "states' steps, the states' test at a 1000x tighter rtol instead)"},
      {"--corrector", "staggered|simultaneous|augmented",
       "cvodes: sensitivity corrector (default staggered; augmented: CVODE on [x; S] as one "
       "vector); odesd: that of its BDF hand-over (default augmented)"},
      {"--fd-step", "H",
       "fd: relative step, of |p| or of the size an initial value's state reaches (default 1e-4; "
       "simulations at rtol 1e-12)"},
      {"--fd-no-extrapolation", "", "fd: plain differences, no Richardson extrapolation"},
      {"--out", "FILE.csv", "write time,variable,parameter,value (one row per entry)"},
      {"--stats", "FILE.json", "write statistics as one JSON object"},
      noCacheOption(),
      {"--help", "", "show this help"},
  };
  return specs;
}

struct Settings {
  std::string modelPath;
  tasks::SensitivityProblem problem;
  tasks::SensitivityOptions options;
  std::optional<std::string> out, stats;
};

Settings parse(const Arguments& a) {
  const auto usage = [](const std::string& m) { return UsageError("sensitivities: " + m); };
  Settings s;
  s.modelPath = a.onlyPositional("MODEL.xml");
  tasks::SensitivityProblem& problem = s.problem;
  tasks::SensitivityOptions& options = s.options;
  options.method = kDefaultMethod;

  problem.times = outputTimesFromArguments(a, "sensitivities");

  if (const auto m = a.string("--method")) {
    const auto method = tasks::sensitivityMethodFromString(*m);
    if (!method) throw usage("--method: '" + *m + "' is not one of odesd, cvodes, pbsr, exp, fd");
    options.method = *method;
  }
  if (const auto m = a.string("--trajectory")) {
    const auto method = integrators::methodFromString(*m);
    if (!method) throw usage("--trajectory: '" + *m + "' is not one of odesd, cvodes");
    if (options.method == tasks::SensitivityMethod::OdeSd ||
        options.method == tasks::SensitivityMethod::Cvodes)
      throw usage("--trajectory applies to --method pbsr, exp and fd");
    options.trajectory = *method;
  }
  if (const auto c = a.string("--corrector")) {
    const auto corrector = integrators::sensitivityCorrectorFromString(*c);
    if (!corrector) {
      throw usage("--corrector: '" + *c + "' is not one of staggered, simultaneous, augmented");
    }
    if (options.method == tasks::SensitivityMethod::OdeSd) {
      options.integrator.handoverCorrector = *corrector;
    } else if (options.method == tasks::SensitivityMethod::Cvodes) {
      options.integrator.sensitivityCorrector = *corrector;
    } else {
      throw usage("--corrector applies to --method cvodes and odesd");
    }
  }
  if (const auto params = a.string("--params"); params && *params != "all")
    problem.parameters = *a.idList("--params");
  if (const auto outputs = a.idList("--outputs")) problem.outputs = *outputs;
  options.scaled = a.has("--scaled");
  options.errorControl = !a.has("--no-error-control");
  options.errorTestBudget = !a.has("--strict-error-control");
  options.integrator.rtol = a.number("--rtol", options.integrator.rtol);
  options.integrator.atol = a.number("--atol", options.integrator.atol);
  options.fdRelativeStep = a.number("--fd-step", options.fdRelativeStep);
  if (a.has("--fd-no-extrapolation")) options.fdRichardson = false;
  if (const auto why = options.validate()) throw usage(*why);

  for (const std::string& item : a.strings("--set")) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw usage("--set: '" + item + "' is not ID=VALUE");
    const std::string id = item.substr(0, eq);
    const auto v = Arguments::parseDouble(item.substr(eq + 1));
    if (!v) throw usage("--set " + id + ": '" + item.substr(eq + 1) + "' is not a number");
    problem.overrides.emplace_back(id, *v);
  }
  s.out = a.string("--out");
  s.stats = a.string("--stats");
  return s;
}

void writeCsv(const fs::path& file, const tasks::SensitivityResult& r) {
  std::ofstream out(file);
  if (!out) throw Error(file.string() + ": cannot open for writing");
  out << "time,variable,parameter,value\n";
  std::vector<std::string> outputs, params;
  for (const std::string& id : r.outputIds) outputs.push_back(csvField(id));
  for (const std::string& id : r.parameterIds) params.push_back(csvField(id));
  // Rows assembled in a buffer written in large pieces (tens of millions of rows on the largest
  // corpus models: per-row stream insertions cost as much as the numbers).
  std::string buffer;
  constexpr std::size_t kFlushAt = 1 << 20;
  char number[32];
  for (std::size_t it = 0; it < r.times.size(); ++it) {
    const std::string t = formatNumber(r.times[it]);
    for (std::size_t iy = 0; iy < outputs.size(); ++iy) {
      for (std::size_t ip = 0; ip < params.size(); ++ip) {
        buffer += t;
        buffer += ',';
        buffer += outputs[iy];
        buffer += ',';
        buffer += params[ip];
        buffer += ',';
        buffer.append(number, appendNumber(number, r.at(it, iy, ip)));
        buffer += '\n';
        if (buffer.size() >= kFlushAt) {
          out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
          buffer.clear();
        }
      }
    }
  }
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  out.flush();
  if (!out) throw Error(file.string() + ": write failed");
}

JsonObject statsObject(const symbolic::CompiledModel& compiled, const Settings& s,
                       const tasks::SensitivityResult& r, double loadSeconds) {
  const tasks::SensitivityOptions& o = s.options;
  JsonObject json;
  json.add("method", tasks::toString(o.method)).add("wall_seconds", r.wallSeconds);
  // "fallbacks": the task's (another sensitivity method) after the integrator's own.
  integrators::IntegratorStats integrator = r.stats.integrator;
  integrator.fallbacks.insert(integrator.fallbacks.end(), r.stats.fallbacks.begin(),
                              r.stats.fallbacks.end());
  addIntegratorStats(json, integrator);
  json.add("sens_evals", r.stats.sensitivityEvals)
      .add("sensitivity_rhs_evals", r.stats.integrator.sensitivityRhsEvals)
      .add("sensitivity_error_test_failures", r.stats.integrator.sensitivityErrorTestFailures)
      .add("simulations", r.stats.simulations);
  const bool peanoBaker =
      o.method == tasks::SensitivityMethod::Pbsr || o.method == tasks::SensitivityMethod::Exp;
  if (o.method == tasks::SensitivityMethod::Cvodes)
    json.add("corrector", integrators::toString(o.integrator.sensitivityCorrector));
  if (o.method == tasks::SensitivityMethod::OdeSd)
    json.add("corrector", integrators::toString(o.integrator.handoverCorrector));
  if (peanoBaker || o.method == tasks::SensitivityMethod::FiniteDifferences)
    json.add("trajectory", integrators::toString(o.trajectory));
  if (o.method == tasks::SensitivityMethod::FiniteDifferences) {
    std::vector<double> deltas, scales;
    std::vector<std::string> schemes;
    for (const auto& step : r.stats.fdSteps) {
      deltas.push_back(step.delta);
      scales.push_back(step.scale);
      schemes.push_back(sensitivity::describe(step));
    }
    json.add("fd_steps", deltas).add("fd_step_scales", scales).add("fd_schemes", schemes);
    json.add("sensitivity_fallbacks", r.stats.fallbacks);
  }
  if (peanoBaker) {
    const auto& pb = r.stats.peanoBaker;
    json.add("intervals", pb.intervals)
        .add("exponential_steps", pb.exponentialSteps)
        .add("exponentials_computed", pb.expmEvaluations)
        .add("exponentials_shifted", pb.expmShifted)
        .add("merged_intervals", pb.mergedIntervals)
        .add("refined_intervals", pb.refinedIntervals)
        .add("subintervals", pb.subintervals)
        .add("pb_jacobian_evals", pb.jacobianEvals);
  }
  json.add("n_states", compiled.nx())
      .add("n_parameters", static_cast<long>(r.parameterIds.size()))
      .add("n_outputs", static_cast<long>(r.outputIds.size()))
      .add("n_times", static_cast<long>(r.times.size()))
      .add("scaled", o.scaled)
      .add("guarded", r.guardedCount)
      .add("error_control", o.errorControl)
      .add("error_test_budget", o.errorTestBudget)
      .add("rtol", o.integrator.rtol)
      .add("atol", o.integrator.atol);
  // What the reported run used when the error-test budget tightened it (fallbacks say why).
  if (r.stats.rtolUsed > 0)
    json.add("rtol_used", r.stats.rtolUsed).add("error_control_used", r.stats.errorControlUsed);
  json
      .add("load_seconds", loadSeconds)
      .add("model", s.modelPath)
      .add("termination", tasks::toString(r.termination))
      .add("message", r.message);
  addNativeStats(json, compiled);
  addUndefinedOutputs(json, r.undefinedOutputs);
  return json;
}

void printSummary(const std::string& modelId, const symbolic::CompiledModel& compiled,
                  const Settings& s, const tasks::SensitivityResult& r, double loadSeconds) {
  std::ostream& o = std::cout;
  o << "model        " << (modelId.empty() ? std::string("(no id)") : modelId) << "  (" << s.modelPath
    << ")\n";
  o << "states       " << compiled.nx() << "\n";
  o << "parameters   " << r.parameterIds.size() << " of " << compiled.np() << "\n";
  o << "outputs      " << r.outputIds.size() << " x " << r.times.size() << " times -> "
    << r.times.size() * r.outputIds.size() * r.parameterIds.size() << " "
    << (s.options.scaled ? "scaled " : "") << "sensitivities"
    << (s.out ? " -> " + *s.out : std::string(" (write them with --out FILE.csv)")) << "\n";
  o << "method       " << tasks::toString(s.options.method) << "  (rtol "
    << shortNumber(s.options.integrator.rtol) << ", atol "
    << shortNumber(s.options.integrator.atol) << ")\n";
  o << "steps        " << r.stats.integrator.steps << "\n";
  o << "sens evals   " << r.stats.sensitivityEvals << "\n";
  if (!r.stats.fdSteps.empty()) {
    o << "fd steps     ";
    for (std::size_t j = 0; j < r.stats.fdSteps.size(); ++j) {
      if (j == 8) {
        o << "; ... (all in --stats: fd_steps)";
        break;
      }
      const auto& step = r.stats.fdSteps[j];
      o << (j ? "; " : "") << r.parameterIds[j] << " " << shortNumber(step.delta) << " "
        << sensitivity::describe(step);
    }
    o << "\n";
  }
  // What the run did instead of failing: the integrator's bridges, then other methods.
  for (const std::string& f : r.stats.integrator.fallbacks) o << "fallback     " << f << "\n";
  for (const std::string& f : r.stats.fallbacks) o << "fallback     " << f << "\n";
  for (const tasks::UndefinedOutput& u : r.undefinedOutputs)
    o << "undefined    " << u.id << " at " << u.times.size()
      << " output time(s): it and its sensitivities are NaN there (see the warning)\n";
  if (r.guardedCount > 0)
    o << "guarded      " << r.guardedCount << " (time, output) pairs with |y| <= atol: scaled 0\n";
  o << "wall time    " << shortNumber(r.wallSeconds) << " s  (load and compile "
    << shortNumber(loadSeconds) << " s)\n";
  o.flush();
}

}  // namespace

int runSensitivities(std::span<const std::string> args) {
  const Arguments a("sensitivities", sensitivitiesOptions(), args);
  if (a.has("--help")) {
    std::cout << "usage: sensode sensitivities MODEL.xml [options]\n\n"
              << Arguments::helpText(sensitivitiesOptions());
    return 0;
  }
  const Settings s = parse(a);
  applyCacheOption(a);
  checkFiles(s.modelPath, {s.out, s.stats});
  const CommandModel loaded = loadCommandModel(
      s.modelPath, s.problem.overrides,
      nativeOptionsFor(s.options.method == tasks::SensitivityMethod::OdeSd, true));
  const auto& compiled = loaded.model;
  const double loadSeconds = loaded.loadSeconds;

  tasks::SensitivityProblem problem = s.problem;
  problem.model = compiled;
  const tasks::SensitivityResult r = tasks::runSensitivities(problem, s.options);
  warnUndefinedOutputs(s.modelPath, r.undefinedOutputs);

  if (s.stats) statsObject(*compiled, s, r, loadSeconds).write(*s.stats);
  if (r.termination != tasks::Termination::Success)
    throw Error(s.modelPath + ": " + tasks::toString(r.termination) + ": " + r.message);
  if (s.out) writeCsv(fs::path(*s.out), r);
  printSummary(loaded.modelId, *compiled, s, r, loadSeconds);
  return 0;
}

}  // namespace sensode::cli
