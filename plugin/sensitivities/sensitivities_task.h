// SPDX-License-Identifier: MIT
// The Parameter sensitivities task (id "sensitivities") in the GUI, over
// core::tasks::runSensitivities: dy/dp (or COPASI's scaled (p/y)·dy/dp) at the output times by
// odeSD direct, CVODES forward, PBSR, the exponential formula or finite differences.
//
// Settings JSON keys follow `sensode sensitivities`: method ("odesd" | "cvodes" | "pbsr" | "exp"
// | "fd"), t_end, points, rtol, atol, scaled, error_control, and parameters (array of ids; empty
// = every parameter of the model). Views: Chart (one parameter's dy/dp over time for every
// output; pick the parameter above the chart), Table (long format, as the CLI's CSV) and
// Statistics.
#pragma once

#include <QJsonObject>

#include <memory>

#include "core/tasks/sensitivities_task.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/forms/options_form.h"

namespace sensode::plugin {

class RunContext;

namespace sensitivities {

inline constexpr const char* kTaskId = "sensitivities";

const QList<FieldSpec>& fields();

struct Settings {
  tasks::SensitivityOptions options;
  double tEnd = 50;
  long points = 101;
  std::vector<std::string> parameters;  // empty = all
};
// Throws InvalidOptions naming the key.
Settings parseSettings(const QJsonObject& json);

class Result : public api::TaskResult {
 public:
  Result(std::shared_ptr<const tasks::SensitivityResult> core, QJsonObject provenance);
  api::TaskStatus status() const override;
  QString message() const override;
  QString summary() const override;
  QJsonObject provenance() const override { return provenance_; }
  const std::shared_ptr<const tasks::SensitivityResult>& core() const { return core_; }

 private:
  std::shared_ptr<const tasks::SensitivityResult> core_;
  QJsonObject provenance_;
};

// One parameter's sensitivities as a time series (times × outputs), for the chart.
std::shared_ptr<const tasks::TimeCourseResult> parameterSlice(const tasks::SensitivityResult& r,
                                                              std::size_t parameter);

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settings, RunContext& context);

api::TaskDescription description();

}  // namespace sensitivities
}  // namespace sensode::plugin
