// SPDX-License-Identifier: MIT
// Writes one generated mass-action network (tests/bench/network_generator.h) as OUT_DIR/model.xml,
// the SBML half of the benchmark PEtab problem that scripts/make-network-problem.py builds around
// it. A separate executable because the generator is C++/libSBML and the PEtab tables are easier
// to write in Python; the network is a pure function of (species, seed), so the file is
// reproducible.
//
//   write_network_problem OUT_DIR [--species N] [--seed S]
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/bench/network_generator.h"

namespace {

int usage() {
  std::fprintf(stderr, "usage: write_network_problem OUT_DIR [--species N (default 500)] "
                       "[--seed S (default the generator's)]\n");
  return 2;
}

// A whole non-negative number, or an error that names the option and the value.
unsigned long long number(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-')
    throw std::runtime_error(option + ": '" + text + "' is not a whole number of 0 or more");
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  sensode::bench::NetworkOptions options;
  options.species = 500;  // the benchmark's size, not the generator's default of 100
  std::filesystem::path outDir;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool hasValue = i + 1 < argc;
      if (arg == "--species" && hasValue) {
        const unsigned long long species = number(arg, argv[++i]);
        if (species > 1000000) throw std::runtime_error("--species: at most 1000000");
        options.species = static_cast<int>(species);
      } else if (arg == "--seed" && hasValue) {
        options.seed = static_cast<std::uint64_t>(number(arg, argv[++i]));
      } else if (arg == "--help" || arg == "-h") {
        usage();
        return 0;
      } else if (!arg.empty() && arg[0] != '-' && outDir.empty()) {
        outDir = arg;
      } else {
        return usage();
      }
    }
    if (outDir.empty() || options.species < 1) return usage();
    std::filesystem::create_directories(outDir);
    const auto file = outDir / "model.xml";
    const auto summary = sensode::bench::writeMassActionNetwork(options, file);
    // One parseable line: the Python script reads the counts from it rather than re-parsing SBML.
    std::printf("wrote %s species=%d reactions=%d reversible=%d parameters=%d seed=%llu\n",
                file.string().c_str(), summary.species, summary.reactions, summary.reversible,
                summary.parameters, static_cast<unsigned long long>(options.seed));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_network_problem: %s\n", e.what());
    return 1;
  }
  return 0;
}
