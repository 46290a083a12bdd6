// SPDX-License-Identifier: MIT
// The PEtab objective and gradient task (id "ssgradient", kept from its first name "Steady-state
// gradient" because scripts and saved settings use it) in the GUI, over core::petab: the negative
// log-likelihood of any PEtab problem (time-course and steady-state data) and its gradient with
// respect to the estimated parameters (on their PEtab scales) by the steady-state adjoint
// (ssASA), the standard adjoint, forward sensitivities or finite differences; the measurements
// against the simulated observables per condition; the steady states the objective needed and
// their diagnostics (path, fallback reason, conservation laws, cond(J_r), stability).
//
// Settings JSON keys follow `sensode gradient`: method ("ssasa" | "adjoint" | "forward" | "fd"),
// rtol, atol (the time courses), ss_rtol, ss_atol (the steady-state criterion), fd_step; problem
// (path of the PEtab yaml; empty = the open PEtab problem); parameters (object id → value on the
// linear scale, for estimated parameters; missing ids keep their nominal values).
// Views: Observables (measured ± σ and simulated, per condition), Gradient (bar chart), Table
// (parameter, scale, values, gradient), Steady states (one column per equilibration with its
// diagnostics) and Statistics (side).
#pragma once

#include <QJsonObject>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/petab/objective.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/forms/options_form.h"
#include "plugin/gradient/measurement_chart_view.h"

namespace sensode::plugin {

class RunContext;

namespace gradient {

inline constexpr const char* kTaskId = "ssgradient";
inline constexpr const char* kDisplayName = "PEtab objective and gradient";

const QList<FieldSpec>& fields();

struct Settings {
  petab::GradientMethod method = petab::GradientMethod::Ssasa;
  petab::ObjectiveOptions options;
  QString problem;  // empty: the session's
  std::vector<std::pair<std::string, double>> parameters;  // linear-scale values by id
};
// Throws InvalidOptions naming the key.
Settings parseSettings(const QJsonObject& json);

// One estimated parameter as the run used it.
struct ParameterRow {
  std::string id;
  petab::Scale scale = petab::Scale::Lin;
  double lowerBound = 0, upperBound = 0;  // linear
  double nominal = 0;                     // linear
  double value = 0;                       // linear, as used
  bool edited = false;                    // value differs from the nominal one
};

class Result : public api::TaskResult {
 public:
  Result(std::shared_ptr<const petab::ObjectiveResult> core, std::vector<ParameterRow> rows,
         std::shared_ptr<const MeasurementPoints> measurements, QString methodName,
         double wallSeconds, QJsonObject provenance);
  api::TaskStatus status() const override { return api::TaskStatus::Succeeded; }
  QString message() const override { return {}; }
  QString summary() const override;
  QJsonObject provenance() const override { return provenance_; }
  const std::shared_ptr<const petab::ObjectiveResult>& core() const { return core_; }
  const std::vector<ParameterRow>& parameters() const { return rows_; }
  // Per measurement row (the problem's order): measured, simulated and σ.
  const std::shared_ptr<const MeasurementPoints>& measurements() const { return measurements_; }
  const QString& methodName() const { return methodName_; }
  double wallSeconds() const { return wallSeconds_; }
  // The simulated observables on a fine grid, one curve per group (null when they could not be
  // computed; curveError() says why).
  const std::shared_ptr<const SimulatedCurves>& curves() const { return curves_; }
  const QString& curveError() const { return curveError_; }
  void setCurves(std::shared_ptr<const SimulatedCurves> curves, QString error) {
    curves_ = std::move(curves);
    curveError_ = std::move(error);
  }

 private:
  std::shared_ptr<const petab::ObjectiveResult> core_;
  std::vector<ParameterRow> rows_;
  std::shared_ptr<const MeasurementPoints> measurements_;
  QString methodName_;
  double wallSeconds_ = 0;
  QJsonObject provenance_;
  std::shared_ptr<const SimulatedCurves> curves_;
  QString curveError_;
};

// The estimated parameters of `problem` with `overrides` applied (linear values by id) and the
// vector on the parameters' scales. Throws InvalidOptions for an id that is not estimated and
// for values a log scale cannot take (<= 0).
std::vector<ParameterRow> parameterRows(const petab::Problem& problem,
                                        const std::vector<std::pair<std::string, double>>& overrides,
                                        std::vector<double>* scaled);

// The problem's measurements beside the objective's simulated values and σ (aligned by row).
MeasurementPoints measurementPoints(const petab::Problem& problem,
                                    const petab::ObjectiveResult& result);

// The simulated observables at `scaled` (the estimated parameters on their scales) on a fine
// grid, one curve per (experiment, observable, observableParameters) group (core
// petab::observableCurves). Throws what the objective throws.
SimulatedCurves simulatedCurves(const petab::Problem& problem, const std::vector<double>& scaled,
                                const petab::ObjectiveOptions& options,
                                const ProgressMonitor& monitor = {});

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settings, RunContext& context);

api::TaskDescription description();

}  // namespace gradient
}  // namespace sensode::plugin
