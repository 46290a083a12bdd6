// SPDX-License-Identifier: MIT
#include "plugin/estimation/estimation_plugin.h"

#include "plugin/estimation/estimation_task.h"
#include "plugin/estimation/results_folder.h"

namespace sensode::plugin::estimation {

bool SensodeEstimationPlugin::initialize(QString* errorString) {
  (void)errorString;
  return true;
}

QList<api::TaskDescription> SensodeEstimationPlugin::tasks() const { return {description()}; }

QString SensodeEstimationPlugin::openResultsLabel() const {
  return QStringLiteral("Estimation Results...");
}

std::optional<api::OpenedResults> SensodeEstimationPlugin::openResults(const QString& folder,
                                                                       QString* errorString) const {
  return openResultsFolder(folder, errorString);
}

}  // namespace sensode::plugin::estimation
