// SPDX-License-Identifier: MIT
// Random mass-action reaction networks of any size, written as SBML Level 3 Version 2 through
// libSBML: the scaling series of the load-time benchmark, and large models for tests.
//
// The network is a pure function of its options (the seed included), so a size always yields
// the same file. One compartment `cell` (size 1); species S0..S{n-1} with initial
// concentrations in [0.1, 10]; about `reactionsPerSpecies · n` reactions, each with one or two
// reactants (bimolecular with probability `bimolecularFraction`) and zero to two products
// (zero = degradation), every species the first reactant of at least one reaction. Rate laws
// are mass action in concentrations times the compartment size, with global parameters
// kf_<r> (and kr_<r> for the `reversibleFraction` that are reversible) log-uniform in
// [0.01, 10].
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace sensode::bench {

struct NetworkOptions {
  int species = 100;
  double reactionsPerSpecies = 2.0;
  double bimolecularFraction = 0.5;
  double reversibleFraction = 0.3;
  double degradationFraction = 0.1;
  std::uint64_t seed = 20240601;
};

// Counts of what generateMassActionNetwork() produced.
struct NetworkSummary {
  int species = 0;
  int reactions = 0;
  int reversible = 0;
  int parameters = 0;
};

// The network as SBML L3V2 text.
std::string generateMassActionNetwork(const NetworkOptions& options,
                                      NetworkSummary* summary = nullptr);

// Writes the network to `file`; throws std::runtime_error when libSBML cannot write it.
NetworkSummary writeMassActionNetwork(const NetworkOptions& options,
                                      const std::filesystem::path& file);

}  // namespace sensode::bench
