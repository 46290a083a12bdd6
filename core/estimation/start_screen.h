// SPDX-License-Identifier: MIT
// Start selection by a global screen (internal to core/estimation): sample `screen` × N Latin
// hypercube points in the bounds, evaluate only the objective at each (one simulation, no
// sensitivities: a few per cent of a local optimisation's cost per point), and start the N
// local optimisations from the N best. A uniform multistart spends most of its starts in
// basins far above the best fit (docs/benchmarks/estimation.md: Elowitz and Crauste reach the
// published optimum's basin from about 1 start in 60–120); ranking candidates by their
// objective is the screening step of e.g. Raue et al. 2013 and of scatter search's initial
// diversification (Villaverde et al. 2019). Also the scatter search's (scatter_search.h)
// objective and local searches on the problem's worker threads: the other global phase.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include "core/common/progress.h"
#include "core/estimation/fit_objective.h"
#include "core/estimation/local_optimizers.h"
#include "core/estimation/scatter_search.h"
#include "core/petab/petab_problem.h"

namespace sensode::estimation {
class StartExecutor;  // start_executor.h
}

namespace sensode::estimation::detail {

class PhaseComputer;  // phase_units.h

// bestCandidates (the positions of the smallest values): scatter_search.h.

// The candidates screenStarts evaluates: count × factor Latin hypercube points in setup's
// bounds, from a seed derived from `seed` (so they are not the unscreened run's starts plus
// more).
std::vector<std::vector<double>> screenCandidates(const FitSetup& setup, int count, int factor,
                                                  std::uint64_t seed);

struct ScreenedStarts {
  std::vector<std::vector<double>> starts;  // `count` points of free parameters, best first
  std::vector<double> objectives;           // the screened objective at each (inf: failed)
  int screened = 0;                         // candidates evaluated
};

// The screen as units (phase_units.h: `screen`, made from screenPhase) on `executor` — its
// threads or MPI ranks: the values do not depend on where each unit ran. The best `count` of
// the candidates; `evaluated` once per evaluated candidate. A cancel (`stopped`, or the
// monitor) ends it early: the unevaluated candidates count as failed.
ScreenedStarts screenStarts(StartExecutor& executor, const petab::Problem& problem,
                            const PhaseComputer& screen, int count, const ProgressMonitor& monitor,
                            const std::function<bool()>& stopped,
                            const std::function<void()>& evaluated);

// Evaluates the objective at screenCandidates(setup, count, factor, seed) on `threads` threads
// (each with its own copy of the problem, as the multistart does) and returns the best `count`. The same seed gives the same candidates and,
// for deterministic integrations, the same choice whatever the thread count. A Cancelled from
// `monitor` ends the screen early: the unevaluated candidates count as failed. `evaluated` is
// called after each candidate (from the worker threads), for progress.
ScreenedStarts screenStarts(const std::filesystem::path& yaml, const petab::Problem& problem,
                            const FitSetup& setup, int count, int factor, std::uint64_t seed,
                            int threads, const ProgressMonitor& monitor,
                            const std::function<void()>& evaluated = {});

// The scatter search (scatter_search.h) on this problem's objective; with settings.localEvery
// > 0 its local searches by least squares or L-BFGS at `local`, as many at a time as threads.
// `stopped` is asked between batches and before each evaluation.
// Its batches of objective evaluations are phase units on `executor` (threads or MPI ranks);
// its local searches run on this process's `threads`.
ScatterSearchResult scatterSearchStarts(StartExecutor& executor, const std::filesystem::path& yaml,
                                        const petab::Problem& problem, const FitSetup& setup,
                                        int count, ScatterSearchSettings settings,
                                        bool leastSquares, const LocalSettings& local,
                                        int threads, const ProgressMonitor& monitor,
                                        const std::function<bool()>& stopped);

}  // namespace sensode::estimation::detail
