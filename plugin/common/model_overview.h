// SPDX-License-Identifier: MIT
// The model browser's content for an SBML file: compartments, species (initial values),
// parameters (global and local), reactions (equation and rate law as ExprPool::toString gives
// it) and rules, read with the core's importer. A value is editable exactly when the ODE system
// has a parameter of that id (core/symbolic/ode_system.h ParamKind), i.e. when
// tasks::resolveParameters() accepts it as an override.
#pragma once

#include <QString>

#include "core/model/model.h"
#include "gui/plugin_api/task_plugin.h"

namespace sensode::symbolic {
struct OdeSystem;
}

namespace sensode::plugin {

// A value as the model browser shows it: shortNumber() (8 significant digits; the exact value is
// the cell's edit text and tool tip), "INF"/"-INF", empty for NaN (an SBML value that is not set).
QString overviewNumber(double v);

api::ModelOverview describeModel(const model::Model& model, const symbolic::OdeSystem& system);

// Imports `path` and describes it; throws sensode::Error.
api::ModelOverview readModelOverview(const QString& path);

// The ODE parameters of the model at `path` (what sensitivities differentiate against, in the
// model's order): id and a short description of its kind. Throws sensode::Error.
struct ParameterInfo {
  QString id;
  QString kind;  // "global parameter", "local parameter", "initial value", ...
  double nominal;
};
QList<ParameterInfo> readModelParameters(const QString& path);

// The outputs a run of the model at `path` reports by default (tasks::defaultOutputIds: every
// species, then every quantity that changes in time), for the outputs chooser: id, the SBML name
// (may be empty) and a short description of its kind. Throws sensode::Error.
struct OutputInfo {
  QString id;
  QString name;
  QString kind;  // "species", "parameter", "compartment", ...
};
QList<OutputInfo> readModelOutputs(const QString& path);

}  // namespace sensode::plugin
