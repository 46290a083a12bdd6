// SPDX-License-Identifier: MIT
// sensode estimate PROBLEM.yaml [--starts N] [--seed S] [--method auto|ls|qn]
//                  [--gradient forward|adjoint|ssasa|fd] [--profile ID,...] [--threads T]
//                  [--max-iterations K] [--ftol F] [--gtol G] [--xtol X] [--rtol R] [--atol A]
//                  [--no-start-values] [--global screen|ess|none] [--screen K]
//                  [--global-evaluations E] [--global-local K] [--polish K]
//                  [--acceleration on|off] [--continue-stalled on|off]
//                  [--forward-integrator odesd|cvodes] [--out DIR] [--resume DIR]
//
// Fits the estimated parameters of a PEtab problem (core/estimation/estimation.h): a multistart
// of local optimisations from a seeded Latin hypercube in the bounds (plus the table's nominal
// values as start 0 unless --no-start-values; the sampled starts chosen by the global phase:
// --global screen, the best of --screen K times as many points by objective; --global ess, the
// best mutually distant points of a scatter search of E objective evaluations; with --polish,
// the best K continued at tighter tolerances; a start that stalls continues at rtol / 100, then
// / 1e4, unless --continue-stalled off), the statistics at
// the best fit and the profile likelihoods of --profile parameters. Prints the parameter table;
// with --out DIR writes
//   parameters.csv   per parameter: value, SE, Wald CI (on the scale and linear), bounds,
//                    profile interval
//   multistart.csv   per start (sorted by objective): status, objective, iterations,
//                    evaluations, seconds, start and final point (scale)
//   profile_<id>.csv per profiled parameter: value (scale, linear), objective, threshold,
//                    converged, every parameter
//   summary.json     objectives (best, nominal), success rate, timing, χ², FIM rank and
//                    eigenvalues, forward integrator, fallbacks, and where the model's
//                    evaluation ran (native, native_tier, native_cache,
//                    native_from_first_evaluation: stats_json.h)
//   problem.yaml     the PEtab problem with the best fit as its nominal values (its parameter
//                    table rewritten, the other files copied: core/petab/problem_writer.h), so
//                    that `sensode gradient DIR/problem.yaml` evaluates the best fit
//   run.txt, plan.txt, starts/*.txt, command.txt  the run store (core/estimation/run_store.h),
//                    written as the run goes: each start's record as soon as it finishes
// Progress: one stderr line per finished start. Ctrl-C or SIGTERM cancels: the starts finished
// so far are written and the command exits with status 1; `--resume DIR` (or the same command
// again) continues from DIR without computing the finished starts again. Under `mpirun -n N`
// (a build with MPI) rank 0 hands the starts to the other ranks (estimate_distributed.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/cli/arguments.h"
#include "core/cli/command_setup.h"
#include "core/cli/commands.h"
#include "core/cli/csv_writer.h"
#include "core/cli/estimate_distributed.h"
#include "core/cli/stats_json.h"
#include "core/common/errors.h"
#include "core/estimation/estimation.h"
#include "core/estimation/fitted_problem.h"
#include "core/estimation/run_store.h"

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t interrupted = 0;
extern "C" void onInterrupt(int) { interrupted = 1; }

const std::vector<OptionSpec>& estimateOptions() {
  static const std::vector<OptionSpec> specs = {
      {"--starts", "N", "local optimisations (default 20)"},
      {"--seed", "S", "seed of the Latin hypercube of starts (default 1)"},
      {"--screen", "K", "the screen (implies --global screen unless --global is given): start "
                        "from the best N of K x N Latin-hypercube points ranked by their "
                        "objective (N: the sampled starts; default 50; 0: no screen)"},
      {"--global", "screen|ess|none", "global phase that chooses the starts: the screen "
                                      "(--screen), enhanced scatter search on objective values "
                                      "(--global-evaluations), or none (default screen)"},
      {"--global-evaluations", "E", "objective evaluations of the scatter search (default 1000 "
                                    "per estimated parameter)"},
      {"--global-local", "K", "local optimisations inside the scatter search every K "
                              "generations, one per thread, at most 100 iterations each (their "
                              "evaluations count towards E; default 0: none)"},
      {"--polish", "K", "continue the best K distinct starts by L-BFGS, then LM, with rtol and "
                        "atol divided by 100, ftol and xtol by 1e4 (default 2; 0: none)"},
      {"--continue-stalled", "on|off", "a start that stalls continues at rtol and atol divided "
                                       "by 100, and if it stalls again lower, by 1e4 (not below "
                                       "rtol 1e-12; default on)"},
      {"--method", "auto|ls|qn", "optimiser: least squares (bounded Levenberg-Marquardt), "
                                 "quasi-Newton (NLopt L-BFGS), or auto (default: ls when the "
                                 "objective is a sum of squares)"},
      {"--gradient", "forward|adjoint|ssasa|fd", "gradient of the quasi-Newton objective "
                                                 "(default forward)"},
      {"--forward-integrator", "odesd|cvodes",
       "time courses and forward sensitivities by odeSD (default; CVODES computes any "
       "evaluation odeSD fails, and the summary's fallback line counts them) or by CVODES"},
      {"--profile", "ID,...", "profile likelihoods of these parameters"},
      {"--threads", "T", "worker threads (default: the number of cores)"},
      {"--worker-timeout", "S",
       "under MPI: a worker rank that computes a unit and sends no sign of life for S seconds "
       "is taken as lost and its unit goes to another rank (default 60; 0: never). Only when "
       "the launcher keeps the job after a rank dies: srun --no-kill, or mpirun --mca "
       "orte_enable_recovery 1"},
      {"--max-iterations", "K", "per start (least squares: per phase, up to two per start; "
                                "default 500)"},
      {"--ftol", "F", "relative objective change that ends a start (default 1e-8)"},
      {"--gtol", "G", "projected-gradient max-norm that ends a start (default 1e-6)"},
      {"--xtol", "X", "relative step that ends a start (default 1e-8)"},
      {"--acceleration", "on|off",
       "geodesic acceleration of the least-squares (LM) steps (default off)"},
      {"--rtol", "R", "relative tolerance of the time courses (default 1e-8)"},
      {"--atol", "A", "absolute tolerance of the time courses (default 1e-10)"},
      {"--no-start-values", "", "every start from the Latin hypercube (no start at the nominal "
                                "values)"},
      {"--out", "DIR", "write parameters.csv, multistart.csv, profile_<id>.csv, summary.json "
                       "problem.yaml (the PEtab problem at the best fit with copies of its "
                       "files) and the run store, each start as it finishes (DIR is created if "
                       "missing; a DIR holding a run of the same problem and options continues "
                       "it, one of others is refused)"},
      {"--resume", "DIR", "continue the run in DIR (killed, cancelled, out of time) with its "
                          "problem and options; finished starts are not computed again"},
      noCacheOption(),
      {"--help", "", "show this help"},
  };
  return specs;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::ofstream openOut(const fs::path& file) {
  std::ofstream out(file);
  if (!out) throw Error(file.string() + ": cannot open for writing");
  return out;
}

void writeParameters(const fs::path& file, const estimation::EstimationResult& r) {
  std::ofstream out = openOut(file);
  out << "parameterId,scale,estimated,value,se,ci_lower,ci_upper,value_linear,ci_lower_linear,"
         "ci_upper_linear,lower_bound,upper_bound,profile_lower,profile_upper\n";
  const estimation::FitStatistics& s = r.statistics;
  std::size_t k = 0;  // index among the fitted parameters (statistics' columns)
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    const estimation::EstimatedParameter& p = r.parameters[i];
    const double v = r.best[i];
    const bool stats = p.estimate && s.available;
    const auto at = [&](const std::vector<double>& list) {
      return stats ? formatNumber(list[k]) : std::string("nan");
    };
    double profileLower = NAN, profileUpper = NAN;
    for (const estimation::Profile& pr : r.profiles)
      if (pr.parameterId == p.id) {
        profileLower = pr.lower;
        profileUpper = pr.upper;
      }
    out << csvField(p.id) << "," << petab::toString(p.scale) << "," << (p.estimate ? 1 : 0)
        << "," << formatNumber(v) << "," << at(s.standardErrors) << "," << at(s.lower) << ","
        << at(s.upper) << "," << formatNumber(petab::fromScale(p.scale, v)) << ","
        << at(s.lowerLinear) << "," << at(s.upperLinear) << "," << formatNumber(p.lower) << ","
        << formatNumber(p.upper) << "," << formatNumber(profileLower) << ","
        << formatNumber(profileUpper) << "\n";
    if (p.estimate) ++k;
  }
  if (!out) throw Error(file.string() + ": write failed");
}

void writeMultistart(const fs::path& file, const estimation::EstimationResult& r) {
  std::ofstream out = openOut(file);
  out << "rank,start,status,objective,start_objective,iterations,objective_evaluations,"
         "gradient_evaluations,seconds";
  for (const auto& p : r.parameters) out << "," << csvField("start_" + p.id);
  for (const auto& p : r.parameters) out << "," << csvField("final_" + p.id);
  out << ",message\n";
  for (std::size_t i = 0; i < r.starts.size(); ++i) {
    const estimation::StartResult& s = r.starts[i];
    out << i + 1 << "," << s.index << "," << estimation::toString(s.status) << ","
        << formatNumber(s.objective) << "," << formatNumber(s.startObjective) << ","
        << s.iterations << "," << s.objectiveEvaluations << "," << s.gradientEvaluations << ","
        << formatNumber(s.wallSeconds);
    for (double v : s.start) out << "," << formatNumber(v);
    for (double v : s.parameters) out << "," << formatNumber(v);
    out << "," << csvField(s.message) << "\n";
  }
  if (!out) throw Error(file.string() + ": write failed");
}

void writeProfile(const fs::path& file, const estimation::EstimationResult& r,
                  const estimation::Profile& p) {
  std::ofstream out = openOut(file);
  out << "value,value_linear,objective,threshold,converged";
  for (const auto& q : r.parameters) out << "," << csvField(q.id);
  out << "\n";
  const petab::Scale scale = r.parameters[static_cast<std::size_t>(p.parameter)].scale;
  for (const estimation::ProfilePoint& q : p.points) {
    out << formatNumber(q.value) << "," << formatNumber(petab::fromScale(scale, q.value)) << ","
        << formatNumber(q.objective) << "," << formatNumber(p.threshold) << ","
        << (q.converged ? 1 : 0);
    for (double v : q.parameters) out << "," << formatNumber(v);
    out << "\n";
  }
  if (!out) throw Error(file.string() + ": write failed");
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

void writeSummary(const fs::path& file, const std::string& yaml,
                  const estimation::EstimationOptions& o, const estimation::EstimationResult& r) {
  // Success: starts within 1e-3 of the best objective (the benchmark's criterion).
  int successes = 0, converged = 0;
  long gradientEvaluations = 0;
  std::vector<double> convergedSeconds;
  for (const auto& s : r.starts) {
    if (std::abs(s.objective - r.bestObjective) <= 1e-3) ++successes;
    if (s.status == estimation::StartStatus::Converged) {
      ++converged;
      convergedSeconds.push_back(s.wallSeconds);
    }
    gradientEvaluations += s.gradientEvaluations;
  }
  std::vector<double> eigenvalues(r.statistics.eigenvalues.data(),
                                  r.statistics.eigenvalues.data() + r.statistics.eigenvalues.size());
  JsonObject json;
  json.add("problem", yaml)
      .add("status", estimation::toString(r.status))
      .add("message", r.message)
      .add("optimizer", estimation::toString(r.optimizer))
      .add("optimizer_reason", r.optimizerReason)
      .add("gradient", petab::toString(o.gradient))
      .add("forward_integrator", integrators::toString(r.forwardIntegrator))
      .add("cvodes_fallback_evaluations", r.cvodesFallbacks)
      .add("starts", static_cast<long>(r.starts.size()))
      .add("seed", static_cast<long>(o.seed))
      .add("screened_points", r.screenedPoints)
      .add("screen_seconds", r.screenSeconds)
      .add("global_phase", estimation::toString(r.global))
      .add("global_evaluations", r.globalEvaluations)
      .add("global_seconds", r.globalSeconds)
      .add("global_generations", r.globalGenerations)
      .add("global_local_searches", r.globalLocalSearches)
      .add("global_best_objective", r.globalBest)
      .add("polished_starts", o.polish)
      .add("continue_stalled", o.continueStalled)
      .add("best_objective", r.bestObjective)
      .add("nominal_objective", r.nominalObjective)
      .add("best_minus_nominal", r.bestObjective - r.nominalObjective)
      .add("best_and_nominal_rtol", r.nominalObjectiveRtol)
      .add("nominal_objective_at_run_rtol", r.nominalObjectiveRunRtol)
      .add("successes", successes)
      .add("success_rate", r.starts.empty() ? 0.0 : double(successes) / double(r.starts.size()))
      .add("converged_starts", converged)
      .add("median_seconds_per_converged_start", median(convergedSeconds))
      .add("gradient_evaluations", gradientEvaluations)
      .add("wall_seconds", r.wallSeconds)
      .add("chi_square", r.statistics.chiSquare)
      .add("measurements", r.statistics.measurements)
      .add("degrees_of_freedom", r.statistics.degreesOfFreedom)
      .add("fim_rank", r.statistics.rank)
      .add("fim_condition_number", r.statistics.conditionNumber)
      .add("fim_eigenvalues", eigenvalues)
      .add("statistics_message", r.statistics.message)
      .add("fallbacks", r.fallbacks);
  if (r.model) addNativeStats(json, *r.model);
  json.write(file);
}

}  // namespace

int runEstimate(std::span<const std::string> given) {
  const std::vector<std::string> args = resolveResume(given);
  const Arguments a("estimate", estimateOptions(), args);
  if (a.has("--help")) {
    std::cout << "usage: sensode estimate PROBLEM.yaml [options]\n\n"
              << Arguments::helpText(estimateOptions());
    return 0;
  }
  applyCacheOption(a);
  const std::string yaml = a.onlyPositional("PROBLEM.yaml");
  estimation::EstimationOptions o;
  o.starts = static_cast<int>(a.integer("--starts", o.starts, 1, 100000));
  o.seed = static_cast<std::uint64_t>(a.integer("--seed", 1, 0, 1L << 62));
  o.threads = static_cast<int>(a.integer("--threads", 0, 0, 1024));
  o.maxIterations = static_cast<int>(a.integer("--max-iterations", o.maxIterations, 1, 1000000));
  o.useStartValues = !a.has("--no-start-values");
  o.screen = static_cast<int>(a.integer("--screen", o.screen, 0, 10000));
  o.polish = static_cast<int>(a.integer("--polish", o.polish, 0, 100000));
  o.globalEvaluations = a.integer("--global-evaluations", o.globalEvaluations, 0, 1L << 40);
  o.globalLocalEvery = static_cast<int>(a.integer("--global-local", o.globalLocalEvery, 0, 1000000));
  // --screen K alone means the screen (also if the default global phase changes).
  if (a.has("--screen") && !a.has("--global")) o.global = estimation::GlobalPhase::Screen;
  if (const auto g = a.string("--global")) {
    const auto parsed = estimation::globalPhaseFromString(*g);
    if (!parsed) throw UsageError("estimate: --global: '" + *g + "' is not one of screen, ess, none");
    o.global = *parsed;
  }
  o.functionTolerance = a.number("--ftol", o.functionTolerance);
  o.gradientTolerance = a.number("--gtol", o.gradientTolerance);
  o.parameterTolerance = a.number("--xtol", o.parameterTolerance);
  if (const auto v = a.string("--acceleration")) {
    if (*v != "on" && *v != "off")
      throw UsageError("estimate: --acceleration: '" + *v + "' is not one of on, off");
    o.geodesicAcceleration = *v == "on";
  }
  if (const auto v = a.string("--continue-stalled")) {
    if (*v != "on" && *v != "off")
      throw UsageError("estimate: --continue-stalled: '" + *v + "' is not one of on, off");
    o.continueStalled = *v == "on";
  }
  o.objective.integrator.rtol = a.number("--rtol", o.objective.integrator.rtol);
  o.objective.integrator.atol = a.number("--atol", o.objective.integrator.atol);
  if (!(o.objective.integrator.rtol > 0) || !(o.objective.integrator.atol > 0))
    throw UsageError("estimate: --rtol and --atol must be > 0");
  if (const auto m = a.string("--method")) {
    const auto parsed = estimation::optimizerFromString(*m);
    if (!parsed) throw UsageError("estimate: --method: '" + *m + "' is not one of auto, ls, qn");
    o.optimizer = *parsed;
  }
  if (const auto g = a.string("--gradient")) {
    const auto parsed = petab::gradientMethodFromString(*g);
    if (!parsed || *parsed == petab::GradientMethod::None)
      throw UsageError("estimate: --gradient: '" + *g +
                       "' is not one of forward, adjoint, ssasa, fd");
    o.gradient = *parsed;
  }
  if (const auto f = a.string("--forward-integrator")) {
    const auto parsed = integrators::methodFromString(*f);
    if (!parsed)
      throw UsageError("estimate: --forward-integrator: '" + *f + "' is not one of odesd, cvodes");
    o.objective.forwardIntegrator = *parsed;
  }
  if (const auto p = a.string("--profile")) o.profileParameters = splitList(*p);
  const auto outDir = a.string("--out");
  if (!fs::is_regular_file(yaml)) throw Error(yaml + ": no such file");
  if (outDir && !fs::is_directory(*outDir)) {
    // A new folder for the results, as mkdir -p would make it (before the run, not after it).
    std::error_code ec;
    fs::create_directories(*outDir, ec);
    if (ec || !fs::is_directory(*outDir))
      throw Error(*outDir + ": cannot create the folder for the results (" + ec.message() + ")");
  }
  if (outDir) petab::checkProblemFolder(fs::absolute(yaml), fs::absolute(*outDir));

  // SIGTERM too: what a batch system sends at a job's time limit (docs/slurm/estimate.sbatch).
  interrupted = 0;
  const auto previous = std::signal(SIGINT, onInterrupt);
  const auto previousTerm = std::signal(SIGTERM, onInterrupt);
  const double workerTimeout = a.number("--worker-timeout", 60);
  if (!(workerTimeout >= 0))
    throw UsageError("estimate: --worker-timeout: seconds must be 0 or more");
  EstimateExecution execution(o.threads, workerTimeout);
  if (execution.isWorker())
    return execution.runWorker({fs::absolute(yaml)}, o, [] { return interrupted != 0; });
  // The run store in DIR: created (mkdir -p) before the run, not after it.
  std::optional<estimation::RunStore> store;
  int resumed = 0;
  if (outDir) {
    store.emplace(*outDir);
    if (!store->hasRun()) {
      store->writeFile("command.txt", commandText(args));
    } else if (store->plan() && store->readFile("command.txt") == commandText(args)) {
      // (Another command is checked against the stored run's fingerprint by runEstimation.)
      resumed = static_cast<int>(store->finishedStarts().size());
      std::fprintf(stderr, "resuming %s: %d of %d starts finished there\n", outDir->c_str(),
                   resumed, o.starts);
      if (const auto said = store->readFile("notices.txt"))
        std::fprintf(stderr, "before, rank 0 said:\n%s", said->c_str());
    }
    // Also in the folder: when mpirun ends the job after a rank died, it stops forwarding rank
    // 0's stderr, so the folder is where its last words (the units it lost) can be read.
    execution.setNotice([&store](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
      store->writeFile("notices.txt", store->readFile("notices.txt").value_or("") + line + "\n");
    });
  }
  if (!execution.describe().empty())
    std::fprintf(stderr, "starts on %s\n", execution.describe().c_str());

  ProgressMonitor monitor;
  monitor.callback = [](const ProgressInfo&) {
    return interrupted ? Decision::Abort : Decision::Continue;
  };
  const int total = o.starts;
  int finished = resumed;
  const estimation::EstimationResult r = estimation::runEstimation(
      {fs::absolute(yaml)}, o, monitor,
      [&](const estimation::StartResult& s) {
        ++finished;
        std::fprintf(stderr, "start %d/%d (#%d): %s, objective %.10g after %d iterations, %.1f s\n",
                     finished, total, s.index, estimation::toString(s.status), s.objective,
                     s.iterations, s.wallSeconds);
      },
      {execution.executor(), store ? &*store : nullptr});
  std::signal(SIGINT, previous);
  std::signal(SIGTERM, previousTerm);
  if (!execution.traffic().empty()) std::fprintf(stderr, "MPI: %s\n", execution.traffic().c_str());
  if (r.status == estimation::EstimationResult::Status::InvalidInput ||
      r.status == estimation::EstimationResult::Status::Failure)
    throw Error(r.message + (r.details.empty() ? "" : " (" + r.details + ")"));
  // The fallbacks are in the summary below ("fallback ..." lines on stdout).

  if (outDir) {
    const fs::path dir(*outDir);
    writeMultistart(dir / "multistart.csv", r);
    writeSummary(dir / "summary.json", yaml, o, r);
    if (!r.best.empty()) writeParameters(dir / "parameters.csv", r);
    for (const estimation::Profile& p : r.profiles)
      writeProfile(dir / ("profile_" + p.parameterId + ".csv"), r, p);
    if (!r.best.empty()) estimation::writeFittedProblem(fs::absolute(yaml), r, dir);
  }
  std::printf("optimizer %s (%s)\n", estimation::toString(r.optimizer), r.optimizerReason.c_str());
  std::printf("integrator %s%s\n", integrators::toString(r.forwardIntegrator),
              r.cvodesFallbacks > 0
                  ? (" (CVODES in " + std::to_string(r.cvodesFallbacks) + " evaluations)").c_str()
                  : "");
  for (const auto& f : r.fallbacks) std::printf("fallback %s\n", f.c_str());
  if (r.global != estimation::GlobalPhase::None)
    std::printf("global phase %s: %ld objective evaluations in %.1f s%s, best objective %.12g\n",
                estimation::toString(r.global), r.globalEvaluations, r.globalSeconds,
                r.global == estimation::GlobalPhase::ScatterSearch
                    ? (" (" + std::to_string(r.globalGenerations) + " generations, " +
                       std::to_string(r.globalLocalSearches) + " local searches)")
                          .c_str()
                    : "",
                r.globalBest);
  std::printf("best objective %.12g (nominal %.12g, both at rtol %.3g) from %zu starts in %.1f s\n",
              r.bestObjective, r.nominalObjective, r.nominalObjectiveRtol, r.starts.size(),
              r.wallSeconds);
  if (!r.statistics.message.empty()) std::printf("%s\n", r.statistics.message.c_str());
  std::printf("%-28s %-6s %14s %12s %14s %14s\n", "parameter", "scale", "value", "SE", "CI low",
              "CI high");
  std::size_t k = 0;
  for (std::size_t i = 0; i < r.parameters.size() && !r.best.empty(); ++i) {
    const auto& p = r.parameters[i];
    const bool stats = p.estimate && r.statistics.available;
    std::printf("%-28s %-6s %14.6g %12.4g %14.6g %14.6g%s\n", p.id.c_str(),
                petab::toString(p.scale), r.best[i], stats ? r.statistics.standardErrors[k] : NAN,
                stats ? r.statistics.lower[k] : NAN, stats ? r.statistics.upper[k] : NAN,
                p.estimate ? "" : "  (fixed)");
    if (p.estimate) ++k;
  }
  for (const auto& p : r.profiles)
    std::printf("profile %s: [%g, %g] (%s)\n", p.parameterId.c_str(), p.lower, p.upper,
                p.message.c_str());
  if (r.status == estimation::EstimationResult::Status::UserAbort) {
    std::cout.flush();
    std::cerr << "sensode: " << yaml << ": cancelled; the " << r.starts.size()
              << " starts finished so far are in the output"
              << (outDir ? "; 'sensode estimate --resume " + *outDir + "' continues the run"
                         : std::string())
              << "\n";
    return 1;
  }
  return 0;
}

}  // namespace sensode::cli
