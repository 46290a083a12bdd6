// SPDX-License-Identifier: MIT
// The Time course task (id "timecourse") in the GUI: settings (one field table → form, JSON,
// validation), the run on the worker thread through core::tasks::runTimeCourse, the result with
// its provenance, and the three views: Chart, Table (tabs) and Statistics (side).
//
// Settings JSON keys follow the CLI's flags (sensode simulate): method ("cvodes" | "odesd",
// parsed by integrators::methodFromString), t_end, points (output times linspace(0, t_end,
// points), exactly as the CLI computes them), rtol, atol, max_steps, outputs (array of ids, the
// CLI's --outputs: only these are computed, plotted and exported; empty = all). The same settings give the
// same numbers as `sensode simulate` and as a direct runTimeCourse() call.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QList>

#include <memory>
#include <vector>

#include "core/tasks/output_grid.h"
#include "core/tasks/time_course_task.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/forms/id_picker.h"
#include "plugin/forms/options_form.h"

namespace sensode::plugin {

class RunContext;

namespace timecourse {

inline constexpr const char* kTaskId = "timecourse";

// The form's fields with their defaults, all the core's: method, rtol, atol and max_steps from
// tasks::TimeCourseOptions{}, t_end and points from core/tasks/output_grid.h (as the CLI's).
const QList<FieldSpec>& fields();

struct Settings {
  integrators::Method method = tasks::TimeCourseOptions{}.method;
  double tEnd = tasks::kDefaultEndTime;
  long points = tasks::kDefaultOutputPoints;
  std::vector<std::string> outputs;  // empty = the default columns (tasks::defaultOutputIds)
  tasks::TimeCourseOptions options;
};
// Reads settings JSON (missing keys take the defaults); throws InvalidOptions naming the key.
Settings parseSettings(const QJsonObject& json);


// The outputs chooser of the Time course and Parameter sensitivities set-up: "All outputs" or
// the checked ones of the open model's outputs (readModelOutputs: id, name, kind).
IdPicker* newOutputPicker(QWidget* parent);

// The task's result: the core result (shared with the table model and the chart), plus what
// the provenance needs.
class Result : public api::TaskResult {
 public:
  Result(std::shared_ptr<const tasks::TimeCourseResult> core, QJsonObject provenance,
         std::shared_ptr<const QHash<QString, QString>> names = {});
  api::TaskStatus status() const override;
  QString message() const override;
  QString details() const override;
  QString summary() const override;
  QJsonObject provenance() const override { return provenance_; }
  const std::shared_ptr<const tasks::TimeCourseResult>& core() const { return core_; }
  // The model's SBML names by id (the chart's labels); empty when the file has none.
  QHash<QString, QString> names() const { return names_ ? *names_ : QHash<QString, QString>{}; }

 private:
  std::shared_ptr<const tasks::TimeCourseResult> core_;
  std::shared_ptr<const QHash<QString, QString>> names_;
  QJsonObject provenance_;
};

// The worker-thread body: load (cached) and compile the model, run the core task.
std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settings, RunContext& context);

api::TaskDescription description();

}  // namespace timecourse
}  // namespace sensode::plugin
