// SPDX-License-Identifier: MIT
// Reads a results folder back (`sensode estimate --out DIR`, a cluster run, a killed run) into
// the EstimationResult a run in the process would have returned: what File ▸ Open estimation
// results shows. The starts, polished starts and profile directions come from the run store's
// records (run_store.h), the options from its fingerprint; the best fit's simulated observables
// and the statistics are evaluated again at the stored best point (one objective evaluation with
// forward sensitivities), which needs the PEtab problem: the run's own path, else DIR/problem.yaml.
#pragma once

#include <filesystem>
#include <string>

#include "core/estimation/estimation.h"
#include "core/estimation/run_store.h"

namespace sensode::estimation {

struct StoredRun {
  EstimationProblem problem;   // the yaml that was loaded
  EstimationOptions options;   // as the run had them (threads: 0)
  RunFingerprint settings;     // run.txt as written: the settings to show
  int plannedStarts = 0;
  // Success when every start finished (profiles included when asked for); UserAbort with a
  // message saying how much finished otherwise (the folder of an interrupted run).
  EstimationResult result;
};

// Throws Error naming DIR and what is missing or unreadable ("not an estimation results folder
// (no run.txt)", the problem that is not on this machine, a record that cannot be read).
StoredRun readStoredRun(const std::filesystem::path& dir, const ProgressMonitor& monitor = {});

}  // namespace sensode::estimation
