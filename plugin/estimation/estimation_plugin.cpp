// SPDX-License-Identifier: MIT
#include "plugin/estimation/estimation_plugin.h"

#include "plugin/estimation/estimation_task.h"

namespace sensode::plugin::estimation {

bool SensodeEstimationPlugin::initialize(QString* errorString) {
  (void)errorString;
  return true;
}

QList<api::TaskDescription> SensodeEstimationPlugin::tasks() const { return {description()}; }

}  // namespace sensode::plugin::estimation
