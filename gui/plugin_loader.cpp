// SPDX-License-Identifier: MIT
#include "gui/plugin_loader.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonObject>
#include <QLibrary>
#include <QPluginLoader>
#include <QSet>
#include <QStaticPlugin>

#include <algorithm>

namespace sensode::gui {

PluginLoader::PluginLoader() = default;

// Plugins stay loaded for the life of the process: widgets, runners and results they created may
// outlive any point at which unloading would be safe.
PluginLoader::~PluginLoader() = default;

QStringList PluginLoader::defaultSearchPaths() {
  QStringList candidates;
  const QString env = qEnvironmentVariable("SENSODE_PLUGIN_PATH");
  if (!env.isEmpty()) candidates += env.split(QDir::listSeparator(), Qt::SkipEmptyParts);
  const QString exeDir = QCoreApplication::applicationDirPath();
  candidates << exeDir + QStringLiteral("/../plugins")
             << exeDir + QStringLiteral("/../lib/sensode/plugins");

  QStringList folders;
  for (const QString& c : candidates) {
    const QFileInfo info(c);
    if (!info.isDir()) continue;
    const QString canonical = info.canonicalFilePath();
    if (!folders.contains(canonical)) folders << canonical;
  }
  return folders;
}

void PluginLoader::loadAll(const QStringList& folders) {
  for (const QStaticPlugin& sp : QPluginLoader::staticPlugins()) {
    PluginRecord record;
    record.file = QStringLiteral("(built in)");
    adopt(sp.instance(), sp.metaData(), std::move(record));
  }

  QSet<QString> seen;
  for (const QString& folder : folders) {
    const QDir dir(folder);
    const QStringList names = dir.entryList(QDir::Files | QDir::Readable, QDir::Name);
    for (const QString& name : names) {
      if (!QLibrary::isLibrary(name)) continue;
      const QString path = QFileInfo(dir.absoluteFilePath(name)).canonicalFilePath();
      if (path.isEmpty() || seen.contains(path)) continue;
      seen.insert(path);

      auto loader = std::make_unique<QPluginLoader>(path);
      PluginRecord record;
      record.file = path;
      QObject* instance = loader->instance();
      if (!instance) {
        record.name = QFileInfo(path).fileName();
        record.error = loader->errorString();
        records_.push_back(std::move(record));
        continue;
      }
      const QJsonObject metaData = loader->metaData();
      loaders_.push_back(std::move(loader));
      adopt(instance, metaData, std::move(record));
    }
  }

  std::stable_sort(tasks_.begin(), tasks_.end(),
                   [](const api::TaskDescription& a, const api::TaskDescription& b) {
                     if (a.menuPath != b.menuPath) return a.menuPath < b.menuPath;
                     if (a.order != b.order) return a.order < b.order;
                     return a.displayName < b.displayName;
                   });
}

void PluginLoader::adopt(QObject* instance, const QJsonObject& metaData, PluginRecord record) {
  const QJsonObject info = metaData.value(QStringLiteral("MetaData")).toObject();
  record.name = info.value(QStringLiteral("name")).toString();
  if (record.name.isEmpty()) {
    record.name = record.file.startsWith(QLatin1Char('('))
                      ? QString::fromLatin1(instance ? instance->metaObject()->className() : "?")
                      : QFileInfo(record.file).fileName();
  }
  record.version = info.value(QStringLiteral("version")).toString();
  record.vendor = info.value(QStringLiteral("vendor")).toString();
  record.description = info.value(QStringLiteral("description")).toString();

  auto* plugin = qobject_cast<api::TaskPlugin*>(instance);
  if (!plugin) {
    const QString iid = metaData.value(QStringLiteral("IID")).toString();
    record.error = QStringLiteral("does not implement %1 (its interface id is '%2')")
                       .arg(QStringLiteral(SENSODE_TASK_PLUGIN_IID), iid);
    records_.push_back(std::move(record));
    return;
  }
  QString why;
  if (!plugin->initialize(&why)) {
    record.error = why.isEmpty() ? QStringLiteral("initialize() failed without a reason")
                                 : QStringLiteral("initialize() failed: ") + why;
    records_.push_back(std::move(record));
    return;
  }
  record.plugin = plugin;
  record.writer = qobject_cast<api::ModelWriter*>(instance);
  record.resultsOpener = qobject_cast<api::ResultsOpener*>(instance);
  record.loaded = true;

  QStringList refused;
  for (const api::TaskDescription& t : plugin->tasks()) {
    QString problem;
    if (t.id.isEmpty()) {
      problem = QStringLiteral("a task without an id ('%1')").arg(t.displayName);
    } else if (task(t.id)) {
      problem = QStringLiteral("task '%1' is already provided by another plugin").arg(t.id);
    } else if (!t.createSetupWidget || !t.createRunner || !t.createResultViews) {
      problem = QStringLiteral("task '%1' lacks a set-up, runner or result-view factory").arg(t.id);
    }
    if (!problem.isEmpty()) {
      refused << problem;
      continue;
    }
    tasks_.append(t);
    record.taskIds << t.id;
  }
  if (!refused.isEmpty()) record.error = QStringLiteral("refused: ") + refused.join(QStringLiteral("; "));
  records_.push_back(std::move(record));
}

QList<api::TaskDescription> PluginLoader::tasks() const { return tasks_; }

const api::TaskDescription* PluginLoader::task(const QString& id) const {
  for (const api::TaskDescription& t : tasks_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

QList<const api::TaskPlugin*> PluginLoader::modelReaders(const QString& format) const {
  QList<const api::TaskPlugin*> readers;
  for (const PluginRecord& r : records_) {
    if (r.loaded && r.plugin && r.plugin->modelFormats().contains(format)) readers << r.plugin;
  }
  return readers;
}

QList<const api::ModelWriter*> PluginLoader::modelWriters(const QString& format) const {
  QList<const api::ModelWriter*> writers;
  for (const PluginRecord& r : records_) {
    if (r.loaded && r.writer && r.writer->writableFormats().contains(format)) writers << r.writer;
  }
  return writers;
}

int PluginLoader::failureCount() const {
  return static_cast<int>(std::count_if(records_.begin(), records_.end(),
                                        [](const PluginRecord& r) { return !r.error.isEmpty(); }));
}

QList<const api::ResultsOpener*> PluginLoader::resultsOpeners() const {
  QList<const api::ResultsOpener*> out;
  for (const PluginRecord& r : records_)
    if (r.loaded && r.resultsOpener) out.append(r.resultsOpener);
  return out;
}

}  // namespace sensode::gui
