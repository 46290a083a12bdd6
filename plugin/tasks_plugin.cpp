// SPDX-License-Identifier: MIT
#include "plugin/tasks_plugin.h"

#include <exception>

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

}  // namespace sensode::plugin
