// SPDX-License-Identifier: MIT
// The Parameter estimation task (id "estimation") of the sensode_estimation plugin, over
// core/estimation: fit the estimated parameters of a PEtab problem to its measurements from N
// seeded starts (Latin hypercube in the bounds), with the statistics of the best fit and
// likelihood profiles.
//
// Settings JSON keys follow `sensode estimate`: optimizer ("auto" | "ls" | "qn"), starts, seed,
// gradient ("forward" | "adjoint" | "ssasa" | "fd"), threads (0: every core), max_iterations,
// rtol, atol (the time courses), use_start_values (start 1 at the start values); problem (path
// of the PEtab yaml; empty = the open PEtab problem); parameters (object id → {estimate, lower,
// upper, start}, LINEAR values as the PEtab parameter table has them; only what differs from
// the table; missing keys keep the table's); profile (array of parameter ids).
#pragma once

#include <QJsonObject>

#include <memory>
#include <string>
#include <vector>

#include "core/estimation/estimation.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/forms/options_form.h"
#include "plugin/gradient/measurement_chart_view.h"

namespace sensode::plugin {

class RunContext;

namespace estimation {

inline constexpr const char* kTaskId = "estimation";
inline constexpr const char* kDisplayName = "Parameter estimation";
// Starts whose objective is within this of the best count as having found it (the issue's
// success criterion; the waterfall colours them).
inline constexpr double kConvergedTolerance = 1e-3;

const QList<FieldSpec>& fields();

// "Levenberg–Marquardt least squares", "quasi-Newton (L-BFGS)" (the one that ran; never Auto).
QString optimizerLabel(sensode::estimation::Optimizer optimizer);

// What the set-up table changed for one parameter (linear values); unset fields keep the PEtab
// table's.
struct ParameterChoice {
  std::string id;
  std::optional<bool> estimate;
  std::optional<double> lower, upper, start;
};

struct Settings {
  sensode::estimation::EstimationOptions options;
  QString problem;  // empty: the session's
  std::vector<ParameterChoice> parameters;
};
// Throws InvalidOptions naming the key.
Settings parseSettings(const QJsonObject& json);

// The problem's parameters to fit (core defaults from the PEtab table) with `choices` applied,
// on the scales. Throws InvalidOptions naming the parameter for an id the table does not
// estimate, a bound or start a log scale cannot take (<= 0), lower >= upper, or a start outside
// the bounds.
std::vector<sensode::estimation::EstimatedParameter> fittedParameters(
    const petab::Problem& problem, const std::vector<ParameterChoice>& choices);

class Result : public api::TaskResult {
 public:
  Result(std::shared_ptr<const sensode::estimation::EstimationResult> core,
         std::shared_ptr<const MeasurementPoints> fit, double wallSeconds, QJsonObject provenance);
  api::TaskStatus status() const override { return api::TaskStatus::Succeeded; }
  QString message() const override { return {}; }
  QString summary() const override;
  QJsonObject provenance() const override { return provenance_; }
  const std::shared_ptr<const sensode::estimation::EstimationResult>& core() const { return core_; }
  // The measurements beside the best fit's simulated observables (the problem's row order).
  const std::shared_ptr<const MeasurementPoints>& fit() const { return fit_; }
  // The best fit's observables on a fine grid, one curve per observable-parameter group (null
  // when their simulation failed: the Fit tab then joins the values at the measurement times).
  const std::shared_ptr<const SimulatedCurves>& fitCurves() const { return fitCurves_; }
  void setFitCurves(std::shared_ptr<const SimulatedCurves> curves) { fitCurves_ = std::move(curves); }
  double wallSeconds() const { return wallSeconds_; }
  // Starts whose objective is within kConvergedTolerance of the best.
  int startsAtBest() const;
  // Where the result came from when not from a complete run ("cancelled after 3 of 20 starts",
  // "from results-dir"): heads the summary.
  void setNote(QString note) { note_ = std::move(note); }

 private:
  std::shared_ptr<const sensode::estimation::EstimationResult> core_;
  std::shared_ptr<const MeasurementPoints> fit_;
  std::shared_ptr<const SimulatedCurves> fitCurves_;
  double wallSeconds_ = 0;
  QJsonObject provenance_;
  QString note_;
};

std::shared_ptr<const api::TaskResult> run(const api::ModelSession& session,
                                           const QJsonObject& settings, RunContext& context);

api::TaskDescription description();

}  // namespace estimation
}  // namespace sensode::plugin
