// SPDX-License-Identifier: MIT
// SBML (Levels 2 and 3) → model::Model, through libSBML. Hierarchical models (comp) are
// flattened by libSBML's comp flattening converter first; function definitions are expanded
// inline. Unsupported constructs (events, delays, algebraic rules, fast reactions, ...) throw
// UnsupportedFeature naming the construct and the element id; malformed XML, consistency errors
// and undefined symbols throw SbmlError naming file, element and reason.
//
// Safe to call from several threads: the libSBML part runs one import at a time (its global
// registries are not documented as thread-safe); documents nested deeper than
// kMaxXmlDepth (xml_nesting.h) are refused before libSBML sees them.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>

#include "core/model/model.h"

namespace sensode::model {

Model importSbmlFile(const std::filesystem::path& file);
// `sourceName` stands in for the file name in messages (and Model::file).
Model importSbmlString(const std::string& xml, const std::string& sourceName);

// Held around every use of libSBML (its process-wide registries are not documented as
// thread-safe): the importer's and the writer's (sbml_writer.h).
std::mutex& libsbmlMutex();

}  // namespace sensode::model
