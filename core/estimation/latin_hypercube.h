// SPDX-License-Identifier: MIT
// Latin hypercube samples in a box (internal to core/estimation): each of the n coordinates
// takes every one of the `count` equal strata of its interval exactly once, at a uniformly
// random point within the stratum, the strata paired across coordinates by random
// permutations (McKay, Beckman & Conover 1979). Seeded std::mt19937_64 with hand-written
// uniform draws and shuffles, so one seed gives the same points with every standard library.
#pragma once

#include <cstdint>
#include <vector>

namespace sensode::estimation::detail {

// `count` points (each lower.size() long) with lower[i] <= x[i] <= upper[i].
std::vector<std::vector<double>> latinHypercube(const std::vector<double>& lower,
                                                const std::vector<double>& upper, int count,
                                                std::uint64_t seed);

}  // namespace sensode::estimation::detail
