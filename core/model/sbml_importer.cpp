// SPDX-License-Identifier: MIT
// SBML → model::Model through libSBML. The phases, in order:
//   1. read (XML and SBML syntax errors; required packages libSBML does not know);
//   2. refuse packages Sensode cannot honour, flatten comp models;
//   3. SBML consistency check (errors only);
//   4. (no construct of SBML core is refused any more: algebraic rules and fast reactions are
//      imported and become a differential-algebraic system, docs/dae.md);
//   5. copy the model, translating MathML into ExprPool expressions (function definitions
//      expanded inline, local parameters renamed, every symbol checked to be defined).
#include "core/model/sbml_importer.h"

#include <sbml/SBMLTypes.h>
#include <sbml/conversion/ConversionProperties.h>
#include <sbml/extension/SBasePlugin.h>
#include <sbml/packages/fbc/extension/FbcModelPlugin.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <numbers>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/common/cancellation.h"
#include "core/common/errors.h"
#include "core/model/libsbml_names.h"
#include "core/model/xml_nesting.h"

LIBSBML_CPP_NAMESPACE_USE

namespace sensode::model {
namespace {

using symbolic::Op;

// The value SBML Level 3 specifies for csymbol avogadro.
constexpr double kAvogadro = 6.02214179e23;

// Packages whose constructs never change the ODE semantics, or that are handled here (comp is
// flattened; fbc is refused only when it defines a flux-balance problem; l3v2extendedmath is
// libSBML's pseudo-package for L3V2 math inside L3V1 documents).
bool isHarmlessPackage(const std::string& name) {
  return name == "comp" || name == "fbc" || name == "layout" || name == "render" ||
         name == "groups" || name == "l3v2extendedmath";
}

// libSBML messages span several lines and end with a newline; ours are one line.
std::string oneLine(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Errors about which units an attribute names. Sensode ignores units altogether, and valid suite
// cases trip them (00959 names areaUnits="area" without defining it), so they do not count.
bool isUnitsOnlyError(unsigned int id) {
  return id == DanglingUnitReference || (id >= L3TimeUnitsOnModel && id <= L3ExtentUnitsOnModel) ||
         id == L3V2SubstanceUnitsOnModel || id == ZeroDimensionalCompartmentUnits ||
         (id >= Invalid1DCompartmentUnits && id <= Invalid3DCompartmentUnits) ||
         id == HasOnlySubsNoSpatialUnits || id == NoSpatialUnitsInZeroD ||
         (id >= SpatialUnitsInOneD && id <= InvalidSpeciesSusbstanceUnits) ||
         id == InvalidParameterUnits || id == TimeUnitsEvent;
}

// libSBML messages are "<rule text>\nReference: <spec section>\n <details>\n": the short message
// and the details say what is wrong with this file; the rule text restates the specification.
std::string describe(const SBMLError& e) {
  const std::string message = e.getMessage();
  std::string details;
  if (const std::size_t ref = message.find("Reference:"); ref != std::string::npos) {
    if (const std::size_t eol = message.find('\n', ref); eol != std::string::npos) {
      details = oneLine(message.substr(eol + 1));
    }
  } else {
    details = oneLine(message);
  }
  std::string text = oneLine(e.getShortMessage());
  if (!text.empty() && text.back() == '.') text.pop_back();
  if (!details.empty() && details != text) text += (text.empty() ? "" : ": ") + details;
  return text;
}

// Undefined names in math: the math conversion below reports them itself, naming the element and
// the symbol ("undefined symbol 'k3' in math") rather than restating the specification. It sees
// all math that matters; an undefined name in a constraint (ignored: it cannot change a
// trajectory) goes unreported.
bool isUndefinedNameError(unsigned int id) {
  return id == ApplyCiMustBeModelComponent || id == ApplyCiMustBeUserFunction;
}

bool counts(const SBMLError& e) {
  const bool severe =
      e.getSeverity() == LIBSBML_SEV_ERROR || e.getSeverity() == LIBSBML_SEV_FATAL;
  return severe && !isUnitsOnlyError(e.getErrorId()) && !isUndefinedNameError(e.getErrorId());
}

// The id that names `object` in messages: its own, or that of the nearest ancestor with one.
// Rules and initial assignments are named by the quantity they set.
std::string elementName(const SBase* object) {
  for (const SBase* e = object; e != nullptr; e = e->getParentSBMLObject()) {
    if (const auto* rule = dynamic_cast<const lsb::Rule*>(e); rule && rule->isSetVariable()) {
      return rule->getVariable();
    }
    if (const auto* ia = dynamic_cast<const lsb::InitialAssignment*>(e); ia && ia->isSetSymbol()) {
      return ia->getSymbol();
    }
    if (const auto* ea = dynamic_cast<const ::EventAssignment*>(e); ea && ea->isSetVariable()) {
      return ea->getVariable();
    }
    if (e->getTypeCode() != SBML_DOCUMENT && e->isSetId()) return e->getId();
  }
  return "";
}

// libSBML errors carry a line, not an object; the element is found again by its line.
std::string elementAtLine(SBMLDocument& doc, unsigned int line) {
  if (line == 0) return "";
  std::unique_ptr<List> all(doc.getAllElements());
  if (!all) return "";
  const SBase* found = nullptr;
  for (unsigned int i = 0; i < all->getSize(); ++i) {
    const auto* e = static_cast<const SBase*>(all->get(i));
    if (e->getLine() == line) found = e;  // the last one on the line is the innermost
  }
  return found ? elementName(found) : "";
}

// Scope of names inside one piece of math.
struct MathScope {
  std::string element;  // where the math lives, for messages
  // Kinetic-law local parameters: local id → renamed symbol. Null outside kinetic laws.
  const std::unordered_map<std::string, Expr>* locals = nullptr;
  // Lambda arguments bound positionally while expanding a function definition.
  const std::vector<std::pair<std::string, Expr>>* arguments = nullptr;
};

class Importer {
 public:
  explicit Importer(std::string file) : file_(std::move(file)) {}

  Model run(SBMLDocument& doc);

 private:
  [[noreturn]] void fail(const std::string& element, const std::string& reason) const {
    throw SbmlError(file_, element, reason);
  }
  [[noreturn]] void refuse(const std::string& element, const std::string& feature) const {
    throw UnsupportedFeature(file_, element, feature);
  }

  // ---- document-level phases ----
  void checkRequiredUnknownPackages(const SBMLDocument& doc) const;
  void throwFirstError(SBMLDocument& doc, const std::string& context) const;
  void checkPackages(SBMLDocument& doc) const;
  static void configureValidation(SBMLDocument& doc);
  void flattenComp(SBMLDocument& doc) const;
  void checkConsistency(SBMLDocument& doc) const;

  // ---- model copy ----
  void collectIds(const lsb::Model& m);
  void importCompartments(const lsb::Model& m);
  void importSpecies(const lsb::Model& m);
  void importParameters(const lsb::Model& m);
  void importReactions(const lsb::Model& m);
  SpeciesReference importSpeciesReference(const lsb::SpeciesReference& sr,
                                          const std::string& reactionId);
  void importRules(const lsb::Model& m);
  void importInitialAssignments(const lsb::Model& m);
  void importEvents(const lsb::Model& m);
  void defaultValuelessParameters();
  double finiteInitialValue(double v, const std::string& element) const;

  // ---- math ----
  Expr convert(const ASTNode* n, const MathScope& scope);
  Expr convertName(const ASTNode* n, const MathScope& scope);
  Expr convertRateOf(const ASTNode* n, const MathScope& scope);
  Expr convertCall(const ASTNode* n, const MathScope& scope);
  Expr convertRelational(Op op, const ASTNode* n, const MathScope& scope);
  Expr convertLogical(Op op, const ASTNode* n, const MathScope& scope);
  Expr convertPiecewise(const ASTNode* n, const MathScope& scope);
  std::vector<Expr> convertChildren(const ASTNode* n, const MathScope& scope);
  Expr child(const ASTNode* n, unsigned int i, const MathScope& scope) {
    return convert(n->getChild(i), scope);
  }
  void expectChildren(const ASTNode* n, unsigned int count, const MathScope& scope) const;
  [[noreturn]] void unknownOperator(const ASTNode* n, const MathScope& scope) const;

  symbolic::ExprPool& pool() { return *model_.pool; }

  std::string file_;
  Model model_;
  // Ids math may name: compartments, species, parameters, species references, reactions.
  std::unordered_set<std::string> globals_;
  std::unordered_set<std::string> species_;  // species ids alone, for species references
  std::unordered_set<std::string> valueless_;  // global parameters without a value attribute
  std::unordered_map<std::string, const FunctionDefinition*> functions_;
  std::vector<std::string> expanding_;  // function definitions being expanded (cycle guard)
};

Model Importer::run(SBMLDocument& doc) {
  checkRequiredUnknownPackages(doc);
  throwFirstError(doc, "");
  if (doc.getLevel() < 2) refuse("", "SBML Level 1");
  checkPackages(doc);
  configureValidation(doc);
  flattenComp(doc);
  throwIfCancelled();
  checkConsistency(doc);
  throwIfCancelled();
  const lsb::Model* m = doc.getModel();
  if (m == nullptr) fail("", "the document contains no model");

  model_.file = file_;
  model_.id = m->getId();
  model_.name = m->getName();
  model_.level = static_cast<int>(doc.getLevel());
  model_.version = static_cast<int>(doc.getVersion());
  if (m->isSetConversionFactor()) model_.conversionFactor = m->getConversionFactor();
  collectIds(*m);
  importCompartments(*m);
  importSpecies(*m);
  importParameters(*m);
  importReactions(*m);
  throwIfCancelled();
  importRules(*m);
  importInitialAssignments(*m);
  importEvents(*m);
  defaultValuelessParameters();
  return std::move(model_);
}

// ---------------------------------------------------------------------------------------------
// Document-level phases

// A required package libSBML was built without (distrib, multi, spatial, ...) changes the
// meaning of the model in ways nothing here can see; libSBML logs it as a read error, so it is
// looked for first to report it as what it is.
void Importer::checkRequiredUnknownPackages(const SBMLDocument& doc) const {
  for (int i = 0; i < doc.getNumUnknownPackages(); ++i) {
    const std::string uri = doc.getUnknownPackageURI(i);
    if (const_cast<SBMLDocument&>(doc).getPackageRequired(uri)) {
      refuse("", "package " + doc.getUnknownPackagePrefix(i));
    }
  }
}

void Importer::throwFirstError(SBMLDocument& doc, const std::string& context) const {
  for (unsigned int i = 0; i < doc.getNumErrors(); ++i) {
    const SBMLError* e = doc.getError(i);
    if (!counts(*e)) continue;
    std::string reason = context;
    if (e->getLine() > 0) reason += "line " + std::to_string(e->getLine()) + ": ";
    // libSBML's text for a document without <sbml> restates what a schema is.
    if (e->getErrorId() == NotSchemaConformant && doc.getModel() == nullptr) {
      fail("", reason + "not an SBML document");
    }
    fail(elementAtLine(doc, e->getLine()), reason + describe(*e));
  }
}

void Importer::checkPackages(SBMLDocument& doc) const {
  for (unsigned int i = 0; i < doc.getNumPlugins(); ++i) {
    const std::string name = doc.getPlugin(i)->getPackageName();
    if (!doc.isPackageEnabled(name) || isHarmlessPackage(name)) continue;
    // qual describes a logical, not an ODE, model whatever its required flag says.
    if (name == "qual" || doc.getPackageRequired(name)) refuse("", "package " + name);
  }
  const lsb::Model* m = doc.getModel();
  if (m == nullptr || !doc.isPackageEnabled("fbc")) return;
  // fbc objectives and flux bounds define a flux-balance problem, not a time course; fbc used only
  // for species charges and formulas is harmless.
  const auto* fbc = dynamic_cast<const FbcModelPlugin*>(m->getPlugin("fbc"));
  if (fbc == nullptr) return;
  if (fbc->getNumObjectives() > 0) refuse(fbc->getObjective(0)->getId(), "fbc");
  if (fbc->getNumFluxBounds() > 0) refuse(fbc->getFluxBound(0)->getId(), "fbc");
}

// libSBML's CompFlatteningConverter instantiates submodels (external model definitions are
// resolved against the document's location URI, which readSBMLFromFile sets to the file) and
// validates both the hierarchical and the flattened document.
void Importer::flattenComp(SBMLDocument& doc) const {
  if (!doc.isPackageEnabled("comp")) return;
  ConversionProperties props;
  props.addOption("flatten comp", true);
  props.addOption("performValidation", true);
  if (doc.convert(props) == LIBSBML_OPERATION_SUCCESS) return;
  throwFirstError(doc, "comp flattening: ");
  fail("", "comp flattening failed");  // the converter gave up without logging an error
}

// Units checks are off: Sensode ignores units, the suite and real models are full of unit
// complaints, and the units validator alone costs 5-10x all the other checks together (15-35 ms
// on the PEtab models against < 3 ms). Modeling-practice checks only yield warnings. The comp
// flattening converter's validation follows the same settings.
void Importer::configureValidation(SBMLDocument& doc) {
  doc.setConsistencyChecks(LIBSBML_CAT_UNITS_CONSISTENCY, false);
  doc.setConsistencyChecks(LIBSBML_CAT_MODELING_PRACTICE, false);
}

// Only errors count (see counts()). checkInternalConsistency() is not run: it repeats the
// read-time checks for documents built in memory, and a read document has been through them.
//
// On large models libSBML's general and MathML consistency checks grow faster than linearly
// (generated mass-action networks: general 0.07 s at 500 species and 2.0 s at 2000, MathML
// 0.19 s and 1.2 s; reading the file is 0.17 s and 0.72 s), while the identifier, SBO and
// overdetermined-model checks stay in milliseconds. Above kFullValidationLimit species +
// reactions the two are left out. What they catch that would otherwise slip through is checked
// in linear time during the copy: species references and modifiers must name species (21111,
// 21113), every symbol in math must be defined and every function call must name a function
// definition (convertName, convertCall), rateOf must take an identifier (convertRateOf).
// Small models keep libSBML's full wording and coverage.
void Importer::checkConsistency(SBMLDocument& doc) const {
  constexpr unsigned int kFullValidationLimit = 1000;
  if (const lsb::Model* m = doc.getModel();
      m != nullptr && m->getNumSpecies() + m->getNumReactions() > kFullValidationLimit) {
    doc.setConsistencyChecks(LIBSBML_CAT_GENERAL_CONSISTENCY, false);
    doc.setConsistencyChecks(LIBSBML_CAT_MATHML_CONSISTENCY, false);
  }
  doc.getErrorLog()->clearLog();
  doc.checkConsistency();
  throwFirstError(doc, "");
}

// ---------------------------------------------------------------------------------------------
// Model copy

void Importer::collectIds(const lsb::Model& m) {
  for (unsigned int i = 0; i < m.getNumCompartments(); ++i) {
    globals_.insert(m.getCompartment(i)->getId());
  }
  for (unsigned int i = 0; i < m.getNumSpecies(); ++i) {
    globals_.insert(m.getSpecies(i)->getId());
    species_.insert(m.getSpecies(i)->getId());
  }
  for (unsigned int i = 0; i < m.getNumParameters(); ++i) {
    globals_.insert(m.getParameter(i)->getId());
  }
  // Species references have ids in math only in Level 3 (their stoichiometry); L2 forbids it.
  const bool referenceIds = m.getLevel() >= 3;
  for (unsigned int i = 0; i < m.getNumReactions(); ++i) {
    const lsb::Reaction* r = m.getReaction(i);
    globals_.insert(r->getId());
    if (!referenceIds) continue;
    for (unsigned int k = 0; k < r->getNumReactants(); ++k) {
      if (r->getReactant(k)->isSetId()) globals_.insert(r->getReactant(k)->getId());
    }
    for (unsigned int k = 0; k < r->getNumProducts(); ++k) {
      if (r->getProduct(k)->isSetId()) globals_.insert(r->getProduct(k)->getId());
    }
  }
  for (unsigned int i = 0; i < m.getNumFunctionDefinitions(); ++i) {
    const FunctionDefinition* f = m.getFunctionDefinition(i);
    functions_[f->getId()] = f;
  }
}

// A number written in the file for a quantity that becomes (part of) an ODE state must be finite:
// INF or NaN there cannot be integrated. Parameters are exempt (SBML allows INF/NaN values, and
// suite case 00951 expects them passed through).
double Importer::finiteInitialValue(double v, const std::string& element) const {
  if (!std::isfinite(v)) fail(element, "non-finite initial value");
  return v;
}

void Importer::importCompartments(const lsb::Model& m) {
  for (unsigned int i = 0; i < m.getNumCompartments(); ++i) {
    const lsb::Compartment* c = m.getCompartment(i);
    Compartment out;
    out.id = c->getId();
    out.name = c->getName();
    if (c->isSetSize()) out.size = finiteInitialValue(c->getSize(), out.id);
    // L3 leaves spatialDimensions optional (NaN when unset): assume the usual three.
    const double dims = c->getSpatialDimensionsAsDouble();
    out.spatialDimensions = std::isfinite(dims) ? dims : 3;
    out.constant = c->getConstant();
    model_.compartments.push_back(std::move(out));
  }
}

void Importer::importSpecies(const lsb::Model& m) {
  for (unsigned int i = 0; i < m.getNumSpecies(); ++i) {
    const lsb::Species* s = m.getSpecies(i);
    Species out;
    out.id = s->getId();
    out.name = s->getName();
    out.compartment = s->getCompartment();
    if (s->isSetInitialAmount()) {
      out.initialAmount = finiteInitialValue(s->getInitialAmount(), out.id);
    }
    if (s->isSetInitialConcentration()) {
      out.initialConcentration = finiteInitialValue(s->getInitialConcentration(), out.id);
    }
    out.hasOnlySubstanceUnits = s->getHasOnlySubstanceUnits();
    out.boundaryCondition = s->getBoundaryCondition();
    out.constant = s->getConstant();
    if (s->isSetConversionFactor()) out.conversionFactor = s->getConversionFactor();
    model_.species.push_back(std::move(out));
  }
}

void Importer::importParameters(const lsb::Model& m) {
  for (unsigned int i = 0; i < m.getNumParameters(); ++i) {
    const lsb::Parameter* p = m.getParameter(i);
    Parameter out;
    out.id = p->getId();
    out.name = p->getName();
    if (p->isSetValue()) out.value = p->getValue();
    else valueless_.insert(out.id);
    out.constant = p->getConstant();
    model_.parameters.push_back(std::move(out));
  }
}

// A global parameter with no value attribute, no initial assignment and no rule
// (BIOMD0000000266's X9) leaves the model underdetermined. COPASI imports it with the value 1
// and the warning "No initial value set for global parameter ... Setting initial value to 1.0"
// (its message MCSBML 43); libRoadRunner refuses the model ("Global parameter ... is missing a
// value", sys-bio/roadrunner #627, #692). Sensode follows COPASI, so that such curated models
// run, and says so in Model::warnings (the CLI prints them; --set ID=VALUE chooses another).
// Like COPASI, only where no rule names the parameter (a rate-rule variable without an initial
// value stays an error, reported by the ODE builder if the model uses it).
void Importer::defaultValuelessParameters() {
  std::unordered_set<std::string> determined;
  for (const Rule& r : model_.rules) determined.insert(r.variable);
  for (const InitialAssignment& a : model_.initialAssignments) determined.insert(a.symbol);
  for (Parameter& p : model_.parameters) {
    if (!valueless_.count(p.id) || determined.count(p.id)) continue;
    p.value = 1.0;
    model_.warnings.push_back("global parameter '" + p.id +
                              "' has no value (no value attribute, initial assignment or rule): "
                              "using 1, as COPASI does");
  }
}

SpeciesReference Importer::importSpeciesReference(const lsb::SpeciesReference& sr,
                                                  const std::string& reactionId) {
  SpeciesReference out;
  out.species = sr.getSpecies();
  // libSBML's check for this (21111) is skipped on large models (see checkConsistency()).
  if (!species_.contains(out.species)) {
    fail(reactionId, "a species reference references species '" + out.species +
                         "', which is undefined");
  }
  if (sr.isSetId()) out.id = sr.getId();
  const std::string element = out.id.empty() ? reactionId : out.id;
  if (sr.getLevel() >= 3) {
    // L3: no default; an unset stoichiometry is left to an initial assignment or rule.
    if (sr.isSetStoichiometry()) {
      out.stoichiometry = finiteInitialValue(sr.getStoichiometry(), element);
    }
    out.constant = sr.getConstant();
    return out;
  }
  // L2: stoichiometryMath replaces the number and makes the stoichiometry variable; otherwise
  // the number defaults to 1 (libSBML's getStoichiometry() returns that default).
  if (sr.isSetStoichiometryMath() && sr.getStoichiometryMath()->isSetMath()) {
    MathScope scope{reactionId};
    out.stoichiometryMath = convert(sr.getStoichiometryMath()->getMath(), scope);
    out.constant = false;
    return out;
  }
  out.stoichiometry = finiteInitialValue(sr.getStoichiometry(), element);
  out.constant = true;
  return out;
}

void Importer::importReactions(const lsb::Model& m) {
  for (unsigned int i = 0; i < m.getNumReactions(); ++i) {
    if (i % 256 == 0) throwIfCancelled();
    const lsb::Reaction* r = m.getReaction(i);
    Reaction out;
    out.id = r->getId();
    out.name = r->getName();
    out.reversible = r->getReversible();
    out.fast = r->isSetFast() && r->getFast();
    for (unsigned int k = 0; k < r->getNumReactants(); ++k) {
      out.reactants.push_back(importSpeciesReference(*r->getReactant(k), out.id));
    }
    for (unsigned int k = 0; k < r->getNumProducts(); ++k) {
      out.products.push_back(importSpeciesReference(*r->getProduct(k), out.id));
    }
    for (unsigned int k = 0; k < r->getNumModifiers(); ++k) {
      const std::string& modifier = r->getModifier(k)->getSpecies();
      if (!species_.contains(modifier)) {  // libSBML 21113, skipped on large models
        fail(out.id, "a modifier references species '" + modifier + "', which is undefined");
      }
      out.modifiers.push_back(modifier);
    }
    if (const KineticLaw* kl = r->getKineticLaw()) {
      // L3 has <localParameter>s; L2 kinetic-law <parameter>s play the same role. Either shadows
      // a global id of the same name inside this kinetic law only.
      std::unordered_map<std::string, Expr> locals;
      const bool l3 = kl->getLevel() >= 3;
      const unsigned int n = l3 ? kl->getNumLocalParameters() : kl->getNumParameters();
      for (unsigned int k = 0; k < n; ++k) {
        // LocalParameter derives from Parameter.
        const lsb::Parameter* p = l3 ? kl->getLocalParameter(k) : kl->getParameter(k);
        LocalParameter lp{p->getId(), p->isSetValue() ? p->getValue() : kNaN};
        locals[lp.id] = pool().symbol(localParameterSymbol(out.id, lp.id));
        out.localParameters.push_back(std::move(lp));
      }
      // A kinetic law without math is legal (L3V2): the reaction then has no rate.
      if (kl->isSetMath()) out.rate = convert(kl->getMath(), MathScope{out.id, &locals});
    }
    model_.reactions.push_back(std::move(out));
  }
}

void Importer::importRules(const lsb::Model& m) {
  int algebraicRules = 0;
  for (unsigned int i = 0; i < m.getNumRules(); ++i) {
    const lsb::Rule* r = m.getRule(i);
    // L3V2 allows a rule without math; it then has no effect (suite tag NoMathML).
    if (!r->isSetMath()) continue;
    if (r->isAlgebraic()) {
      ++algebraicRules;
      // Rules have an id attribute only in L3V2 (getId() would return the variable).
      const std::string id = r->isSetIdAttribute()
                                 ? r->getIdAttribute()
                                 : "algebraic rule " + std::to_string(algebraicRules);
      model_.rules.push_back(
          Rule{RuleKind::Algebraic, {}, convert(r->getMath(), MathScope{id}), id});
      continue;
    }
    const std::string variable = r->getVariable();
    if (!globals_.contains(variable)) fail(variable, "rule sets an undefined symbol");
    const RuleKind kind = r->isRate() ? RuleKind::Rate : RuleKind::Assignment;
    model_.rules.push_back(
        Rule{kind, variable, convert(r->getMath(), MathScope{variable}), variable});
  }
}

void Importer::importInitialAssignments(const lsb::Model& m) {
  for (unsigned int i = 0; i < m.getNumInitialAssignments(); ++i) {
    const lsb::InitialAssignment* a = m.getInitialAssignment(i);
    if (!a->isSetMath()) continue;  // as for rules: no math, no effect
    const std::string symbol = a->getSymbol();
    if (!globals_.contains(symbol)) fail(symbol, "initial assignment to an undefined symbol");
    model_.initialAssignments.push_back(
        InitialAssignment{symbol, convert(a->getMath(), MathScope{symbol})});
  }
}

// Events: the trigger is required (L3V2 allows it without math: such an event never fires, so it
// is dropped); L2 has no initialValue or persistent attributes and means true for both.
void Importer::importEvents(const lsb::Model& m) {
  for (unsigned int i = 0; i < m.getNumEvents(); ++i) {
    const ::Event* e = m.getEvent(i);
    Event out;
    out.id = e->isSetId() ? e->getId() : "event" + std::to_string(i + 1);
    const ::Trigger* trigger = e->getTrigger();
    if (trigger == nullptr || !trigger->isSetMath()) {
      if (m.getLevel() < 3) fail(out.id, "event without trigger math");
      continue;
    }
    const MathScope scope{out.id};
    out.trigger = convert(trigger->getMath(), scope);
    if (trigger->isSetInitialValue()) out.initialValue = trigger->getInitialValue();
    if (trigger->isSetPersistent()) out.persistent = trigger->getPersistent();
    if (e->isSetUseValuesFromTriggerTime())
      out.useValuesFromTriggerTime = e->getUseValuesFromTriggerTime();
    if (e->isSetDelay() && e->getDelay()->isSetMath())
      out.delay = convert(e->getDelay()->getMath(), scope);
    if (e->isSetPriority() && e->getPriority()->isSetMath())
      out.priority = convert(e->getPriority()->getMath(), scope);
    for (unsigned int k = 0; k < e->getNumEventAssignments(); ++k) {
      const ::EventAssignment* a = e->getEventAssignment(k);
      if (!a->isSetMath()) continue;  // L3V2: no math, no effect
      const std::string variable = a->getVariable();
      if (!globals_.contains(variable) || functions_.contains(variable))
        fail(out.id, "event assigns the undefined symbol '" + variable + "'");
      if (m.getReaction(variable) != nullptr)
        fail(out.id, "event assigns reaction '" + variable + "' (a reaction has no value to set)");
      out.assignments.push_back({variable, convert(a->getMath(), MathScope{out.id})});
    }
    model_.events.push_back(std::move(out));
  }
}

// ---------------------------------------------------------------------------------------------
// Math

Op unaryOp(ASTNodeType_t type, bool& found) {
  found = true;
  switch (type) {
    case AST_FUNCTION_EXP: return Op::Exp;
    case AST_FUNCTION_LN: return Op::Log;
    case AST_FUNCTION_ABS: return Op::Abs;
    case AST_FUNCTION_FLOOR: return Op::Floor;
    case AST_FUNCTION_CEILING: return Op::Ceil;
    case AST_FUNCTION_FACTORIAL: return Op::Factorial;
    case AST_FUNCTION_SIN: return Op::Sin;
    case AST_FUNCTION_COS: return Op::Cos;
    case AST_FUNCTION_TAN: return Op::Tan;
    case AST_FUNCTION_SEC: return Op::Sec;
    case AST_FUNCTION_CSC: return Op::Csc;
    case AST_FUNCTION_COT: return Op::Cot;
    case AST_FUNCTION_SINH: return Op::Sinh;
    case AST_FUNCTION_COSH: return Op::Cosh;
    case AST_FUNCTION_TANH: return Op::Tanh;
    case AST_FUNCTION_SECH: return Op::Sech;
    case AST_FUNCTION_CSCH: return Op::Csch;
    case AST_FUNCTION_COTH: return Op::Coth;
    case AST_FUNCTION_ARCSIN: return Op::ArcSin;
    case AST_FUNCTION_ARCCOS: return Op::ArcCos;
    case AST_FUNCTION_ARCTAN: return Op::ArcTan;
    case AST_FUNCTION_ARCSEC: return Op::ArcSec;
    case AST_FUNCTION_ARCCSC: return Op::ArcCsc;
    case AST_FUNCTION_ARCCOT: return Op::ArcCot;
    case AST_FUNCTION_ARCSINH: return Op::ArcSinh;
    case AST_FUNCTION_ARCCOSH: return Op::ArcCosh;
    case AST_FUNCTION_ARCTANH: return Op::ArcTanh;
    case AST_FUNCTION_ARCSECH: return Op::ArcSech;
    case AST_FUNCTION_ARCCSCH: return Op::ArcCsch;
    case AST_FUNCTION_ARCCOTH: return Op::ArcCoth;
    default: found = false; return Op::Constant;
  }
}

Expr Importer::convert(const ASTNode* n, const MathScope& scope) {
  bool isUnary = false;
  const Op fn = unaryOp(n->getType(), isUnary);
  if (isUnary) {
    expectChildren(n, 1, scope);
    return pool().unary(fn, child(n, 0, scope));
  }
  switch (n->getType()) {
    case AST_INTEGER:
    case AST_REAL:  // includes <infinity/> and <notanumber/>
    case AST_REAL_E:
    case AST_RATIONAL: return pool().constant(n->getValue());
    case AST_CONSTANT_E: return pool().constant(std::numbers::e);
    case AST_CONSTANT_PI: return pool().constant(std::numbers::pi);
    case AST_CONSTANT_TRUE: return pool().one();
    case AST_CONSTANT_FALSE: return pool().zero();
    case AST_NAME: return convertName(n, scope);
    case AST_NAME_TIME: return pool().symbol(kTimeSymbol);
    case AST_NAME_AVOGADRO: return pool().constant(kAvogadro);
    case AST_PLUS: {
      if (n->getNumChildren() == 0) return pool().zero();  // empty sum
      const std::vector<Expr> terms = convertChildren(n, scope);
      return pool().add(std::span<const Expr>(terms));
    }
    case AST_TIMES: {
      if (n->getNumChildren() == 0) return pool().one();  // empty product
      const std::vector<Expr> factors = convertChildren(n, scope);
      return pool().mul(std::span<const Expr>(factors));
    }
    case AST_MINUS:
      if (n->getNumChildren() == 1) return pool().neg(child(n, 0, scope));
      expectChildren(n, 2, scope);
      return pool().sub(child(n, 0, scope), child(n, 1, scope));
    case AST_DIVIDE:
      expectChildren(n, 2, scope);
      return pool().div(child(n, 0, scope), child(n, 1, scope));
    case AST_POWER:
    case AST_FUNCTION_POWER:
      expectChildren(n, 2, scope);
      return pool().pow(child(n, 0, scope), child(n, 1, scope));
    case AST_FUNCTION_ROOT: {
      // libSBML puts the degree first (inserting the default 2 when absent).
      if (n->getNumChildren() == 1) return pool().sqrt(child(n, 0, scope));
      expectChildren(n, 2, scope);
      const Expr degree = child(n, 0, scope);
      const Expr x = child(n, 1, scope);
      return pool().isConstant(degree, 2) ? pool().sqrt(x) : pool().root(degree, x);
    }
    case AST_FUNCTION_LOG: {
      // As for root: the base comes first, 10 when absent.
      if (n->getNumChildren() == 1) return pool().log10(child(n, 0, scope));
      expectChildren(n, 2, scope);
      const Expr base = child(n, 0, scope);
      const Expr x = child(n, 1, scope);
      return pool().isConstant(base, 10) ? pool().log10(x) : pool().logBase(base, x);
    }
    case AST_FUNCTION_PIECEWISE: return convertPiecewise(n, scope);
    case AST_RELATIONAL_LT: return convertRelational(Op::Lt, n, scope);
    case AST_RELATIONAL_LEQ: return convertRelational(Op::Le, n, scope);
    case AST_RELATIONAL_GT: return convertRelational(Op::Gt, n, scope);
    case AST_RELATIONAL_GEQ: return convertRelational(Op::Ge, n, scope);
    case AST_RELATIONAL_EQ: return convertRelational(Op::Eq, n, scope);
    case AST_RELATIONAL_NEQ:  // binary only in MathML
      expectChildren(n, 2, scope);
      return pool().binary(Op::Ne, child(n, 0, scope), child(n, 1, scope));
    case AST_LOGICAL_AND: return convertLogical(Op::And, n, scope);
    case AST_LOGICAL_OR: return convertLogical(Op::Or, n, scope);
    case AST_LOGICAL_XOR: return convertLogical(Op::Xor, n, scope);
    case AST_LOGICAL_NOT:
      expectChildren(n, 1, scope);
      return pool().unary(Op::Not, child(n, 0, scope));
    case AST_LOGICAL_IMPLIES: {  // a ⇒ b  ≡  ¬a ∨ b
      expectChildren(n, 2, scope);
      const Expr args[] = {pool().unary(Op::Not, child(n, 0, scope)), child(n, 1, scope)};
      return pool().nary(Op::Or, args);
    }
    case AST_FUNCTION_MIN:
    case AST_FUNCTION_MAX: {
      if (n->getNumChildren() == 0) fail(scope.element, "min/max without arguments in math");
      const std::vector<Expr> args = convertChildren(n, scope);
      return pool().nary(n->getType() == AST_FUNCTION_MIN ? Op::Min : Op::Max, args);
    }
    case AST_FUNCTION_REM:
    case AST_FUNCTION_QUOTIENT:
      expectChildren(n, 2, scope);
      return pool().binary(n->getType() == AST_FUNCTION_REM ? Op::Rem : Op::Quotient,
                           child(n, 0, scope), child(n, 1, scope));
    case AST_FUNCTION_RATE_OF: return convertRateOf(n, scope);
    case AST_FUNCTION_DELAY:  // resolved on the solution's history (symbolic/delays.h)
      expectChildren(n, 2, scope);
      return pool().delay(child(n, 0, scope), child(n, 1, scope));
    case AST_FUNCTION: return convertCall(n, scope);
    default: unknownOperator(n, scope);
  }
}

std::vector<Expr> Importer::convertChildren(const ASTNode* n, const MathScope& scope) {
  std::vector<Expr> out;
  out.reserve(n->getNumChildren());
  for (unsigned int i = 0; i < n->getNumChildren(); ++i) out.push_back(child(n, i, scope));
  return out;
}

void Importer::expectChildren(const ASTNode* n, unsigned int count,
                              const MathScope& scope) const {
  if (n->getNumChildren() == count) return;
  const char* name = n->getName();
  fail(scope.element, std::string("operator '") + (name ? name : "?") + "' has " +
                          std::to_string(n->getNumChildren()) + " arguments, expected " +
                          std::to_string(count));
}

void Importer::unknownOperator(const ASTNode* n, const MathScope& scope) const {
  const char* name = n->getName();
  fail(scope.element, "unsupported MathML operator '" +
                          (name ? std::string(name) : "type " + std::to_string(n->getType())) +
                          "'");
}

Expr Importer::convertName(const ASTNode* n, const MathScope& scope) {
  const std::string id = n->getName();
  if (scope.arguments != nullptr) {
    for (const auto& [name, value] : *scope.arguments) {
      if (name == id) return value;
    }
  }
  if (scope.locals != nullptr) {
    if (auto it = scope.locals->find(id); it != scope.locals->end()) return it->second;
  }
  if (!globals_.contains(id)) fail(scope.element, "undefined symbol '" + id + "' in math");
  return pool().symbol(id);
}

// rateOf(X) becomes the symbol "@rateOf:X" that the ODE builder resolves; only a plain
// identifier has a rate Sensode can name.
Expr Importer::convertRateOf(const ASTNode* n, const MathScope& scope) {
  if (n->getNumChildren() != 1 || n->getChild(0)->getType() != AST_NAME) {
    refuse(scope.element, "rateOf of a non-identifier");
  }
  const Expr target = convertName(n->getChild(0), scope);
  if (pool().isConstant(target)) return pool().zero();  // e.g. a lambda argument bound to 2
  if (!pool().isSymbol(target)) refuse(scope.element, "rateOf of a non-identifier");
  const std::string& name = pool().symbolName(pool().node(target).symbol);
  // Local parameters are constants; so is anything not a model quantity.
  if (!globals_.contains(name)) return pool().zero();
  return pool().symbol(rateOfSymbol(name));
}

// A call of a function definition is expanded in place: the arguments are converted in the
// caller's scope, then the lambda body is converted with its bvars bound to them. The body sees
// neither the caller's local parameters nor its arguments.
Expr Importer::convertCall(const ASTNode* n, const MathScope& scope) {
  const std::string id = n->getName() ? n->getName() : "";
  const auto it = functions_.find(id);
  if (it == functions_.end()) fail(scope.element, "call of undefined function '" + id + "'");
  const FunctionDefinition* f = it->second;
  if (!f->isSetMath() || f->getBody() == nullptr) {
    fail(scope.element, "function '" + id + "' has no math");
  }
  if (f->getNumArguments() != n->getNumChildren()) {
    fail(scope.element, "function '" + id + "' called with " +
                            std::to_string(n->getNumChildren()) + " arguments, expects " +
                            std::to_string(f->getNumArguments()));
  }
  for (const std::string& active : expanding_) {
    if (active == id) fail(id, "function definition calls itself");
  }
  std::vector<std::pair<std::string, Expr>> arguments;
  for (unsigned int i = 0; i < f->getNumArguments(); ++i) {
    arguments.emplace_back(f->getArgument(i)->getName(), child(n, i, scope));
  }
  expanding_.push_back(id);
  const Expr body = convert(f->getBody(), MathScope{id, nullptr, &arguments});
  expanding_.pop_back();
  return body;
}

// MathML relational operators are n-ary chains: lt(a, b, c) means a < b and b < c.
Expr Importer::convertRelational(Op op, const ASTNode* n, const MathScope& scope) {
  const std::vector<Expr> args = convertChildren(n, scope);
  if (args.size() < 2) return pool().one();  // a chain of fewer than two links holds
  std::vector<Expr> links;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    links.push_back(pool().binary(op, args[i], args[i + 1]));
  }
  if (links.size() == 1) return links.front();
  return pool().nary(Op::And, links);
}

Expr Importer::convertLogical(Op op, const ASTNode* n, const MathScope& scope) {
  if (n->getNumChildren() == 0) return op == Op::And ? pool().one() : pool().zero();
  const std::vector<Expr> args = convertChildren(n, scope);
  return pool().nary(op, args);
}

// libSBML's children: v1, c1, v2, c2, ..., and the otherwise value last when present.
Expr Importer::convertPiecewise(const ASTNode* n, const MathScope& scope) {
  const std::vector<Expr> children = convertChildren(n, scope);
  const bool hasOtherwise = children.size() % 2 == 1;
  const Expr otherwise = hasOtherwise ? children.back() : pool().nanExpr();
  const std::span<const Expr> pieces(children.data(), children.size() - (hasOtherwise ? 1 : 0));
  if (pieces.empty()) return otherwise;
  return pool().piecewise(pieces, otherwise);
}

Model importDocument(SBMLDocument& doc, const std::string& file) {
  return Importer(file).run(doc);
}

// libSBML keeps process-wide registries (SBML extensions, converters, the comp package's model
// resolvers) that are not documented as thread-safe, so imports run one at a time wherever they
// come from (a GUI reading a model while a task's worker compiles another, the suite runner's
// threads). The importer's result owns its data; everything after it runs in parallel.
}  // namespace

std::mutex& libsbmlMutex() {
  static std::mutex m;
  return m;
}

Model importSbmlFile(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw SbmlError(name, "", "cannot open file");
  // libSBML calls an empty file "badly formed XML"; say what it is.
  if (std::filesystem::file_size(file, ec) == 0 && !ec) throw SbmlError(name, "", "empty file");
  // libSBML resolves comp external model files against the path it was given: an absolute path
  // makes that independent of the working directory. Messages keep the name the user typed.
  const std::string absolute = std::filesystem::absolute(file, ec).string();
  {
    std::ifstream in(file, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    checkXmlNesting(text, name);
  }
  const std::lock_guard<std::mutex> lock(libsbmlMutex());
  std::unique_ptr<SBMLDocument> doc(readSBMLFromFile(ec ? name.c_str() : absolute.c_str()));
  if (!doc) throw SbmlError(name, "", "libSBML could not read the file");
  return importDocument(*doc, name);
}

Model importSbmlString(const std::string& xml, const std::string& sourceName) {
  if (xml.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw SbmlError(sourceName, "", "empty document");
  }
  checkXmlNesting(xml, sourceName);
  const std::lock_guard<std::mutex> lock(libsbmlMutex());
  std::unique_ptr<SBMLDocument> doc(readSBMLFromString(xml.c_str()));
  if (!doc) throw SbmlError(sourceName, "", "libSBML could not read the text");
  return importDocument(*doc, sourceName);
}

}  // namespace sensode::model
