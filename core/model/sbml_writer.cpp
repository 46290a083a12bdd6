// SPDX-License-Identifier: MIT
#include "core/model/sbml_writer.h"

#include <sbml/SBMLTypes.h>
#include <sbml/conversion/ConversionProperties.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "core/common/errors.h"
#include "core/common/format.h"
#include "core/model/libsbml_names.h"
#include "core/model/sbml_importer.h"

LIBSBML_CPP_NAMESPACE_USE

namespace sensode::model {
namespace {

namespace fs = std::filesystem;

class Writer {
 public:
  Writer(std::string file, lsb::Model& model) : file_(std::move(file)), m_(model) {}

  // Sets the attribute to `written` (a placeholder, see writeSbmlWithValues) and the warnings
  // to `value`.
  void set(const std::string& id, double value, double written) {
    if (const auto dot = id.find('.'); dot != std::string::npos) {
      setLocal(id.substr(0, dot), id.substr(dot + 1), written);
      return;
    }
    if (const lsb::Rule* rule = m_.getRule(id); rule != nullptr && rule->isAssignment())
      fail(id, "an assignment rule sets its value at all times, so it has no value to save");
    if (lsb::Parameter* p = m_.getParameter(id)) {
      p->setValue(written);
    } else if (lsb::Compartment* c = m_.getCompartment(id)) {
      c->setSize(written);
    } else if (lsb::Species* s = m_.getSpecies(id)) {
      setSpecies(*s, written);
    } else if (lsb::SpeciesReference* r = speciesReference(id)) {
      r->setStoichiometry(written);
    } else {
      fail(id, "no parameter, species, compartment, species reference or local parameter has "
               "this id");
    }
    replaceInitialAssignment(id, value);
  }

  std::vector<std::string> takeWarnings() { return std::move(warnings_); }

 private:
  [[noreturn]] void fail(const std::string& element, const std::string& reason) const {
    throw SbmlError(file_, element, "cannot save the value: " + reason);
  }

  void setLocal(const std::string& reactionId, const std::string& localId, double value) {
    const std::string id = reactionId + "." + localId;
    lsb::Reaction* r = m_.getReaction(reactionId);
    KineticLaw* law = r ? r->getKineticLaw() : nullptr;
    if (law == nullptr) fail(id, "no reaction '" + reactionId + "' with a kinetic law");
    // L3 kinetic laws hold <localParameter>s, L2 ones <parameter>s (LocalParameter derives from
    // Parameter).
    lsb::Parameter* p = law->getLevel() >= 3 ? law->getLocalParameter(localId)
                                             : law->getParameter(localId);
    if (p == nullptr) fail(id, "reaction '" + reactionId + "' has no local parameter '" + localId + "'");
    p->setValue(value);
  }

  // The attribute the file uses, so that the number means what it meant to --set and to the
  // importer (core/symbolic/ode_builder.cpp initOf: the species' initial-value parameter is in
  // the units of the attribute given). With neither (an initial assignment gave the value), the
  // species' SBML units: amount with hasOnlySubstanceUnits, else concentration.
  static void setSpecies(lsb::Species& s, double value) {
    if (s.isSetInitialAmount()) {
      s.setInitialAmount(value);
    } else if (s.isSetInitialConcentration() || !s.getHasOnlySubstanceUnits()) {
      s.setInitialConcentration(value);
    } else {
      s.setInitialAmount(value);
    }
  }

  lsb::SpeciesReference* speciesReference(const std::string& id) const {
    for (unsigned int i = 0; i < m_.getNumReactions(); ++i) {
      lsb::Reaction* r = m_.getReaction(i);
      for (unsigned int k = 0; k < r->getNumReactants(); ++k)
        if (r->getReactant(k)->getId() == id) return r->getReactant(k);
      for (unsigned int k = 0; k < r->getNumProducts(); ++k)
        if (r->getProduct(k)->getId() == id) return r->getProduct(k);
    }
    return nullptr;
  }

  // An initial assignment would win over the attribute on reload, silently undoing the edit.
  void replaceInitialAssignment(const std::string& id, double value) {
    std::unique_ptr<lsb::InitialAssignment> removed(m_.removeInitialAssignment(id));
    if (!removed) return;
    std::string formula = "no math";
    if (removed->isSetMath()) {
      char* text = SBML_formulaToL3String(removed->getMath());  // malloc'ed: the caller frees it
      if (text != nullptr) formula = text;
      std::free(text);
    }
    warnings_.push_back("the initial assignment of '" + id + "' (" + formula +
                        ") was removed: the saved value " + shortNumber(value) + " replaces it");
  }

  std::string file_;
  lsb::Model& m_;
  std::vector<std::string> warnings_;
};

// Only what stops libSBML from reading the model: the callers imported the file already, and the
// importer tolerates some logged errors (unit and modeling-practice classes, sbml_importer.cpp).
bool unreadable(SBMLDocument& doc) {
  return doc.getNumErrors(LIBSBML_SEV_FATAL) > 0 || doc.getModel() == nullptr;
}

// libSBML writes doubles with 15 significant digits (LIBSBML_DOUBLE_PRECISION), which does not
// round-trip every double: a best fit 0.70000000000000007 would come back as 0.7, and the time
// course of the saved file would differ from the edited one by the solver's response to that
// (1e-12 relative on suite case 00068). So each edited attribute is first set to a placeholder
// whose 15-digit text is unique and cannot occur in a model ("1.23456789012345e-300", ...), and
// that text is then replaced by the value's %.17g text, which reads back exactly.
struct Placeholder {
  double value;
  std::string text, replacement;
};

std::string text15(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string text17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Replaces the one occurrence of ="<placeholder>" in the serialised document.
void substitutePlaceholder(std::string& xml, const Placeholder& p, const std::string& target) {
  const std::string quoted = "\"" + p.text + "\"";
  const auto at = xml.find(quoted);
  if (at == std::string::npos || xml.find(quoted, at + 1) != std::string::npos)
    throw Error(target + ": cannot write: the serialised model does not hold the edited value " +
                p.replacement + " once");
  xml.replace(at, quoted.size(), "\"" + p.replacement + "\"");
}

std::string firstError(SBMLDocument& doc) {
  for (unsigned int i = 0; i < doc.getNumErrors(); ++i) {
    const SBMLError* e = doc.getError(i);
    if (e->getSeverity() < LIBSBML_SEV_ERROR) continue;
    return (e->getLine() > 0 ? "line " + std::to_string(e->getLine()) + ": " : std::string()) +
           e->getShortMessage();
  }
  return "libSBML could not read the file";
}

}  // namespace

std::vector<std::string> writeSbmlWithValues(const fs::path& source, const ValueEdits& values,
                                             const fs::path& target) {
  const std::string name = source.string();
  std::error_code ec;
  if (!fs::is_regular_file(source, ec)) throw SbmlError(name, "", "cannot open file");
  // Absolute, so that libSBML resolves comp external model definitions next to the file.
  const fs::path absolute = fs::absolute(source, ec);

  std::string xml;
  std::vector<std::string> warnings;
  std::vector<Placeholder> placeholders;
  {
    const std::lock_guard<std::mutex> lock(libsbmlMutex());
    std::unique_ptr<SBMLDocument> doc(readSBMLFromFile((ec ? source : absolute).c_str()));
    if (!doc || unreadable(*doc))
      throw SbmlError(name, "", doc ? firstError(*doc) : "libSBML could not read the file");
    if (doc->isPackageEnabled("comp")) {
      // The importer simulates the flattened model, whose ids the values use.
      ConversionProperties props;
      props.addOption("flatten comp", true);
      props.addOption("performValidation", false);
      if (doc->convert(props) != LIBSBML_OPERATION_SUCCESS)
        throw SbmlError(name, "", "comp flattening failed: " + firstError(*doc));
      warnings.push_back("the hierarchical (comp) model is saved flattened, as Sensode "
                         "simulates it");
    }
    lsb::Model* m = doc->getModel();
    if (m == nullptr) throw SbmlError(name, "", "the document contains no model");
    Writer writer(name, *m);
    // The last value of an id given twice wins, as for overrides.
    std::map<std::string, double> last;
    for (const auto& [id, value] : values) last[id] = value;
    for (const auto& [id, value] : last) {
      Placeholder p;
      p.value = 1.23456789012345e-300 * static_cast<double>(placeholders.size() + 1);
      p.text = text15(p.value);
      p.replacement = text17(value);
      writer.set(id, value, p.value);
      placeholders.push_back(std::move(p));
    }
    for (std::string& w : writer.takeWarnings()) warnings.push_back(std::move(w));
    SBMLWriter out;
    char* text = out.writeSBMLToString(doc.get());
    if (text == nullptr) throw Error(target.string() + ": cannot write: libSBML could not serialise the model");
    xml = text;
    std::free(text);  // libSBML's documented contract: the caller frees the string
  }
  for (const Placeholder& p : placeholders) substitutePlaceholder(xml, p, target.string());

  // Written in full, then renamed over the target, so that a failed write (disk full) never
  // leaves half a model where the old file was — which matters when target is source.
  const fs::path temporary = target.string() + ".sensode-tmp";
  {
    std::ofstream file(temporary, std::ios::binary);
    if (!file) throw Error(target.string() + ": cannot write: " + std::strerror(errno));
    file << xml;
    file.close();
    if (!file) {
      fs::remove(temporary, ec);
      throw Error(target.string() + ": cannot write: " + std::strerror(errno));
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw Error(target.string() + ": cannot write: " + ec.message());
  }
  return warnings;
}

}  // namespace sensode::model
