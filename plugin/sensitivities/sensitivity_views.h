// SPDX-License-Identifier: MIT
// The sensitivity task's two derived views:
//  - Heat map: the scaled sensitivities (p/y)·dy/dp of every output (rows) and parameter
//    (columns) at a chosen output time (core tasks::scaledSensitivitiesAt), so the parameters
//    that matter stand out at a glance, as in COPASI's sensitivity matrix.
//  - Compare: after a run with "Compare methods", each compared method's discrepancy from the
//    reference (core tasks::compareSensitivities): a table of max/median discrepancies, where
//    the worst entry is, wall time and work, a plot of the maximum over time per method on a
//    log axis, and a note saying how a discrepancy is measured (relative to the series' own
//    size, never to less than rtol × the output's largest response; structural zeros left
//    out), so that noise around an exact 0 is not read as methods disagreeing.
#pragma once

#include <memory>

#include "gui/plugin_api/task_plugin.h"

class QComboBox;
class QLabel;

namespace sensode::plugin {

class HeatMapWidget;
class RecordTableModel;
class TableResultView;
class TimeSeriesChartView;

namespace sensitivities {

class HeatMapView : public api::TaskResultView {
 public:
  explicit HeatMapView(QWidget* parent);
  QString title() const override { return QStringLiteral("Heat map"); }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path, QString* errorString) const override;

  QComboBox* timeBox() const { return time_; }
  HeatMapWidget* heatMap() const { return map_; }

 private:
  void plot(int timeIndex);

  QComboBox* time_ = nullptr;
  HeatMapWidget* map_ = nullptr;
  QLabel* note_ = nullptr;
  std::shared_ptr<const api::TaskResult> result_;
};

class CompareView : public api::TaskResultView {
 public:
  explicit CompareView(QWidget* parent);
  QString title() const override { return QStringLiteral("Compare"); }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path, QString* errorString) const override;

  RecordTableModel* tableModel() const { return model_; }
  TimeSeriesChartView* chart() const { return chart_; }
  // How the discrepancies were measured (the scale, the floor, what was left out).
  QLabel* measureNote() const { return measure_; }

 private:
  QLabel* hint_ = nullptr;
  QLabel* measure_ = nullptr;
  TimeSeriesChartView* chart_ = nullptr;
  TableResultView* table_ = nullptr;
  RecordTableModel* model_ = nullptr;
};

}  // namespace sensitivities
}  // namespace sensode::plugin
