// SPDX-License-Identifier: MIT
// Saving an edited model: the SBML file as read, with the values a user changed (in the model
// browser or with --set) written into it through libSBML, so that the saved file reloads to the
// same time course. Everything else of the document (annotations, notes, units, layout, SBO
// terms, the SBML level and version) is libSBML's copy of the original.
//
// Value ids are the ids the tasks take as overrides (core/tasks/time_course_task.h):
//   "k1"     a global parameter: its value attribute;
//   "R1.k"   a local (kinetic-law) parameter of reaction R1 (L3 localParameter, L2 parameter);
//   "S1"     a species' initial value, in the attribute the file uses (initialAmount or
//            initialConcentration; --set reads the number the same way); a species with neither
//            gets the one of its SBML units (concentration unless hasOnlySubstanceUnits);
//   "c"      a compartment's size;
//   "sr"     the stoichiometry of a species reference with that id (L3).
// A value whose target an initial assignment sets would be ignored on reload: the initial
// assignment is removed (the saved value replaces it) and a warning says so. A target of an
// assignment rule has no value of its own and is refused. Hierarchical (comp) models are written
// flattened, as the importer simulates them (their ids are the flattened ones), with a warning.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace sensode::model {

using ValueEdits = std::vector<std::pair<std::string, double>>;

// Reads `source`, sets `values` and writes `target` (which may be `source`). Returns the
// warnings (one sentence each, naming the element). Throws SbmlError naming the file and element
// for a source libSBML cannot read, an unknown id or an assignment-rule target, and
// Error("<target>: cannot write: <reason>") when the file cannot be written.
std::vector<std::string> writeSbmlWithValues(const std::filesystem::path& source,
                                             const ValueEdits& values,
                                             const std::filesystem::path& target);

}  // namespace sensode::model
