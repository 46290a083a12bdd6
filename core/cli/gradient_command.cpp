// SPDX-License-Identifier: MIT
// sensode gradient PROBLEM.yaml [--method ssasa|adjoint|forward|fd] [--params FILE.tsv]
//                  [--out FILE.csv] [--stats FILE.json]
//
// The PEtab objective (negative log-likelihood, core/petab/objective.h) and its gradient with
// respect to the estimated parameters on their PEtab scales.
//   --params  TSV with header `parameterId<TAB>value`: values of estimated parameters ON THEIR
//             SCALE (as the CSV's value column); parameters not listed keep their nominal value.
//   CSV       `parameterId,value,gradient`, one row per estimated parameter (value on its scale).
//   JSON      method, wall_seconds, objective, half_weighted_squares, n_parameters,
//             simulations, steady_states, notes, plus the contract's integrator keys (zero:
//             the runs are many; counts are in simulations/steady_states).
// Methods (objective.h): ssasa = backward adjoint over the time course + the steady-state
// adjoint linear solves (Eqs. 15, 17); adjoint = backward integration through the equilibrations
// too; forward = forward sensitivities; fd = central differences.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "core/cli/arguments.h"
#include "core/cli/command_setup.h"
#include "core/cli/commands.h"
#include "core/cli/csv_writer.h"
#include "core/cli/stats_json.h"
#include "core/common/errors.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

const std::vector<OptionSpec>& gradientOptions() {
  static const std::vector<OptionSpec> specs = {
      {"--method", "ssasa|adjoint|forward|fd", "gradient method (default forward)"},
      {"--rtol", "R", "relative tolerance of the time courses (default 1e-10)"},
      {"--atol", "A", "absolute tolerance of the time courses (default 1e-12)"},
      {"--fd-step", "H", "fd: central-difference step on the parameter scale (default 1e-5)"},
      {"--params", "FILE.tsv", "parameterId<TAB>value rows, values on the parameter scale"},
      {"--out", "FILE.csv", "write parameterId,value,gradient"},
      {"--stats", "FILE.json", "write the objective and statistics as one JSON object"},
      {"--help", "", "show this help"},
  };
  return specs;
}

std::vector<double> readParams(const fs::path& file, const petab::Problem& problem,
                               std::vector<double> q) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot open");
  const std::vector<int> est = petab::estimatedParameters(problem);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < est.size(); ++i)
    index[problem.parameters[static_cast<std::size_t>(est[i])].id] = i;
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos)
      throw Error(file.string() + ": line " + std::to_string(lineNo) + ": expected id<TAB>value");
    const std::string id = line.substr(0, tab), text = line.substr(tab + 1);
    if (lineNo == 1 && id == "parameterId") continue;
    const auto it = index.find(id);
    if (it == index.end())
      throw Error(file.string() + ": line " + std::to_string(lineNo) + ": '" + id +
                  "' is not an estimated parameter of the problem");
    const auto v = Arguments::parseDouble(text);
    if (!v || !std::isfinite(*v))
      throw Error(file.string() + ": line " + std::to_string(lineNo) + ": '" + text +
                  "' is not a finite number");
    q[it->second] = *v;
  }
  return q;
}

}  // namespace

int runGradient(std::span<const std::string> args) {
  const Arguments a("gradient", gradientOptions(), args);
  if (a.has("--help")) {
    std::cout << "usage: sensode gradient PROBLEM.yaml [options]\n\n"
              << Arguments::helpText(gradientOptions());
    return 0;
  }
  const std::string yaml = a.onlyPositional("PROBLEM.yaml");
  petab::GradientMethod method = petab::GradientMethod::Forward;
  if (const auto m = a.string("--method")) {
    const auto parsed = petab::gradientMethodFromString(*m);
    if (!parsed || *parsed == petab::GradientMethod::None)
      throw UsageError("gradient: --method: '" + *m + "' is not one of ssasa, adjoint, forward, fd");
    method = *parsed;
  }
  const auto outFile = a.string("--out"), statsFile = a.string("--stats");
  checkFiles(yaml, {outFile, statsFile});
  const auto start = std::chrono::steady_clock::now();
  const petab::Problem problem = petab::loadProblem(fs::absolute(yaml));
  std::vector<double> q = petab::nominalScaledParameters(problem);
  if (const auto p = a.string("--params")) q = readParams(*p, problem, q);
  petab::ObjectiveOptions options;
  options.integrator.rtol = a.number("--rtol", options.integrator.rtol);
  options.integrator.atol = a.number("--atol", options.integrator.atol);
  options.fdStep = a.number("--fd-step", options.fdStep);
  const petab::ObjectiveResult r = petab::evaluateObjective(problem, q, method, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (outFile) {
    std::ofstream out(*outFile);
    if (!out) throw Error(*outFile + ": cannot open for writing");
    out << "parameterId,value,gradient\n";
    for (std::size_t i = 0; i < r.parameterIds.size(); ++i)
      out << csvField(r.parameterIds[i]) << "," << formatNumber(r.parameters[i]) << ","
          << formatNumber(r.gradient[i]) << "\n";
    if (!out) throw Error(*outFile + ": write failed");
  }
  if (statsFile) {
    JsonObject json;
    json.add("method", petab::toString(method)).add("wall_seconds", wall);
    addIntegratorStats(json, {});
    json.add("objective", r.objective)
        .add("half_weighted_squares", r.halfWeightedSquares)
        .add("n_parameters", static_cast<long>(r.parameterIds.size()))
        .add("simulations", r.simulations)
        .add("steady_states", r.steadyStates)
        .add("notes", r.notes)
        .add("problem", yaml);
    json.write(*statsFile);
  }
  std::cout << "objective " << formatNumber(r.objective) << "  (" << r.parameterIds.size()
            << " estimated parameters, gradient by " << petab::toString(method) << ": " << r.notes
            << ")\n";
  return 0;
}

}  // namespace sensode::cli
