// SPDX-License-Identifier: MIT
// Finds and loads task plugins, and remembers every failure with its reason for Help ▸ Plugins
// (Qt Creator's extensionsystem keeps PluginSpec::errorString() the same way).
//
// Where plugins are looked for, in this order:
//   1. every folder in SENSODE_PLUGIN_PATH (separated by ':' on Unix, ';' on Windows);
//   2. <folder of the executable>/../plugins — the build tree: build/gui/sensode-gui finds
//      build/plugins, where plugin/CMakeLists.txt puts libsensode_tasks.so;
//   3. <folder of the executable>/../lib/sensode/plugins — the installed layout
//      (bin/sensode-gui, lib/sensode/plugins/).
// Plugins linked into the executable (Q_IMPORT_PLUGIN; the tests do that) come first of all.
// A file is tried when QLibrary::isLibrary() accepts its name; the same file reached twice is
// loaded once. A task id already provided by an earlier plugin is refused and listed.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

#include "gui/plugin_api/model_editing.h"
#include "gui/plugin_api/results_opener.h"
#include "gui/plugin_api/task_plugin.h"

class QPluginLoader;

namespace sensode::gui {

struct PluginRecord {
  QString file;         // absolute path; "(built in)" for static plugins
  QString name;         // from the plugin's metadata ("Sensode tasks"), else the file name
  QString version;
  QString vendor;
  QString description;
  bool loaded = false;  // instance created, interface matched, initialize() succeeded
  QString error;        // why it failed, or why some of its tasks were refused
  QStringList taskIds;  // tasks the host accepted from it
  api::TaskPlugin* plugin = nullptr;
  // The plugin's model writer (gui/plugin_api/model_editing.h), when it implements one.
  api::ModelWriter* writer = nullptr;
  api::ResultsOpener* resultsOpener = nullptr;  // when the plugin also opens saved results
};

class PluginLoader {
 public:
  PluginLoader();
  ~PluginLoader();
  PluginLoader(const PluginLoader&) = delete;
  PluginLoader& operator=(const PluginLoader&) = delete;

  // The folders of the rule above that exist, in order, without duplicates.
  static QStringList defaultSearchPaths();

  // Loads static plugins, then every plugin file in `folders`. Call once.
  void loadAll(const QStringList& folders);

  const std::vector<PluginRecord>& records() const { return records_; }
  // Accepted tasks sorted by menu path, order, then display name.
  QList<api::TaskDescription> tasks() const;
  const api::TaskDescription* task(const QString& id) const;
  // Loaded plugins that can read `format` ("sbml", "petab") for the model browser.
  QList<const api::TaskPlugin*> modelReaders(const QString& format) const;
  // Loaded plugins that can write `format` with edited values (File ▸ Save model as...).
  QList<const api::ModelWriter*> modelWriters(const QString& format) const;
  int failureCount() const;
  // Loaded plugins that open saved results (results_opener.h), in load order.
  QList<const api::ResultsOpener*> resultsOpeners() const;

 private:
  void adopt(QObject* instance, const QJsonObject& metaData, PluginRecord record);

  std::vector<PluginRecord> records_;
  std::vector<std::unique_ptr<QPluginLoader>> loaders_;  // kept: plugins are never unloaded
  QList<api::TaskDescription> tasks_;
};

}  // namespace sensode::gui
