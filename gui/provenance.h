// SPDX-License-Identifier: MIT
// The provenance file written beside every export: the result's own provenance (model file and
// SHA-256, task settings, method, tolerances, derivative source, Sensode version — filled in by
// the task, which knows them) plus what the host knows: the exported file with its own SHA-256,
// the format, the time, and the application.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include "gui/plugin_api/task_plugin.h"

namespace sensode::gui {

// Lower-case hex SHA-256 of a file's bytes, or an empty string when it cannot be read.
QString sha256OfFile(const QString& path);

QJsonObject provenanceDocument(const api::TaskResult& result, const api::TaskDescription& task,
                               const QString& exportPath, const QString& formatId);

bool writeProvenance(const api::TaskResult& result, const api::TaskDescription& task,
                     const QString& exportPath, const QString& formatId,
                     const QString& provenancePath, QString* errorString);

}  // namespace sensode::gui
