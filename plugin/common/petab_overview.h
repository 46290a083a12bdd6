// SPDX-License-Identifier: MIT
// The model browser's content for a PEtab problem (the yaml file): its parameter table (scale,
// bounds, nominal value, estimated or fixed), conditions, observables and a count of the
// measurements, followed by the tables of its SBML model (read-only here: a PEtab problem's
// values come from its parameter and condition tables, which the gradient task edits).
#pragma once

#include <QString>

#include "gui/plugin_api/task_plugin.h"

namespace sensode::plugin {

// True for the file names the host treats as PEtab problems (.yaml, .yml).
bool isPetabFile(const QString& path);

// Reads the problem (and compiles its model, as every PEtab reader must to resolve formulas);
// throws sensode::Error (PetabError naming file, table, row and column; SbmlError).
api::ModelOverview readPetabOverview(const QString& path);

}  // namespace sensode::plugin
