// SPDX-License-Identifier: MIT
// The results folder of an estimation as it runs (`sensode estimate --out DIR`): what a killed
// run leaves for `--resume DIR`, and what File ▸ Open estimation results reads.
//
//   DIR/run.txt          the fingerprint: Sensode's version, a hash of every PEtab file's bytes,
//                        the options that change results (`key value` lines)
//   DIR/plan.txt         the StartPlan (work_units.h): optimiser, gradient, the start points
//   DIR/starts/NNNNNN.txt one record per finished start (work_units.h), written as it finishes
//   DIR/polished/NNNNNN.txt start NNNNNN after the polish (the phase after the gather)
//   DIR/profiles/ID.down.txt, ID.up.txt  each direction of each profile as it finishes
//
// Every file is written atomically: to a temporary file in the same folder, flushed to disk
// (fsync), then renamed over the name, so a crash never leaves half a record and a concurrent
// reader sees the old file or the new one. Resume = the plan minus the stored starts.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/estimation/work_units.h"

namespace sensode::estimation {

// Ordered `key value` pairs; keys are unique.
using RunFingerprint = std::vector<std::pair<std::string, std::string>>;

// The fingerprint of a run of `options` on `problem`: a change in any of these changes the
// result. Threads and the output folder are not in it (they do not).
RunFingerprint runFingerprint(const petab::Problem& problem, const EstimationOptions& options);

// The options a fingerprint describes (the inverse of runFingerprint; threads 0). Throws Error
// naming `what` and the key that cannot be read.
EstimationOptions optionsFromFingerprint(const RunFingerprint& fingerprint, const std::string& what);
// The value of `key`, or nullopt.
std::optional<std::string> fingerprintValue(const RunFingerprint& fingerprint,
                                            const std::string& key);

// How `stored` and `current` differ, as one phrase naming the first difference ("seed is 1
// there, 2 here"), or nullopt when they are equal.
std::optional<std::string> fingerprintDifference(const RunFingerprint& stored,
                                                 const RunFingerprint& current);

class RunStore {
 public:
  // The folder (created when missing). Throws Error naming it when it cannot be created.
  explicit RunStore(std::filesystem::path dir);
  const std::filesystem::path& dir() const { return dir_; }

  // Whether run.txt exists (a run was started here).
  bool hasRun() const;
  RunFingerprint fingerprint() const;  // run.txt; empty when there is none
  void saveFingerprint(const RunFingerprint& fingerprint) const;

  std::optional<StartPlan> plan() const;
  void savePlan(const StartPlan& plan) const;

  // The stored starts, by index. Throws Error naming the record that cannot be read.
  std::vector<StartResult> finishedStarts() const;
  void saveStart(const StartResult& start) const;
  std::vector<StartResult> polishedStarts() const;
  void savePolished(const StartResult& start) const;
  // direction: -1 (down) or +1 (up).
  std::optional<detail::ProfileDirection> profileDirection(const std::string& id,
                                                           int direction) const;
  void saveProfileDirection(const std::string& id, int direction,
                            const detail::ProfileDirection& d) const;

  // Writes `content` to DIR/name atomically (see above). Throws Error naming the file.
  void writeFile(const std::string& name, const std::string& content) const;
  // DIR/name's content; nullopt when missing.
  std::optional<std::string> readFile(const std::string& name) const;

 private:
  std::vector<StartResult> readStarts(const std::string& folder) const;
  std::filesystem::path dir_;
};

}  // namespace sensode::estimation
