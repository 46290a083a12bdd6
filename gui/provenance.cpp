// SPDX-License-Identifier: MIT
#include "gui/provenance.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

namespace sensode::gui {

QString sha256OfFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash hash(QCryptographicHash::Sha256);
  if (!hash.addData(&f)) return {};
  return QString::fromLatin1(hash.result().toHex());
}

QJsonObject provenanceDocument(const api::TaskResult& result, const api::TaskDescription& task,
                               const QString& exportPath, const QString& formatId) {
  QJsonObject doc = result.provenance();
  if (!doc.contains(QStringLiteral("task"))) {
    doc.insert(QStringLiteral("task"), QJsonObject{{QStringLiteral("id"), task.id},
                                                   {QStringLiteral("name"), task.displayName}});
  }
  const QFileInfo info(exportPath);
  doc.insert(QStringLiteral("export"),
             QJsonObject{
                 {QStringLiteral("file"), info.fileName()},
                 {QStringLiteral("path"), info.absoluteFilePath()},
                 {QStringLiteral("format"), formatId},
                 {QStringLiteral("sha256"), sha256OfFile(exportPath)},
                 {QStringLiteral("bytes"), static_cast<double>(info.size())},
                 {QStringLiteral("created"),
                  QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
             });
  doc.insert(QStringLiteral("host"),
             QJsonObject{
                 {QStringLiteral("application"), QCoreApplication::applicationName()},
                 {QStringLiteral("version"), QCoreApplication::applicationVersion()},
                 {QStringLiteral("qt"), QString::fromLatin1(qVersion())},
             });
  return doc;
}

bool writeProvenance(const api::TaskResult& result, const api::TaskDescription& task,
                     const QString& exportPath, const QString& formatId,
                     const QString& provenancePath, QString* errorString) {
  const QJsonObject doc = provenanceDocument(result, task, exportPath, formatId);
  QSaveFile file(provenancePath);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (errorString) *errorString = QStringLiteral("%1: %2").arg(provenancePath, file.errorString());
    return false;
  }
  file.write(QJsonDocument(doc).toJson(QJsonDocument::Indented));
  if (!file.commit()) {
    if (errorString) *errorString = QStringLiteral("%1: %2").arg(provenancePath, file.errorString());
    return false;
  }
  return true;
}

}  // namespace sensode::gui
