// SPDX-License-Identifier: MIT
// An optional second interface of a task plugin: results saved by a run elsewhere (a folder the
// CLI, a cluster job or a killed run wrote) opened in the task's own views, without running.
// The host asks every loaded plugin for it with qobject_cast (as for TaskPlugin), adds one
// File menu entry per opener and shows what openResults() returns in the task's panel. A plugin
// without it is unaffected, so TaskPlugin's IID stays as it is.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QtPlugin>

#include <memory>
#include <optional>

#include "gui/plugin_api/task_plugin.h"

namespace sensode::api {

struct OpenedResults {
  QString taskId;                           // the task whose panel shows them
  std::shared_ptr<const TaskResult> result;  // shown as a finished run's result
  QJsonObject settings;                      // the run's settings, for the task's set-up form
};

class ResultsOpener {
 public:
  virtual ~ResultsOpener() = default;
  // The File menu entry, "Open estimation results...".
  virtual QString openResultsLabel() const = 0;
  // Reads `folder`; nullopt with a one-line reason naming the folder when it cannot. Runs on the
  // GUI thread: it must not compute for long (a re-evaluation of one point is fine).
  virtual std::optional<OpenedResults> openResults(const QString& folder,
                                                   QString* errorString) const = 0;
};

}  // namespace sensode::api

#define SENSODE_RESULTS_OPENER_IID "org.sensode.ResultsOpener/1"
Q_DECLARE_INTERFACE(sensode::api::ResultsOpener, SENSODE_RESULTS_OPENER_IID)
