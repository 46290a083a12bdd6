// SPDX-License-Identifier: MIT
// A valid Qt plugin that implements some other interface: the host must list it under
// Help ▸ Plugins as a failure ("does not implement org.sensode.TaskPlugin/2").
#pragma once

#include <QObject>
#include <QtPlugin>

class NotATaskPlugin : public QObject {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID "org.example.SomethingElse/1")
};
