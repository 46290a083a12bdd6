// SPDX-License-Identifier: MIT
// libSBML classes whose names clash with core/model/model.h's (Model, Species, Rule, ...), as
// sensode::model::lsb::X for the files that use libSBML (the importer, the writer). Debian builds
// libSBML without its C++ namespace, so they are reached from the global scope either way.
// Internal to core/model: include after <sbml/SBMLTypes.h>.
#pragma once

#include <sbml/SBMLTypes.h>

namespace sensode::model::lsb {
using Model = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Model;
using Compartment = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Compartment;
using Species = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Species;
using Parameter = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Parameter;
using Reaction = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Reaction;
using SpeciesReference = ::LIBSBML_CPP_NAMESPACE_QUALIFIER SpeciesReference;
using Rule = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Rule;
using InitialAssignment = ::LIBSBML_CPP_NAMESPACE_QUALIFIER InitialAssignment;
}  // namespace sensode::model::lsb
