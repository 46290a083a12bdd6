// SPDX-License-Identifier: MIT
#include "core/estimation/run_results.h"

#include <cmath>
#include <map>

#include "core/common/errors.h"
#include "core/estimation/fit_preparation.h"
#include "core/estimation/fit_statistics.h"
#include "core/estimation/profile_likelihood.h"

namespace sensode::estimation {

namespace fs = std::filesystem;

StoredRun readStoredRun(const fs::path& dir, const ProgressMonitor& monitor) {
  if (!fs::is_regular_file(dir / "run.txt"))
    throw Error(dir.string() +
                ": not an estimation results folder (no run.txt; `sensode estimate --out DIR` "
                "writes one)");
  const RunStore store(dir);
  StoredRun run;
  run.settings = store.fingerprint();
  run.options = optionsFromFingerprint(run.settings, (dir / "run.txt").string());
  run.plannedStarts = run.options.starts;
  // The problem: where the run read it, else a copy beside the results.
  fs::path yaml = fingerprintValue(run.settings, "problem").value_or(std::string());
  if (yaml.empty() || !fs::is_regular_file(yaml)) {
    if (!fs::is_regular_file(dir / "problem.yaml"))
      throw Error(dir.string() + ": the run's PEtab problem " + yaml.string() +
                  " is not on this machine (nor a problem.yaml in the folder)");
    yaml = dir / "problem.yaml";
  }
  run.problem.yamlFile = yaml;
  detail::PreparedFit fit = detail::prepareFit(yaml, run.options);
  EstimationResult& r = run.result;
  r.parameters = fit.parameters;
  // The files may have changed since the run: say so beside the results.
  if (const auto difference =
          fingerprintDifference(run.settings, runFingerprint(*fit.problem, run.options));
      difference && difference->find("problem is") != 0)
    r.fallbacks.push_back("the problem differs from the run's: " + *difference);

  const std::optional<StartPlan> plan = store.plan();
  if (!plan) throw Error(dir.string() + ": the run stopped before its starts were planned");
  reportPlan(*plan, run.options.objective.integrator.rtol, r);
  std::map<int, StartResult> starts;
  for (StartResult& s : store.finishedStarts())
    if (s.status != StartStatus::Cancelled) starts[s.index] = std::move(s);
  for (StartResult& s : store.polishedStarts()) starts[s.index] = std::move(s);
  for (auto& [index, s] : starts) r.starts.push_back(std::move(s));
  sortStartsByObjective(r.starts);
  if (r.starts.empty() || !std::isfinite(r.starts.front().objective))
    throw Error(dir.string() + ": no finished start with a finite objective yet");
  reportForwardIntegrator(run.options.objective.forwardIntegrator, r);
  r.best = r.starts.front().parameters;
  r.bestObjective = r.starts.front().objective;
  r.model = fit.problem->model;
  evaluateBestFit(*fit.problem, run.options, monitor, r);

  bool profilesComplete = true;
  const double z = detail::normalQuantile(0.5 * (1 + run.options.confidenceLevel));
  const double threshold = r.bestObjective + z * z / 2;
  for (int k : fit.profiled) {
    const int position = fit.setup.free[static_cast<std::size_t>(k)];
    const std::string& id = r.parameters[static_cast<std::size_t>(position)].id;
    const auto down = store.profileDirection(id, -1), up = store.profileDirection(id, 1);
    if (!down || !up) {
      profilesComplete = false;
      continue;
    }
    r.profiles.push_back(detail::assembleProfile(id, position,
                                                 r.best[static_cast<std::size_t>(position)],
                                                 r.best, r.bestObjective, threshold, *down, *up));
  }
  const int finished = static_cast<int>(starts.size());
  if (finished < run.plannedStarts || !profilesComplete) {
    r.status = EstimationResult::Status::UserAbort;
    r.message = std::to_string(finished) + " of " + std::to_string(run.plannedStarts) +
                " starts finished" + (profilesComplete ? "" : ", profiles incomplete") +
                " (an interrupted run: `sensode estimate --resume " + dir.string() +
                "` continues it)";
  }
  r.wallSeconds = 0;  // not the run's: the records hold each start's own time
  return run;
}

}  // namespace sensode::estimation
