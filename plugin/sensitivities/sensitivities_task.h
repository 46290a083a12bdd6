// SPDX-License-Identifier: MIT
// The Parameter sensitivities task (id "sensitivities") in the GUI, over
// core::tasks::runSensitivities: dy/dp (or COPASI's scaled (p/y)·dy/dp) at the output times by
// odeSD direct, CVODES forward, PBSR, the exponential formula or finite differences.
//
// Settings JSON keys follow `sensode sensitivities`: method ("odesd" | "cvodes" | "pbsr" | "exp"
// | "fd"), t_end, points, rtol, atol, scaled, error_control, parameters (array of ids; empty
// = every parameter of the model), outputs (array of ids, the CLI's --outputs: only these are
// differentiated, plotted and exported; empty = the default outputs) and compare (array of method names: also run these on the same
// settings and report their discrepancies from `method`, the reference). Views: Chart (one
// parameter's dy/dp over time for every output; pick the parameter above the chart), Heat map
// (scaled sensitivities of every output and parameter at a chosen time), Compare (discrepancy
// table and plot, when methods were compared), Table (long format, as the CLI's CSV) and
// Statistics.
#pragma once

#include <QHash>
#include <QJsonObject>

#include <memory>
#include <optional>
#include <vector>

#include "core/tasks/output_grid.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/sensitivity_comparison.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/forms/options_form.h"

namespace sensode::plugin {

class RunContext;

namespace sensitivities {

inline constexpr const char* kTaskId = "sensitivities";

const QList<FieldSpec>& fields();

struct Settings {
  tasks::SensitivityOptions options;
  double tEnd = tasks::kDefaultEndTime;  // the CLI's (core/tasks/output_grid.h)
  long points = tasks::kDefaultOutputPoints;
  std::vector<std::string> parameters;  // empty = all
  std::vector<std::string> outputs;     // empty = the default outputs
  std::vector<tasks::SensitivityMethod> compare;  // also run these (the reference excluded)
};
// Throws InvalidOptions naming the key.
Settings parseSettings(const QJsonObject& json);

// One compared method's run and its discrepancy from the reference (none when it failed).
struct Comparison {
  tasks::SensitivityMethod method = tasks::SensitivityMethod::Cvodes;
  std::shared_ptr<const tasks::SensitivityResult> result;
  std::optional<tasks::SensitivityDiscrepancy> discrepancy;
};

class Result : public api::TaskResult {
 public:
  Result(std::shared_ptr<const tasks::SensitivityResult> core, QJsonObject provenance,
         std::vector<Comparison> comparisons = {}, double guard = 0,
         std::shared_ptr<const QHash<QString, QString>> names = {});
  api::TaskStatus status() const override;
  QString message() const override;
  QString details() const override;
  QString summary() const override;
  // What the run did instead of failing: the task's sentences, then the integrator's.
  std::vector<std::string> fallbacks() const;
  QJsonObject provenance() const override { return provenance_; }
  const std::shared_ptr<const tasks::SensitivityResult>& core() const { return core_; }
  const std::vector<Comparison>& comparisons() const { return comparisons_; }
  // |y| at or below this has no scaled sensitivity (the run's atol).
  double guard() const { return guard_; }
  // The model's SBML names by id (the chart's labels).
  QHash<QString, QString> names() const { return names_ ? *names_ : QHash<QString, QString>{}; }

 private:
  std::shared_ptr<const tasks::SensitivityResult> core_;
  QJsonObject provenance_;
  std::vector<Comparison> comparisons_;
  double guard_ = 0;
  std::shared_ptr<const QHash<QString, QString>> names_;
};

// "odeSD direct", "CVODES forward", ... as the form shows them.
QString methodLabel(tasks::SensitivityMethod method);

// One parameter's sensitivities as a time series (times × outputs), for the chart.
std::shared_ptr<const tasks::TimeCourseResult> parameterSlice(const tasks::SensitivityResult& r,
                                                              std::size_t parameter);

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settings, RunContext& context);

api::TaskDescription description();

}  // namespace sensitivities
}  // namespace sensode::plugin
