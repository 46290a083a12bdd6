// SPDX-License-Identifier: MIT
// The sensode_estimation plugin: the Parameter estimation task (estimation_task.h), added to
// the host by a second plugin with no change to the host — the proof that the plugin seam
// (gui/plugin_api/task_plugin.h) carries a new task. It reads no models (sensode_tasks does),
// and reuses the shared views, forms and runner of plugin/ by linking sensode_tasks_impl.
// Built twice from the same sources, as sensode_tasks: a loadable plugin (build/plugins) and a
// STATIC variant the tests link (linking imports it: Q_IMPORT_PLUGIN(SensodeEstimationPlugin)).
#pragma once

#include <QObject>

#include "gui/plugin_api/results_opener.h"
#include "gui/plugin_api/task_plugin.h"

namespace sensode::plugin::estimation {

// Also a ResultsOpener: File ▸ Open estimation results (results_folder.h).
class SensodeEstimationPlugin : public QObject, public api::TaskPlugin, public api::ResultsOpener {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID "org.sensode.TaskPlugin/2" FILE "sensode_estimation.json")
  Q_INTERFACES(sensode::api::TaskPlugin sensode::api::ResultsOpener)

 public:
  bool initialize(QString* errorString) override;
  QList<api::TaskDescription> tasks() const override;
  QString openResultsLabel() const override;
  std::optional<api::OpenedResults> openResults(const QString& folder,
                                                QString* errorString) const override;
};

}  // namespace sensode::plugin::estimation
