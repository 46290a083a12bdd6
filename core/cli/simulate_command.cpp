// SPDX-License-Identifier: MIT
// sensode simulate MODEL.xml [--t-end T] [--points N | --times t1,t2,...] [--method odesd|cvodes]
//                  [--rtol R] [--atol A] [--set ID=VALUE ...] [--event-times] [--outputs ID,...]
//                  [--out FILE.csv] [--stats FILE.json] [--save-model FILE.xml]
//
// Imports the model, compiles it, runs the time-course task and writes the trajectory (CSV, with
// --out) and the solver statistics (JSON, with --stats). Stdout gets a short human summary; an
// output with no value at some output times (0/0 in its own formula) is written as NaN there,
// with a warning on stderr and the list in --stats ("undefined_outputs").
//
// For benchmarks, SENSODE_BENCH_REPEAT=N runs the same time course N more times in the process
// after the measured one and lists their wall times in --stats ("repeat_wall_seconds"): the
// first run pays once per process for first touches of code and memory, which on a virtual
// machine cost microseconds per page (docs/benchmarks/performance.md §18); the repeats do not.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/cli/arguments.h"
#include "core/cli/command_setup.h"
#include "core/cli/commands.h"
#include "core/cli/csv_writer.h"
#include "core/cli/output_times.h"
#include "core/cli/stats_json.h"
#include "core/symbolic/reduced_system.h"
#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/integrators/sundials_build.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/time_course_task.h"
#include "core/model/sbml_writer.h"

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

const std::vector<OptionSpec>& simulateOptions() {
  static const std::vector<OptionSpec> specs = {
      {"--t-end", "T", "end time; output times linspace(0, T, N) (default 10)"},
      {"--points", "N", "number of output times including t = 0 (default 101)"},
      {"--times", "t1,t2,...", "explicit ascending output times (instead of --t-end/--points)"},
      {"--method", "odesd|cvodes", "integrator (default odesd)"},
      {"--rtol", "R", "relative tolerance (default 1e-6)"},
      {"--atol", "A", "absolute tolerance in the units of the output (a species in concentration: of its concentration; default 1e-12)"},
      {"--set", "ID=VALUE",
       "override a parameter, species initial value or compartment size;"
       " repeatable",
       true},
      {"--event-times", "",
       "models with events: add two rows at every event time, the values just before and after"},
      {"--outputs", "ID,...",
       "columns to write, in this order: species, rule variables, parameters, compartments, "
       "reactions (default: species, then time-varying quantities)"},
      {"--out", "FILE.csv", "write the trajectory: time,<id>,... one row per output time"},
      {"--stats", "FILE.json", "write solver statistics as one JSON object"},
      {"--save-model", "FILE.xml",
       "write the model with the --set values in it (SBML, through libSBML; reloads to the same "
       "time course)"},
      noCacheOption(),
      {"--help", "", "show this help"},
  };
  return specs;
}

struct SimulateSettings {
  std::string modelPath;
  std::vector<double> times;
  tasks::TimeCourseOptions options;
  std::vector<std::pair<std::string, double>> overrides;
  std::vector<std::string> outputs;  // empty = the default columns
  std::optional<std::string> out, stats;
  std::optional<std::string> saveModel;
  bool eventRows = false;
};

SimulateSettings parseSimulate(const Arguments& a) {
  const auto usage = [](const std::string& m) { return UsageError("simulate: " + m); };
  SimulateSettings s;
  s.modelPath = a.onlyPositional("MODEL.xml");

  s.times = outputTimesFromArguments(a, "simulate");

  if (const auto m = a.string("--method")) {
    const auto method = integrators::methodFromString(*m);
    if (!method) throw usage("--method: '" + *m + "' is not one of odesd, cvodes");
    s.options.method = *method;
  }
  s.options.integrator.rtol = a.number("--rtol", s.options.integrator.rtol);
  s.options.integrator.atol = a.number("--atol", s.options.integrator.atol);
  if (const auto why = s.options.validate()) throw usage(*why);

  for (const std::string& item : a.strings("--set")) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw usage("--set: '" + item + "' is not ID=VALUE");
    const std::string id = item.substr(0, eq);
    const auto v = Arguments::parseDouble(item.substr(eq + 1));
    if (!v) throw usage("--set " + id + ": '" + item.substr(eq + 1) + "' is not a number");
    s.overrides.emplace_back(id, *v);
  }
  if (const auto outputs = a.idList("--outputs")) s.outputs = *outputs;
  s.out = a.string("--out");
  s.stats = a.string("--stats");
  s.eventRows = a.has("--event-times");
  s.saveModel = a.string("--save-model");
  return s;
}


// --save-model: the warnings (a removed initial assignment, a flattened comp model) go to
// stderr as the import's do.
void saveEditedModel(const std::string& modelPath,
                     const std::vector<std::pair<std::string, double>>& overrides,
                     const std::string& target) {
  for (const std::string& w : model::writeSbmlWithValues(modelPath, overrides, target))
    std::cerr << "sensode: warning: " << target << ": " << w << "\n";
}

// The moieties (conservation laws) of the species reactions change, e.g. "E + C; S + C + P";
// empty when there are none. Informational only: where the analysis fails (stoichiometries near
// 1e308 overflow its residual check) the line says so, and the finished run still succeeds.
std::string conservationLaws(const symbolic::CompiledModel& compiled) {
  try {
    const auto analysis = symbolic::analyzeConservation(compiled.system());
    std::string out;
    for (const auto& d : analysis.descriptions) out += (out.empty() ? "" : "; ") + d;
    return out;
  } catch (const Error& e) {
    return std::string("not determined (") + e.what() + ")";
  }
}

void printSummary(const std::string& modelId, const symbolic::CompiledModel& compiled,
                  const SimulateSettings& s, const tasks::TimeCourseResult& r, double loadSeconds) {
  std::ostream& o = std::cout;
  o << "model        " << (modelId.empty() ? std::string("(no id)") : modelId) << "  (" << s.modelPath
    << ")\n";
  o << "states       " << compiled.nx() << "\n";
  o << "parameters   " << compiled.np() << "\n";
  o << "outputs      " << r.columns.size() << " columns x " << r.times.size() << " rows"
    << (s.out ? " -> " + *s.out : std::string(" (write them with --out FILE.csv)")) << "\n";
  o << "method       " << integrators::toString(s.options.method) << "  (rtol "
    << shortNumber(s.options.integrator.rtol) << ", atol " << shortNumber(s.options.integrator.atol)
    << ")\n";
  o << "steps        " << r.stats.steps << "\n";
  o << "rhs evals    " << r.stats.rhsEvals << "\n";
  o << "jac evals    " << r.stats.jacEvals << "\n";
  o << "wall time    " << shortNumber(r.wallSeconds) << " s  (load and compile "
    << shortNumber(loadSeconds) << " s)\n";
  if (!compiled.system().events.empty())
    o << "events       " << compiled.system().events.size() << " in the model, state changed at "
      << r.eventTimes.size() << " times"
      << (r.eventTimes.empty() ? std::string()
                               : " (first t = " + shortNumber(r.eventTimes.front()) + ")")
      << "\n";
  if (r.stats.handoverTime >= 0)
    o << "hand-over    to CVODES BDF at t = " << shortNumber(r.stats.handoverTime) << " ("
      << r.stats.handoverSteps << " BDF steps)\n";
  // What the run did instead of failing (another integrator over part or all of it).
  for (const std::string& f : r.stats.fallbacks) o << "fallback     " << f << "\n";
  for (const tasks::UndefinedOutput& u : r.undefinedOutputs)
    o << "undefined    " << u.id << " at " << u.times.size() << " output time(s), written as "
      << u.gives << " (see the warning)\n";
  const std::string laws = conservationLaws(compiled);
  if (!laws.empty()) o << "moieties     " << laws << "\n";
  if (!r.times.empty() && !r.columns.empty()) {
    const std::size_t last = r.times.size() - 1;
    const std::size_t shown = std::min<std::size_t>(r.columns.size(), 5);
    o << "final values at t = " << shortNumber(r.times[last]) << ":\n";
    for (std::size_t j = 0; j < shown; ++j)
      o << "  " << r.columns[j] << " = " << formatNumber(r.at(last, j)) << "\n";
    if (shown < r.columns.size()) o << "  ... (" << r.columns.size() - shown << " more)\n";
  }
  o.flush();
}

// SENSODE_BENCH_REPEAT: how many more times the benchmarks want the run (0 when unset).
int benchmarkRepeats() {
  const char* v = std::getenv("SENSODE_BENCH_REPEAT");
  return v ? std::max(0, std::atoi(v)) : 0;
}

JsonObject statsObject(const symbolic::CompiledModel& compiled, const SimulateSettings& s,
                       const tasks::TimeCourseResult& r, double loadSeconds,
                       const std::vector<double>& repeatWallSeconds) {
  JsonObject json;
  json.add("method", integrators::toString(s.options.method)).add("wall_seconds", r.wallSeconds);
  if (!repeatWallSeconds.empty()) json.add("repeat_wall_seconds", repeatWallSeconds);
  addIntegratorStats(json, r.stats);
  json.add("n_states", compiled.nx())
      .add("n_parameters", compiled.np())
      .add("n_outputs", static_cast<long>(r.columns.size()))
      .add("n_times", static_cast<long>(r.times.size()))
      .add("n_event_times", static_cast<long>(r.eventTimes.size()))
      .add("rtol", s.options.integrator.rtol)
      .add("atol", s.options.integrator.atol)
      .add("load_seconds", loadSeconds)
      .add("conservation_laws", conservationLaws(compiled));
  addNativeStats(json, compiled);
  json.add("sundials", integrators::sundialsBuildDescription())
      .add("model", s.modelPath)
      .add("termination", tasks::toString(r.termination))
      .add("message", r.message);
  addUndefinedOutputs(json, r.undefinedOutputs);
  return json;
}

}  // namespace

int runSimulate(std::span<const std::string> args) {
  const Arguments a("simulate", simulateOptions(), args);
  if (a.has("--help")) {
    std::cout << "usage: sensode simulate MODEL.xml [options]\n\n"
              << Arguments::helpText(simulateOptions());
    return 0;
  }
  const SimulateSettings s = parseSimulate(a);
  applyCacheOption(a);
  checkFiles(s.modelPath, {s.out, s.stats, s.saveModel});
  const CommandModel loaded = loadCommandModel(
      s.modelPath, s.overrides,
      nativeOptionsFor(s.options.method == integrators::Method::OdeSd, false));
  if (s.saveModel) saveEditedModel(s.modelPath, s.overrides, *s.saveModel);
  const auto& compiled = loaded.model;
  const double loadSeconds = loaded.loadSeconds;

  tasks::TimeCourseProblem problem;
  problem.model = compiled;
  problem.t0 = 0;
  problem.times = s.times;
  problem.overrides = s.overrides;
  problem.eventRows = s.eventRows;
  problem.outputs = s.outputs;
  const tasks::TimeCourseResult r = tasks::runTimeCourse(problem, s.options);
  std::vector<double> repeatWallSeconds;
  for (int k = benchmarkRepeats(); k > 0; --k)
    repeatWallSeconds.push_back(tasks::runTimeCourse(problem, s.options).wallSeconds);
  warnUndefinedOutputs(s.modelPath, r.undefinedOutputs);

  if (s.stats) statsObject(*compiled, s, r, loadSeconds, repeatWallSeconds).write(*s.stats);
  if (r.termination != tasks::Termination::Success)
    throw Error(s.modelPath + ": " + tasks::toString(r.termination) + ": " + r.message);
  if (s.out) writeTimeCourseCsv(fs::path(*s.out), r);
  printSummary(loaded.modelId, *compiled, s, r, loadSeconds);
  return 0;
}

}  // namespace sensode::cli
