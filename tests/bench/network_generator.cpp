// SPDX-License-Identifier: MIT
#include "tests/bench/network_generator.h"

#include <sbml/SBMLTypes.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

namespace sensode::bench {
namespace {

// libSBML's classes live in a namespace only when it was built with one.
namespace sbml {
using ASTNode = ::LIBSBML_CPP_NAMESPACE_QUALIFIER ASTNode;
using Compartment = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Compartment;
using Model = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Model;
using Parameter = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Parameter;
using Reaction = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Reaction;
using SBMLDocument = ::LIBSBML_CPP_NAMESPACE_QUALIFIER SBMLDocument;
using SBMLWriter = ::LIBSBML_CPP_NAMESPACE_QUALIFIER SBMLWriter;
using Species = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Species;
using SpeciesReference = ::LIBSBML_CPP_NAMESPACE_QUALIFIER SpeciesReference;
ASTNode* parseL3Formula(const char* formula) {
  return ::LIBSBML_CPP_NAMESPACE_QUALIFIER SBML_parseL3Formula(formula);
}
}  // namespace sbml

// Uniform doubles in [0, 1) from the raw 64-bit output (std::mt19937_64's sequence is fixed by
// the standard; the standard distributions are not, so they are avoided).
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  int index(int n) { return static_cast<int>(uniform() * n); }
  bool chance(double probability) { return uniform() < probability; }
  double logUniform(double lo, double hi) {
    return lo * std::exp(uniform() * std::log(hi / lo));
  }

 private:
  std::mt19937_64 engine_;
};

std::string speciesId(int i) { return "S" + std::to_string(i); }

// Mass-action term "cell*k*A*B" for a side given as (species, stoichiometry) pairs.
std::string massAction(const std::string& k, const std::vector<std::pair<int, int>>& side) {
  std::string term = "cell*" + k;
  for (const auto& [s, nu] : side) {
    term += "*" + speciesId(s);
    if (nu != 1) term += "^" + std::to_string(nu);
  }
  return term;
}

void addReferences(sbml::Reaction& r, const std::vector<std::pair<int, int>>& side,
                   bool reactants) {
  for (const auto& [s, nu] : side) {
    sbml::SpeciesReference* ref = reactants ? r.createReactant() : r.createProduct();
    ref->setSpecies(speciesId(s));
    ref->setStoichiometry(nu);
    ref->setConstant(true);
  }
}

// One or two distinct species not in `exclude`, as (species, stoichiometry) pairs; `first`
// (when >= 0) is always the first one. A repeated draw becomes stoichiometry 2.
std::vector<std::pair<int, int>> drawSide(Random& rng, int n, int count, int first,
                                          const std::vector<std::pair<int, int>>& exclude) {
  std::vector<std::pair<int, int>> side;
  auto excluded = [&](int s) {
    for (const auto& e : exclude)
      if (e.first == s) return true;
    return false;
  };
  for (int k = 0; k < count; ++k) {
    int s = (k == 0 && first >= 0) ? first : rng.index(n);
    for (int tries = 0; excluded(s) && tries < 64; ++tries) s = rng.index(n);
    if (excluded(s)) continue;
    if (!side.empty() && side.front().first == s) {
      side.front().second += 1;
    } else {
      side.emplace_back(s, 1);
    }
  }
  return side;
}

}  // namespace

std::string generateMassActionNetwork(const NetworkOptions& options, NetworkSummary* summary) {
  if (options.species < 2) throw std::invalid_argument("network needs at least 2 species");
  const int n = options.species;
  const int numReactions =
      std::max(n, static_cast<int>(std::lround(options.reactionsPerSpecies * n)));
  Random rng(options.seed);
  NetworkSummary counts;
  counts.species = n;
  counts.reactions = numReactions;

  sbml::SBMLDocument doc(3, 2);
  sbml::Model* model = doc.createModel();
  model->setId("mass_action_network_" + std::to_string(n));
  sbml::Compartment* cell = model->createCompartment();
  cell->setId("cell");
  cell->setSize(1.0);
  cell->setSpatialDimensions(3.0);
  cell->setConstant(true);
  for (int i = 0; i < n; ++i) {
    sbml::Species* s = model->createSpecies();
    s->setId(speciesId(i));
    s->setCompartment("cell");
    s->setInitialConcentration(0.1 + 9.9 * rng.uniform());
    s->setHasOnlySubstanceUnits(false);
    s->setBoundaryCondition(false);
    s->setConstant(false);
  }
  auto addParameter = [&](const std::string& id, double value) {
    sbml::Parameter* p = model->createParameter();
    p->setId(id);
    p->setValue(value);
    p->setConstant(true);
    counts.parameters++;
  };

  for (int r = 0; r < numReactions; ++r) {
    // The first n reactions start at species r, so no species is left without a reaction.
    const int first = r < n ? r : -1;
    const int numReactants = rng.chance(options.bimolecularFraction) ? 2 : 1;
    const auto reactants = drawSide(rng, n, numReactants, first, {});
    const bool degradation = rng.chance(options.degradationFraction);
    const int numProducts = degradation ? 0 : (rng.chance(0.5) ? 2 : 1);
    const auto products = drawSide(rng, n, numProducts, -1, reactants);
    const bool reversible = !products.empty() && rng.chance(options.reversibleFraction);

    const std::string id = "R" + std::to_string(r);
    const std::string kf = "kf_" + std::to_string(r), kr = "kr_" + std::to_string(r);
    addParameter(kf, rng.logUniform(0.01, 10.0));
    std::string formula = massAction(kf, reactants);
    if (reversible) {
      addParameter(kr, rng.logUniform(0.01, 10.0));
      formula += " - " + massAction(kr, products);
      counts.reversible++;
    }

    sbml::Reaction* reaction = model->createReaction();
    reaction->setId(id);
    reaction->setReversible(reversible);
    addReferences(*reaction, reactants, true);
    addReferences(*reaction, products, false);
    std::unique_ptr<sbml::ASTNode> math(sbml::parseL3Formula(formula.c_str()));
    if (!math) throw std::runtime_error("network generator: cannot parse '" + formula + "'");
    reaction->createKineticLaw()->setMath(math.get());
  }

  sbml::SBMLWriter writer;
  std::unique_ptr<char, void (*)(void*)> text(writer.writeSBMLToString(&doc), std::free);
  if (!text) throw std::runtime_error("network generator: libSBML could not write the model");
  if (summary) *summary = counts;
  return std::string(text.get());
}

NetworkSummary writeMassActionNetwork(const NetworkOptions& options,
                                      const std::filesystem::path& file) {
  NetworkSummary summary;
  const std::string xml = generateMassActionNetwork(options, &summary);
  FILE* out = std::fopen(file.c_str(), "wb");
  if (!out) throw std::runtime_error("network generator: cannot write " + file.string());
  const bool ok = std::fwrite(xml.data(), 1, xml.size(), out) == xml.size();
  if (std::fclose(out) != 0 || !ok)
    throw std::runtime_error("network generator: cannot write " + file.string());
  return summary;
}

}  // namespace sensode::bench
