// SPDX-License-Identifier: MIT
// Import + ODE build + compile of a model file, shared by every task of the plugin and cached
// by (path, SHA-256 of the file's bytes): a second run of an unchanged file skips the symbolic
// work, an edited file is compiled afresh. The cached CompiledModel is a prototype that is never
// evaluated; each run gets its own clone() because evaluators own scratch buffers (see
// core/symbolic/compiled_model.h). Safe to call from several worker threads.
#pragma once

#include <QHash>
#include <QString>

#include <functional>
#include <memory>

#include "core/symbolic/compiled_model.h"

namespace sensode::plugin {

struct LoadedModel {
  std::shared_ptr<symbolic::CompiledModel> model;  // this run's own copy
  QString path;                                    // absolute
  QString sha256;                                  // of the bytes that were imported
  double loadSeconds = 0;                          // import + build + compile (0 when cached)
  bool fromCache = false;
  // SBML names by id (compartments, species, parameters, reactions) where the file gives a
  // name: what charts label their lines with.
  std::shared_ptr<const QHash<QString, QString>> names;
};

// Throws sensode::Error (SbmlError naming file, element and reason; UnsupportedFeature; ...).
// `phase` (optional) hears "Compiling the model..." when the import is done and the symbolic
// build starts (a progress text for the GUI; not called for a cached model).
LoadedModel loadModel(const QString& path,
                      const std::function<void(const QString&)>& phase = {});

// Lower-case hex SHA-256 of the file; throws sensode::Error when it cannot be read.
QString sha256OfFile(const QString& path);

// Drops every cached model (tests).
void clearModelCache();

}  // namespace sensode::plugin
