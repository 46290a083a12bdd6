// SPDX-License-Identifier: MIT
// The phases of a run besides the starts as work units (internal to core/estimation): the
// screen's chunks of candidate points, the polish of each chosen start, and each direction of
// each profile. A phase is a text (what any process needs, besides the problem and the options,
// to compute any of its units) and a unit count; a unit's result is a text too (work_units.h's
// forms, numbers with %.17g). So the threads of one process, MPI ranks (each worker receives
// the phase text once and then unit indices, and runs a unit with its own --threads) and the
// run store share one vocabulary, and a unit's result does not depend on where it ran.
//
// Phase texts start with `phase screen|points|polish|profile`; the start plan (work_units.h) does not,
// which is how an MPI worker tells them apart.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/estimation/profile_likelihood.h"
#include "core/estimation/run_start.h"
#include "core/estimation/work_units.h"
#include "core/estimation/worker_pool.h"

namespace sensode::estimation::detail {

// Candidate points per screen unit: small enough for even progress and a quick cancel, large
// enough that an MPI message carries a few milliseconds of work or more.
inline constexpr int kScreenChunk = 16;

// The screen of screenCandidates(setup, count, factor, seed) (start_screen.h) with the setup's
// gradient and noise residuals as given.
std::string screenPhase(int count, int factor, std::uint64_t seed, const FitSetup& setup);
// The objective at given points (the scatter search's batches), kScreenChunk points a unit;
// results as the screen's.
std::string pointsPhase(const std::vector<std::vector<double>>& points, const FitSetup& setup);
// The polish of `starts` (unit k polishes starts[k]) under `plan`.
std::string polishPhase(const StartPlan& plan, const std::vector<StartResult>& starts);
// The profiles at the optimum `best` (full point) of the free positions `profiled`
// (setup.free indices): unit 2i walks profiled[i] down, unit 2i + 1 up.
std::string profilePhase(const StartPlan& plan, const std::vector<double>& best,
                         double bestObjective, double threshold, const std::vector<int>& profiled);

// A phase text read back, with what its units need: built on every process that computes
// units from (text, its own prepared fit, the options).
class PhaseComputer {
 public:
  enum class Kind { Screen, Polish, Profile };
  // `setup` is the prepared fit's (gradient and noise residuals not yet decided), `options` the
  // run's (kept by reference). Throws Error("the phase: ...") for a text it cannot read.
  PhaseComputer(std::string text, const std::filesystem::path& yaml, const FitSetup& setup,
                const EstimationOptions& options);

  Kind kind() const { return kind_; }
  const std::string& text() const { return text_; }
  int units() const { return units_; }
  // The screen's candidates or the given points (Kind::Screen), unit k holding
  // [k·kScreenChunk, …).
  const std::vector<std::vector<double>>& candidates() const { return candidates_; }

  // Unit `unit` on `problems` (the screen's points spread over its threads; the other units use
  // its first problem). The result text, or "cancelled" when `monitor` cancelled it.
  // `pointDone` is called after each screened point or profile point (from any thread).
  std::string compute(int unit, const WorkerProblems& problems, const ProgressMonitor& monitor,
                      const std::function<void()>& pointDone = {}) const;
  // How many points (screened, or profile points) a unit's result text holds: the progress a
  // unit computed elsewhere (an MPI worker) brings.
  int pointsIn(const std::string& result) const;

 private:
  std::string text_;
  Kind kind_ = Kind::Screen;
  int units_ = 0;
  const EstimationOptions* options_ = nullptr;
  FitSetup setup_;
  std::vector<std::vector<double>> candidates_;      // screen
  std::optional<StartContext> context_;              // polish, profile
  std::vector<StartResult> starts_;                  // polish
  std::vector<double> best_;                         // profile
  double bestObjective_ = 0, threshold_ = 0;         // profile
  std::vector<int> profiled_;                        // profile
};

// The values of a screen unit's points (its result text), in candidate order.
std::vector<double> screenValuesFromText(const std::string& text, const std::string& what);

}  // namespace sensode::estimation::detail
