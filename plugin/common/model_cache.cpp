// SPDX-License-Identifier: MIT
#include "plugin/common/model_cache.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QVariant>

#include <chrono>
#include <list>
#include <mutex>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/ode_system.h"
#include "gui/native_cache_preference.h"

namespace sensode::plugin {

namespace {

struct Entry {
  QString path, sha256;
  std::shared_ptr<const symbolic::CompiledModel> prototype;
  std::shared_ptr<const QHash<QString, QString>> names;
};

constexpr std::size_t kCapacity = 4;

std::shared_ptr<const QHash<QString, QString>> namesOf(const model::Model& m) {
  auto names = std::make_shared<QHash<QString, QString>>();
  const auto add = [&](const std::string& id, const std::string& name) {
    if (!name.empty()) names->insert(QString::fromStdString(id), QString::fromStdString(name));
  };
  for (const auto& c : m.compartments) add(c.id, c.name);
  for (const auto& sp : m.species) add(sp.id, sp.name);
  for (const auto& p : m.parameters) add(p.id, p.name);
  for (const auto& r : m.reactions) add(r.id, r.name);
  return names;
}
std::mutex cacheMutex;
std::list<Entry> cache;  // most recently used first

}  // namespace

QString sha256OfFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    throw Error(path.toStdString() + ": cannot open file (" + f.errorString().toStdString() + ")");
  }
  QCryptographicHash hash(QCryptographicHash::Sha256);
  if (!hash.addData(&f)) throw Error(path.toStdString() + ": read error");
  return QString::fromLatin1(hash.result().toHex());
}

LoadedModel loadModel(const QString& pathIn, const std::function<void(const QString&)>& phase) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  LoadedModel loaded;
  loaded.path = QFileInfo(pathIn).absoluteFilePath();
  loaded.sha256 = sha256OfFile(loaded.path);

  {
    std::lock_guard lock(cacheMutex);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->path == loaded.path && it->sha256 == loaded.sha256) {
        cache.splice(cache.begin(), cache, it);
        loaded.model = it->prototype->clone();
        loaded.names = it->names;
        loaded.fromCache = true;
        return loaded;
      }
    }
  }

  // The importer reads the file by path so that comp external model files resolve against it;
  // hashing again afterwards makes sure the hash describes the bytes that were imported.
  const model::Model m = model::importSbmlFile(QFile::encodeName(loaded.path).toStdString());
  if (phase) phase(QStringLiteral("Compiling the model..."));
  // The host's Settings ▸ Use the compiled-model cache (gui/native_cache_preference.h).
  symbolic::NativeOptions native;
  const QVariant useCache = qApp ? qApp->property(gui::kNativeCacheProperty) : QVariant();
  native.useCache = !useCache.isValid() || useCache.toBool();
  auto prototype = namingFileOfErrors(loaded.path.toStdString(), [&] {
    return std::make_shared<const symbolic::CompiledModel>(symbolic::buildOdeSystem(m), native);
  });
  if (sha256OfFile(loaded.path) != loaded.sha256) {
    throw Error(loaded.path.toStdString() + ": the file changed while it was being read; run again");
  }
  loaded.model = prototype->clone();
  loaded.names = namesOf(m);
  loaded.loadSeconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::lock_guard lock(cacheMutex);
  cache.push_front({loaded.path, loaded.sha256, std::move(prototype), loaded.names});
  if (cache.size() > kCapacity) cache.pop_back();
  return loaded;
}

void clearModelCache() {
  std::lock_guard lock(cacheMutex);
  cache.clear();
}

}  // namespace sensode::plugin
