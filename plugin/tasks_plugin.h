// SPDX-License-Identifier: MIT
// The sensode_tasks plugin: the Sensode tasks (Time course, Parameter sensitivities, Steady-state
// gradient), the SBML and PEtab readers for the host's model browser, and the SBML writer behind
// File ▸ Save model as (api::ModelWriter over core/model/sbml_writer.h). Built twice from the
// same sources: a loadable plugin (build/plugins) and a STATIC variant the tests link (linking
// imports it: qt_add_plugin adds Q_IMPORT_PLUGIN(SensodeTasksPlugin)).
//
// Adding a task: write plugin/<task>/<task>_task.{h,cpp} with a description() like
// time_course/time_course_task.h (field table → OptionsForm, a run() for CoreTaskRunner, a
// TaskResult subclass, result views from plugin/views), and append it in tasks().
#pragma once

#include <QObject>

#include "gui/plugin_api/model_editing.h"
#include "gui/plugin_api/task_plugin.h"

namespace sensode::plugin {

class SensodeTasksPlugin : public QObject, public api::TaskPlugin, public api::ModelWriter {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID "org.sensode.TaskPlugin/2" FILE "sensode_tasks.json")
  Q_INTERFACES(sensode::api::TaskPlugin sensode::api::ModelWriter)

 public:
  bool initialize(QString* errorString) override;
  QList<api::TaskDescription> tasks() const override;
  QStringList modelFormats() const override;
  std::optional<api::ModelOverview> readModel(const QString& path,
                                              QString* errorString) const override;
  QStringList writableFormats() const override;
  bool saveModel(const api::ModelSession& session, const QString& path, QStringList* warnings,
                 QString* errorString) const override;
};

}  // namespace sensode::plugin
