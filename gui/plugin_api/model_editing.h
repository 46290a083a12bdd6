// SPDX-License-Identifier: MIT
// Two optional interfaces beside TaskPlugin (task_plugin.h) for writing back what a session
// changed. Separate interfaces with their own IIDs, so that plugins built against
// "org.sensode.TaskPlugin/2" keep loading and the host asks for them with qobject_cast:
//
//  - ModelWriter, implemented by a plugin object (next to TaskPlugin, listed in its
//    Q_INTERFACES): File ▸ Save model as... writes the open model with the session's edited
//    values through it, so that the host never links the core.
//  - OverrideSource, implemented by a task's result view or set-up widget (a concrete widget
//    with Q_OBJECT and Q_INTERFACES(sensode::api::OverrideSource)): a view that proposes values
//    for the open model (the estimation task's "Apply best fit"). The host hands it a function
//    once, when it creates the task's panel; calling it merges the values into the model
//    browser's edited values, which every task then uses.
#pragma once

#include <QMap>
#include <QString>
#include <QStringList>
#include <QtPlugin>

#include <functional>

#include "gui/plugin_api/task_plugin.h"

namespace sensode::api {

class ModelWriter {
 public:
  virtual ~ModelWriter() = default;
  // ModelSession::format values saveModel() writes ("sbml").
  virtual QStringList writableFormats() const = 0;
  // Writes the session's model with session.overrides in it to `path`. False with a one-line
  // reason naming the file on failure; `warnings` (may be null) gets what the writer changed
  // beyond the values (e.g. an initial assignment a saved value replaced).
  virtual bool saveModel(const ModelSession& session, const QString& path, QStringList* warnings,
                         QString* errorString) const = 0;
};

class OverrideSource {
 public:
  // Merges `values` (override id → value, as ModelSession::overrides) into the session's edited
  // values; returns the ids the open model has no editable value for (they are left out).
  using ApplyOverrides = std::function<QStringList(const QMap<QString, double>& values)>;
  virtual ~OverrideSource() = default;
  virtual void setApplyOverrides(ApplyOverrides apply) = 0;
};

}  // namespace sensode::api

#define SENSODE_MODEL_WRITER_IID "org.sensode.ModelWriter/1"
Q_DECLARE_INTERFACE(sensode::api::ModelWriter, SENSODE_MODEL_WRITER_IID)
#define SENSODE_OVERRIDE_SOURCE_IID "org.sensode.OverrideSource/1"
Q_DECLARE_INTERFACE(sensode::api::OverrideSource, SENSODE_OVERRIDE_SOURCE_IID)
