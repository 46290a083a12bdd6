// SPDX-License-Identifier: MIT
// A second, tiny task plugin that proves a fourth task can join the host without touching it:
// it includes nothing but the plugin interface and Qt (no core), and is loaded from
// SENSODE_PLUGIN_PATH. Its task "filestats" counts bytes, lines and XML elements of the open
// model file, in steps with progress and cancel, and shows them in a label.
#pragma once

#include <QObject>

#include "gui/plugin_api/task_plugin.h"

class ExtraTaskPlugin : public QObject, public sensode::api::TaskPlugin {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID "org.sensode.TaskPlugin/2" FILE "extra_task_plugin.json")
  Q_INTERFACES(sensode::api::TaskPlugin)

 public:
  bool initialize(QString* errorString) override;
  QList<sensode::api::TaskDescription> tasks() const override;
};
