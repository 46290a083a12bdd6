// SPDX-License-Identifier: MIT
// The result views of the Parameter estimation task, each over the core's EstimationResult:
//  - Waterfall: the final objective of every start, sorted (pyPESTO's waterfall): on a log axis
//    as objective − best + 1, so the best start sits at 1 and the starts that found it form the
//    first plateau (coloured); the objective at the PEtab nominal parameters as a dashed line.
//  - Fit: the measurements with ±σ against the best fit's simulated observables, per experiment
//    (plugin/gradient/measurement_chart_view.h, the gradient task's Observables view).
//  - Parameters: per parameter the best value (scale and linear), standard error, Wald and
//    profile confidence intervals, bounds, start value, and whether it ended at a bound.
//  - Starts: every start (rank, status, objective, iterations, evaluations, time, message) and
//    its final point (linear values).
//  - Correlations: the correlation matrix of the estimates as a heat map (red +1, blue −1).
//  - Profiles: the profile likelihood of each profiled parameter with the confidence threshold
//    χ²₁(level)/2 above the optimum, and the optimum marked.
//  - Statistics (side): optimiser and why, starts at the best, objectives, χ², degrees of
//    freedom, rank and condition of the Fisher information, its eigenvalues, residuals per
//    observable, fallbacks.
#pragma once

#include <memory>

#include "gui/plugin_api/task_plugin.h"

class QLabel;

namespace sensode::plugin {
class HeatMapWidget;
}

namespace sensode::plugin::estimation {

class CorrelationView : public api::TaskResultView {
 public:
  explicit CorrelationView(QWidget* parent);
  QString title() const override { return QStringLiteral("Correlations"); }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path, QString* errorString) const override;

  HeatMapWidget* heatMap() const { return map_; }
  // The matrix as CSV: a header row of ids, then one row per parameter.
  QString toCsv() const;

 private:
  HeatMapWidget* map_ = nullptr;
  QLabel* note_ = nullptr;
  QStringList ids_;
};

QList<api::TaskResultView*> createResultViews(QWidget* parent);

}  // namespace sensode::plugin::estimation
