// SPDX-License-Identifier: MIT
// sensode steadystate MODEL.xml [--method newton|simulation|auto] [--set ID=VALUE ...]
//                    [--rtol R] [--atol A] [--accept-negative] [--accept-unstable]
//                    [--out FILE.csv] [--stats FILE.json]
//
// Finds the steady state (core/steadystate: damped Newton on the conservation-reduced system,
// simulation as fallback) and writes
//   CSV   header `id,value`, one row per reported quantity at the steady state (every species,
//         then every other non-constant quantity), followed by one row per state sensitivity
//         `d(<state>)/d(<parameter>),<value>` — long rows whose id names both (only for
//         parameters with a non-zero column, so a large model does not write np × nx zeros).
//   JSON  the contract's keys (newton_iterations = steady-state Newton iterations + the
//         simulation's) plus the diagnostics: found, found_by, path, fallback_reason, reason,
//         steady_state_newton_iterations, newton_runs, simulated_time, residual_norm,
//         newton_step_norm, condition_estimate, max_real_eigenvalue, stable, negative,
//         conservation_laws (as one "; "-joined string), n_conservation_laws,
//         scaled_condition_estimate (J_r scaled to the states' units, rows to max-abs 1:
//         what decides "singular"), sensitivity_message (why no dx*/dθ),
//         sensitivity_fallback (how dx*/dθ was computed instead of the linear solve: forward
//         integration where J_r is singular).
// Without a steady state the exit status is 1 and stderr names the model and the reason; the
// stats file is still written.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "core/cli/arguments.h"
#include "core/cli/command_setup.h"
#include "core/cli/commands.h"
#include "core/cli/csv_writer.h"
#include "core/cli/stats_json.h"
#include "core/common/errors.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/steady_state_task.h"

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

const std::vector<OptionSpec>& steadyStateOptions() {
  static const std::vector<OptionSpec> specs = {
      {"--method", "newton|simulation|auto",
       "auto (default): Newton, then simulation; simulation: simulation, then Newton; newton: "
       "Newton only"},
      {"--set", "ID=VALUE",
       "override a parameter, species initial value or compartment size; repeatable", true},
      {"--rtol", "R", "relative tolerance of the convergence criterion (default 1e-8)"},
      {"--atol", "A", "absolute tolerance of the convergence criterion, in the units of the output (a species in concentration: of its concentration; default 1e-12)"},
      {"--accept-negative", "", "accept a steady state with negative species"},
      {"--accept-unstable", "", "accept an unstable steady state"},
      {"--out", "FILE.csv", "write id,value rows (outputs, then d(state)/d(parameter))"},
      {"--stats", "FILE.json", "write statistics and diagnostics as one JSON object"},
      noCacheOption(),
      {"--help", "", "show this help"},
  };
  return specs;
}

void writeCsv(const fs::path& file, const tasks::SteadyStateResult& r) {
  std::ofstream out(file);
  if (!out) throw Error(file.string() + ": cannot open for writing");
  out << "id,value\n";
  for (std::size_t k = 0; k < r.columns.size(); ++k)
    out << csvField(r.columns[k]) << "," << formatNumber(r.values[k]) << "\n";
  const Eigen::MatrixXd& s = r.solution.sensitivities;
  for (Eigen::Index c = 0; c < s.cols(); ++c) {
    if (s.col(c).cwiseAbs().maxCoeff() == 0.0) continue;
    for (Eigen::Index i = 0; i < s.rows(); ++i)
      out << csvField("d(" + r.stateIds[static_cast<std::size_t>(i)] + ")/d(" +
                      r.parameterIds[static_cast<std::size_t>(c)] + ")")
          << "," << formatNumber(s(i, c)) << "\n";
  }
  if (!out) throw Error(file.string() + ": write failed");
}

}  // namespace

int runSteadyState(std::span<const std::string> args) {
  const Arguments a("steadystate", steadyStateOptions(), args);
  if (a.has("--help")) {
    std::cout << "usage: sensode steadystate MODEL.xml [options]\n\n"
              << Arguments::helpText(steadyStateOptions());
    return 0;
  }
  applyCacheOption(a);
  const auto usage = [](const std::string& m) { return UsageError("steadystate: " + m); };
  const std::string modelPath = a.onlyPositional("MODEL.xml");
  tasks::SteadyStateOptions options;
  if (const auto m = a.string("--method")) {
    const auto method = steadystate::steadyStateMethodFromString(*m);
    if (!method) throw usage("--method: '" + *m + "' is not one of newton, simulation, auto");
    options.method = *method;
  }
  options.rtol = a.number("--rtol", options.rtol);
  options.atol = a.number("--atol", options.atol);
  options.acceptNegative = a.has("--accept-negative");
  options.acceptUnstable = a.has("--accept-unstable");
  if (const auto why = options.validate()) throw usage(*why);
  std::vector<std::pair<std::string, double>> overrides;
  for (const std::string& item : a.strings("--set")) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw usage("--set: '" + item + "' is not ID=VALUE");
    const auto v = Arguments::parseDouble(item.substr(eq + 1));
    if (!v) throw usage("--set " + item.substr(0, eq) + ": '" + item.substr(eq + 1) +
                        "' is not a number");
    overrides.emplace_back(item.substr(0, eq), *v);
  }
  const auto outFile = a.string("--out");
  const auto statsFile = a.string("--stats");
  checkFiles(modelPath, {outFile, statsFile});
  const auto compiled = loadCommandModel(modelPath, overrides).model;
  tasks::SteadyStateProblem problem;
  problem.model = compiled;
  problem.overrides = overrides;
  const tasks::SteadyStateResult r = tasks::runSteadyState(problem, options);
  const steadystate::SteadyStateSolution& s = r.solution;

  if (statsFile) {
    JsonObject json;
    json.add("method", steadystate::toString(options.method)).add("wall_seconds", r.wallSeconds);
    // newton_iterations counts the steady-state Newton iterations plus the integrator's.
    integrators::IntegratorStats stats = s.integratorStats;
    stats.newtonIterations += s.newtonIterations;
    addIntegratorStats(json, stats);
    std::string laws;
    for (const auto& l : s.conservationLaws) laws += (laws.empty() ? "" : "; ") + l;
    json.add("status", tasks::toString(r.status))
        .add("found", s.found)
        .add("found_by", steadystate::toString(s.foundBy))
        .add("path", s.path)
        .add("fallback_reason", s.fallbackReason)
        .add("reason", s.reason)
        .add("steady_state_newton_iterations", s.newtonIterations)
        .add("newton_runs", s.newtonRuns)
        .add("simulated_time", s.simulatedTime)
        .add("residual_norm", s.residualNorm)
        .add("newton_step_norm", s.newtonStepNorm)
        .add("condition_estimate", s.conditionEstimate)
        .add("max_real_eigenvalue", s.maxRealEigenvalue)
        .add("stable", s.stable)
        .add("negative", s.negative)
        .add("n_conservation_laws", static_cast<long>(s.conservationLaws.size()))
        .add("conservation_laws", laws)
        .add("sensitivity_message", s.sensitivityMessage)
        .add("sensitivity_fallback", s.sensitivityFallback)
        .add("scaled_condition_estimate", s.scaledConditionEstimate)
        .add("n_states", compiled->nx())
        .add("n_parameters", compiled->np())
        .add("model", modelPath)
        .add("message", r.message);
    json.write(*statsFile);
  }
  if (r.status != tasks::SteadyStateResult::Status::Success)
    throw Error(modelPath + ": " + tasks::toString(r.status) + ": " + r.message);
  if (outFile) writeCsv(*outFile, r);

  std::ostream& o = std::cout;
  o << "steady state found by " << steadystate::toString(s.foundBy) << " (" << s.path << ")\n";
  if (!s.fallbackReason.empty()) o << "fallback because " << s.fallbackReason << "\n";
  o << "newton iterations " << s.newtonIterations << ", simulation steps " << s.simulationSteps
    << "\n";
  for (const auto& l : s.conservationLaws) o << "conservation law  " << l << "\n";
  o << "cond(J_r) ~ " << formatNumber(s.conditionEstimate) << " (scaled "
    << formatNumber(s.scaledConditionEstimate) << "), max Re(eigenvalue) "
    << formatNumber(s.maxRealEigenvalue) << (s.stable ? " (stable)" : " (not stable)") << "\n";
  if (!s.sensitivityFallback.empty()) o << "fallback     " << s.sensitivityFallback << "\n";
  if (!s.sensitivityMessage.empty()) o << s.sensitivityMessage << "\n";
  for (std::size_t k = 0; k < r.columns.size() && k < 10; ++k)
    o << "  " << r.columns[k] << " = " << formatNumber(r.values[k]) << "\n";
  if (r.columns.size() > 10) o << "  ... (" << r.columns.size() - 10 << " more)\n";
  return 0;
}

}  // namespace sensode::cli
