// SPDX-License-Identifier: MIT
// File ▸ Open estimation results: a folder written by `sensode estimate --out DIR` (on this
// machine, a cluster, or a killed run) read through core (core/estimation/run_results.h) into
// the task's own Result, so the same views show it as a run in the GUI; with the settings the
// run had, as the task's settings JSON for its set-up form.
#pragma once

#include <QString>

#include <optional>

#include "gui/plugin_api/results_opener.h"

namespace sensode::plugin::estimation {

// nullopt with a one-line reason naming the folder.
std::optional<api::OpenedResults> openResultsFolder(const QString& folder, QString* errorString);

}  // namespace sensode::plugin::estimation
