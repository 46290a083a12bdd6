// SPDX-License-Identifier: MIT
// sensode gradient PROBLEM.yaml [--method ssasa|adjoint|forward|fd|none] [--params FILE.tsv]
//                  [--forward-integrator cvodes|odesd] [--adjoint-integrator odesd|cvodes]
//                  [--rtol R] [--atol A] [--fd-step H]
//                  [--all-methods] [--out FILE.csv] [--stats FILE.json] [--simulations FILE.tsv]
//
// The PEtab objective (negative log-likelihood, core/petab/objective.h) and its gradient with
// respect to the estimated parameters on their PEtab scales.
//   --params  TSV with header `parameterId<TAB>value`: values of estimated parameters ON THEIR
//             SCALE (as the CSV's value column); parameters not listed keep their nominal value.
//   CSV       `parameterId,value,gradient`, one row per estimated parameter (value on its scale).
//   --simulations  the PEtab simulation table: the measurement table's columns with the
//             simulated observable in column `simulation` (as the collection's simulatedData).
//   JSON      method, wall_seconds, evaluation_seconds (objective and gradient only), objective,
//             objective_without_priors, prior_term,
//             half_weighted_squares, n_parameters, n_states, n_conditions, n_measurements,
//             simulations, steady_states, notes, fallbacks, plus the contract's integrator keys
//             (zero: the runs are many; counts are in simulations/steady_states).
// Methods (objective.h): ssasa = backward adjoint over the time course + the steady-state
// adjoint linear solves (Eqs. 15, 17); adjoint = backward integration through the equilibrations
// too; forward = forward sensitivities; fd = central differences. Without --method the default
// (forward) falls back to ssasa, adjoint, then fd when it fails, and says so (stderr, notes and
// the JSON's `fallbacks`); an explicit --method runs that method only.
//   --all-methods  every method (forward by CVODES and by odeSD, adjoint, ssasa, fourth-order fd
//             with steps 1e-3, 1e-4, 1e-5 and "fd best" per component, gradient_check.h): one table of
//             status, seconds and max|g|, and the pairwise agreement
//             max|g_a − g_b| / max|g|; the CSV then has one gradient column per method.
#include <chrono>
#include <cmath>
#include <cstdio>
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
#include "core/petab/gradient_check.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

const std::vector<OptionSpec>& gradientOptions() {
  static const std::vector<OptionSpec> specs = {
      {"--method", "ssasa|adjoint|forward|fd|none", "gradient method (default forward, with "
                                                   "fallback; none: the objective only)"},
      {"--all-methods", "", "run every gradient method and print their agreement and timings"},
      {"--forward-integrator", "cvodes|odesd", "forward sensitivities by (default cvodes)"},
      {"--adjoint-integrator", "odesd|cvodes",
       "adjoint, ssasa: the time courses' adjoint by odeSD's discrete adjoint (default; CVODES "
       "where odeSD cannot, with a fallback line) or CVODES's continuous adjoint"},
      {"--rtol", "R", "relative tolerance of the time courses (default 1e-10)"},
      {"--atol", "A", "absolute tolerance of the time courses (default 1e-12)"},
      {"--fd-step", "H", "fd: central-difference step on the parameter scale (default 1e-5)"},
      {"--params", "FILE.tsv", "parameterId<TAB>value rows, values on the parameter scale"},
      {"--out", "FILE.csv", "write parameterId,value,gradient"},
      {"--simulations", "FILE.tsv", "write the simulated observable per measurement row"},
      {"--stats", "FILE.json", "write the objective and statistics as one JSON object"},
      noCacheOption(),
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

// The PEtab simulation table: one row per measurement, in the measurement table's order.
void writeSimulations(const std::string& file, const petab::Problem& problem,
                      const petab::ObjectiveResult& r) {
  std::ofstream out(file);
  if (!out) throw Error(file + ": cannot open for writing");
  out << "observableId\tpreequilibrationConditionId\tsimulationConditionId\tsimulation\ttime"
         "\tobservableParameters\tnoiseParameters\n";
  const auto list = [](const std::vector<petab::Value>& values) {
    std::string s;
    for (const petab::Value& v : values)
      s += (s.empty() ? "" : ";") + (v.isParameter() ? v.parameterId : formatNumber(v.number));
    return s;
  };
  for (std::size_t i = 0; i < problem.measurements.size(); ++i) {
    const petab::Measurement& m = problem.measurements[i];
    out << problem.observables[static_cast<std::size_t>(m.observable)].id << "\t"
        << (m.preequilibrationCondition >= 0
                ? problem.conditions[static_cast<std::size_t>(m.preequilibrationCondition)].id
                : "")
        << "\t" << problem.conditions[static_cast<std::size_t>(m.simulationCondition)].id << "\t"
        << formatNumber(r.simulated[i]) << "\t" << formatNumber(m.time) << "\t"
        << list(m.observableParameters) << "\t" << list(m.noiseParameters) << "\n";
  }
  if (!out) throw Error(file + ": write failed");
}

std::string cell(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

double maxAbs(const std::vector<double>& g) {
  double m = 0;
  for (double v : g) m = std::max(m, std::abs(v));
  return m;
}

int runAllMethods(const petab::Problem& problem, const std::vector<double>& q,
                  const petab::ObjectiveOptions& options, const std::string& yaml,
                  const std::optional<std::string>& outFile,
                  const std::optional<std::string>& statsFile) {
  petab::GradientCheckOptions co;
  co.objective = options;
  co.methods = {petab::GradientMethod::Forward, petab::GradientMethod::Adjoint,
                petab::GradientMethod::Ssasa};
  petab::GradientCheck check = petab::checkGradients(problem, q, co);
  // odeSD's direct sensitivities beside CVODES forward.
  petab::GradientCheckOptions odesd = co;
  odesd.objective.forwardIntegrator = integrators::Method::OdeSd;
  odesd.methods = {petab::GradientMethod::Forward};
  odesd.fdSteps.clear();
  petab::GradientCheck extra = petab::checkGradients(problem, q, odesd);
  check.runs.insert(check.runs.begin() + 1, extra.runs.front());
  const std::size_t n = check.runs.size();
  check.agreement.assign(n, std::vector<double>(n, std::nan("")));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (check.runs[a].ok && check.runs[b].ok)
        check.agreement[a][b] = petab::relativeDifference(check.runs[a].result.gradient,
                                                          check.runs[b].result.gradient);

  std::printf("objective %.12g  (%zu estimated parameters, rtol %g, atol %g)\n\n",
              check.objective, check.parameterIds.size(), options.integrator.rtol,
              options.integrator.atol);
  std::printf("%-14s %-7s %9s %11s  %s\n", "method", "status", "seconds", "max|g|", "notes");
  for (const auto& r : check.runs) {
    // A method that ran another one instead (the adjoint on an event model) says so first.
    std::string notes = r.ok ? r.result.notes : r.error;
    if (r.ok)
      for (const auto& f : r.result.fallbacks) notes = "FALLBACK: " + f + "; " + notes;
    std::printf("%-14s %-7s %9.3f %11s  %s\n", r.label.c_str(), r.ok ? "ok" : "failed",
                r.seconds, r.ok ? cell(maxAbs(r.result.gradient)).c_str() : "-", notes.c_str());
  }
  std::printf("\nagreement max|g_a - g_b| / max|g|\n%-14s", "");
  for (const auto& r : check.runs) std::printf(" %9.9s", r.label.c_str());
  std::printf("\n");
  for (std::size_t a = 0; a < n; ++a) {
    std::printf("%-14s", check.runs[a].label.c_str());
    for (std::size_t b = 0; b < n; ++b) std::printf(" %9s", cell(check.agreement[a][b]).c_str());
    std::printf("\n");
  }
  if (outFile) {
    std::ofstream out(*outFile);
    if (!out) throw Error(*outFile + ": cannot open for writing");
    out << "parameterId,value";
    for (const auto& r : check.runs) out << "," << csvField(r.label);
    out << "\n";
    for (std::size_t i = 0; i < check.parameterIds.size(); ++i) {
      out << csvField(check.parameterIds[i]) << "," << formatNumber(q[i]);
      for (const auto& r : check.runs)
        out << "," << (r.ok ? formatNumber(r.result.gradient[i]) : std::string("nan"));
      out << "\n";
    }
    if (!out) throw Error(*outFile + ": write failed");
  }
  if (statsFile) {
    JsonObject json;
    json.add("method", "all").add("problem", yaml).add("objective", check.objective);
    addIntegratorStats(json, {});
    for (const auto& r : check.runs) {
      json.add("seconds_" + r.label, r.seconds);
      if (!r.ok) json.add("error_" + r.label, r.error);
    }
    json.add("analytic_spread", check.analyticSpread()).add("fd_spread", check.fdSpread());
    json.write(*statsFile);
  }
  return 0;
}

}  // namespace

int runGradient(std::span<const std::string> args) {
  const Arguments a("gradient", gradientOptions(), args);
  if (a.has("--help")) {
    std::cout << "usage: sensode gradient PROBLEM.yaml [options]\n\n"
              << Arguments::helpText(gradientOptions());
    return 0;
  }
  applyCacheOption(a);
  const std::string yaml = a.onlyPositional("PROBLEM.yaml");
  petab::GradientMethod method = petab::GradientMethod::Forward;
  const bool fallback = !a.has("--method");
  if (const auto m = a.string("--method")) {
    const auto parsed = petab::gradientMethodFromString(*m);
    if (!parsed)
      throw UsageError("gradient: --method: '" + *m +
                       "' is not one of ssasa, adjoint, forward, fd, none");
    method = *parsed;
  }
  const auto outFile = a.string("--out"), statsFile = a.string("--stats"),
             simFile = a.string("--simulations");
  checkFiles(yaml, {outFile, statsFile, simFile});
  const auto start = std::chrono::steady_clock::now();
  const petab::Problem problem = petab::loadProblem(fs::absolute(yaml));
  std::vector<double> q = petab::nominalScaledParameters(problem);
  if (const auto p = a.string("--params")) q = readParams(*p, problem, q);
  petab::ObjectiveOptions options;
  options.integrator.rtol = a.number("--rtol", options.integrator.rtol);
  options.integrator.atol = a.number("--atol", options.integrator.atol);
  options.fdStep = a.number("--fd-step", options.fdStep);
  if (const auto f = a.string("--forward-integrator")) {
    const auto kind = integrators::methodFromString(*f);
    if (!kind) throw UsageError("gradient: --forward-integrator: '" + *f + "' is not cvodes or odesd");
    options.forwardIntegrator = *kind;
  }
  if (const auto f = a.string("--adjoint-integrator")) {
    const auto kind = integrators::methodFromString(*f);
    if (!kind || (*kind != integrators::Method::OdeSd && *kind != integrators::Method::Cvodes))
      throw UsageError("gradient: --adjoint-integrator: '" + *f + "' is not odesd or cvodes");
    options.adjointIntegrator = *kind;
  }
  if (!(options.integrator.rtol > 0) || !(options.integrator.atol > 0) || !(options.fdStep > 0))
    throw UsageError("gradient: --rtol, --atol and --fd-step must be > 0");
  if (a.has("--all-methods")) return runAllMethods(problem, q, options, yaml, outFile, statsFile);
  const auto evaluationStart = std::chrono::steady_clock::now();
  // A failure while evaluating (no steady state, an integration failure) names a condition, not
  // a file: the problem's yaml file leads the message, as the command-line contract asks.
  const petab::ObjectiveResult r = [&] {
    try {
      return fallback ? petab::evaluateWithFallback(problem, q, method, options)
                      : petab::evaluateObjective(problem, q, method, options);
    } catch (const Error& e) {
      throw Error(yaml + ": " + e.what());
    }
  }();
  const double evaluation =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - evaluationStart).count();
  // Finite inputs can still overflow: a measurement of -1e308 squares to inf in its residual,
  // and the gradient becomes inf − inf = NaN. Such a result is an error, not a CSV of NaN.
  for (std::size_t i = 0; i < r.gradient.size() && i < r.parameterIds.size(); ++i) {
    if (std::isfinite(r.objective) && std::isfinite(r.gradient[i])) continue;
    throw Error(yaml + ": the objective is " + formatNumber(r.objective) +
                " and its gradient with respect to '" + r.parameterIds[i] + "' is " +
                formatNumber(r.gradient[i]) +
                ": a measurement, noise value or observable is so large that its squared residual "
                "overflows");
  }
  for (const auto& f : r.fallbacks) std::cerr << "sensode: " << f << "\n";
  if (simFile) writeSimulations(*simFile, problem, r);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (outFile) {
    std::ofstream out(*outFile);
    if (!out) throw Error(*outFile + ": cannot open for writing");
    out << "parameterId,value,gradient\n";
    for (std::size_t i = 0; i < r.parameterIds.size(); ++i)
      out << csvField(r.parameterIds[i]) << "," << formatNumber(r.parameters[i]) << ","
          << (r.gradient.empty() ? std::string("nan") : formatNumber(r.gradient[i])) << "\n";
    if (!out) throw Error(*outFile + ": write failed");
  }
  if (statsFile) {
    JsonObject json;
    json.add("method", petab::toString(r.method))
        .add("wall_seconds", wall)
        .add("evaluation_seconds", evaluation);  // without loading and compiling the problem
    integrators::IntegratorStats stats;
    stats.fallbacks = r.fallbacks;
    addIntegratorStats(json, stats);
    addNativeStats(json, *problem.model);
    json.add("objective", r.objective)
        .add("objective_without_priors", r.objective - r.priorTerm)
        .add("prior_term", r.priorTerm)
        .add("half_weighted_squares", r.halfWeightedSquares)
        .add("n_parameters", static_cast<long>(r.parameterIds.size()))
        .add("n_states", static_cast<long>(problem.model->nx()))
        .add("n_conditions", static_cast<long>(problem.conditions.size()))
        .add("n_measurements", static_cast<long>(problem.measurements.size()))
        .add("simulations", r.simulations)
        .add("steady_states", r.steadyStates)
        .add("notes", r.notes)
        .add("problem", yaml);
    json.write(*statsFile);
  }
  // --method none computes no gradient: say so rather than "gradient by none: ".
  const std::string how = r.method == petab::GradientMethod::None
                              ? std::string("no gradient")
                              : "gradient by " + std::string(petab::toString(r.method)) +
                                    (r.notes.empty() ? "" : ": " + r.notes);
  std::cout << "objective " << formatNumber(r.objective) << "  (" << r.parameterIds.size()
            << " estimated parameters, " << how << ")\n";
  if (r.priorTerm != 0)
    std::cout << "objective without priors " << formatNumber(r.objective - r.priorTerm)
              << "  (prior term " << formatNumber(r.priorTerm) << ")\n";
  return 0;
}

}  // namespace sensode::cli
