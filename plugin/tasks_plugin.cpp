// SPDX-License-Identifier: MIT
#include "plugin/tasks_plugin.h"

#include <QFile>

#include <exception>

#include "core/model/sbml_writer.h"

#include "plugin/common/model_overview.h"
#include "plugin/common/petab_overview.h"
#include "plugin/gradient/gradient_task.h"
#include "plugin/sensitivities/sensitivities_task.h"
#include "plugin/time_course/time_course_task.h"

namespace sensode::plugin {

bool SensodeTasksPlugin::initialize(QString* errorString) {
  (void)errorString;
  return true;
}

QList<api::TaskDescription> SensodeTasksPlugin::tasks() const {
  return {timecourse::description(), sensitivities::description(), gradient::description()};
}

QStringList SensodeTasksPlugin::modelFormats() const {
  return {QStringLiteral("sbml"), QStringLiteral("petab")};
}

std::optional<api::ModelOverview> SensodeTasksPlugin::readModel(const QString& path,
                                                                QString* errorString) const {
  try {
    return isPetabFile(path) ? readPetabOverview(path) : readModelOverview(path);
  } catch (const std::exception& e) {
    if (errorString) *errorString = QString::fromStdString(e.what());
    return std::nullopt;
  }
}

QStringList SensodeTasksPlugin::writableFormats() const { return {QStringLiteral("sbml")}; }

bool SensodeTasksPlugin::saveModel(const api::ModelSession& session, const QString& path,
                                   QStringList* warnings, QString* errorString) const {
  try {
    model::ValueEdits values;
    for (auto it = session.overrides.cbegin(); it != session.overrides.cend(); ++it)
      values.emplace_back(it.key().toStdString(), it.value());
    const auto written = model::writeSbmlWithValues(QFile::encodeName(session.filePath).toStdString(),
                                                    values, QFile::encodeName(path).toStdString());
    if (warnings)
      for (const std::string& w : written) *warnings << QString::fromStdString(w);
    return true;
  } catch (const std::exception& e) {
    if (errorString) *errorString = QString::fromStdString(e.what());
    return false;
  }
}

}  // namespace sensode::plugin
