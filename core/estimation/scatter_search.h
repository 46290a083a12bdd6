// SPDX-License-Identifier: MIT
// Global phase by enhanced scatter search (internal to core/estimation): eSS of Egea, Martí &
// Banga 2010 ("An evolutionary method for complex-process optimization", Comput. Oper. Res.
// 37:315), as in MEIGO's essm and pyPESTO's ESSOptimizer, but without its local solver: it only
// chooses the points the local optimisations start from. Why: on problems whose best basin is
// rare in the box (Elowitz: about 1 uniform start in 700 reaches it, docs/benchmarks/
// estimation.md) ranking a Latin hypercube (start_screen.h) does not find it; combining good
// points can — each generation samples between and beyond pairs of the reference set, so the
// search moves towards where good points are instead of sampling the box uniformly. Measured
// (2026-11-26, global phase): Elowitz met on 1 seed of 5 (the screen: 0), Brannmark a little
// lower, but on Crauste every start on a plateau 101 above the fit — so it is an option
// (--global ess), not the default.
//
// Objective values only (one simulation each, no sensitivities), in batches that the caller
// spreads over worker threads; on the parameters' scales (log10 for most) within the bounds.
// Every random draw comes from one seeded std::mt19937_64 in a fixed order and a batch's values
// are used by position, so one seed gives the same starts whatever the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace sensode::estimation::detail {

// Positions of the `count` smallest finite values, ascending (ties: the lower position first,
// so the choice does not depend on how threads finished). When fewer than `count` are finite,
// the rest are the non-finite positions in order (their starts are redrawn like any start
// where the objective fails). count > values.size() returns every position.
std::vector<int> bestCandidates(const std::vector<double>& values, int count);

// values[i] = the objective at points[i] (+inf where it cannot be evaluated); values has
// points.size() elements on entry.
using BatchObjective = std::function<void(const std::vector<std::vector<double>>& points,
                                          std::vector<double>& values)>;

// Local optimisations from `points` (in parallel), each point and value replaced by the local
// optimum's; a failed one leaves +inf. Returns the objective evaluations they used.
using BatchLocalSearch = std::function<long(std::vector<std::vector<double>>& points,
                                            std::vector<double>& values)>;

struct ScatterSearchSettings {
  // Objective evaluations; the search stops at the first batch boundary past it.
  long evaluations = 10000;
  int refsetSize = 0;  // 0: eSS's b with b(b − 1) ≈ 10 n (even, >= 4)
  int diverse = 0;     // initial Latin-hypercube points; 0: eSS's 10 n (at least 2 b)
  int stuckLimit = 20;  // generations without improvement before a member is replaced (eSS)
  // Smallest distance between two starts, as the RMS of the coordinate differences in units
  // of the box (0.1: a tenth of each range on average, 0.8 decades in an 8-decade box).
  double startDistance = 0.1;
  // Share of the starts taken from the best of the initial Latin hypercube (apart from the
  // others), the rest from every point the search saw. 0: tried at 0.5 with 1000 initial
  // points against Crauste's plateau, it did not help there and brought fewer starts to the
  // optimum on Boehm and Bruno (docs/benchmarks/estimation.md, 2026-11-26 global phase).
  double initialShare = 0;
  std::uint64_t seed = 1;
  // eSS's local phase (Egea et al. 2010 §2.4; pyPESTO's local_n2 and balance): every
  // `localEvery` generations, `localCount` local searches from the generation's children chosen
  // by rank in quality plus rank in distance from the earlier local optima (equal weights), the
  // optima put back as the children. 0: none. Their evaluations count towards the budget.
  int localEvery = 0;
  int localCount = 1;
};

struct ScatterSearchResult {
  std::vector<std::vector<double>> starts;  // `count` points, best first
  std::vector<double> values;               // the objective at each
  long evaluations = 0;
  int generations = 0;
  int localSearches = 0;
  double best = std::numeric_limits<double>::infinity();  // best objective seen
};

// Runs the search and returns `count` starts, sorted by value: (1 − initialShare)·count of the
// best points seen, each at least startDistance from those chosen before (the best point seen
// first), then the best initial points at that distance from all chosen (the distance halved
// when too few points are that far apart). `stop` (optional) is asked between batches.
ScatterSearchResult scatterSearch(const std::vector<double>& lower,
                                  const std::vector<double>& upper, int count,
                                  const ScatterSearchSettings& settings,
                                  const BatchObjective& objective,
                                  const std::function<bool()>& stop = {},
                                  const BatchLocalSearch& local = {});

// The positions of at most `count` points, by ascending finite value, each at RMS scaled
// distance >= minDistance from those chosen before (ties: lower position first).
std::vector<int> distinctBest(const std::vector<std::vector<double>>& points,
                              const std::vector<double>& values,
                              const std::vector<double>& lower, const std::vector<double>& upper,
                              int count, double minDistance);
// The same, extending `chosen`, among the positions below `limit`.
void extendDistinct(const std::vector<std::vector<double>>& points,
                    const std::vector<double>& values, const std::vector<double>& lower,
                    const std::vector<double>& upper, int count, double minDistance,
                    std::vector<int>& chosen, std::size_t limit);

}  // namespace sensode::estimation::detail
