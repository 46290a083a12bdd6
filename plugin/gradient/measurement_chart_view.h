// SPDX-License-Identifier: MIT
// A result tab of the PEtab objective task: the measurements of one experiment (a simulation
// condition, after its pre-equilibration condition if any) against what the objective simulated
// for them — what a modeller checks first when an objective looks wrong. One colour per
// observable, and within an observable one marker shape and dash per group of measurements
// with the same observableParameters (two gels with their own scale factors are two groups):
// measured values as markers with ±σ bars, the simulated observable as one curve per group on a
// fine time grid (core petab::observableCurves, via setCurveSource). Without curves (a view fed
// only the measurement rows) the simulated values at the measurement times are joined, still
// per group. The experiment is chosen in a combo box.
//
// The x axis is time; measurements at t = inf (steady-state data) are drawn at the right of the
// last finite time, or, when an experiment has only steady-state data, over one slot per
// observable. σ bars follow the observable's transformation: m ± σ (lin), m·e^(±σ) (log),
// m·10^(±σ) (log10), since σ is on that scale.
//
// Exports: the chart as PNG/SVG (the chosen experiment) and every row of the problem as CSV in
// the columns of a PEtab simulation table (plus measurement and sigma).
#pragma once

#include <QLineF>
#include <QList>
#include <QString>

#include <functional>
#include <memory>
#include <vector>

#include "core/petab/petab_problem.h"
#include "gui/plugin_api/task_plugin.h"

class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;

namespace sensode::plugin {

// One measurement row of a PEtab problem beside what the objective simulated for it.
struct MeasurementPoint {
  QString observableId, simulationCondition, preequilibrationCondition;  // "" without pre-eq.
  double time = 0;  // +inf: at the steady state
  double measured = 0, simulated = 0, sigma = 0;
  petab::Transformation transformation = petab::Transformation::Lin;
  // The row's observableParameters as the table gives them ("scale_gel1;offset"), "" for none.
  QString group;
};
using MeasurementPoints = std::vector<MeasurementPoint>;

// The simulated observable of one group (observable, experiment, observableParameters) on a
// fine time grid, as core petab::observableCurves computed it.
struct SimulatedCurve {
  QString observableId, simulationCondition, preequilibrationCondition, group;
  std::vector<double> times, values;
};
using SimulatedCurves = std::vector<SimulatedCurve>;

class MeasurementChartView : public api::TaskResultView {
  Q_OBJECT

 public:
  using Extract = std::function<std::shared_ptr<const MeasurementPoints>(
      const std::shared_ptr<const api::TaskResult>&)>;
  static constexpr int kExportWidth = 1200, kExportHeight = 750;

  using CurveExtract = std::function<std::shared_ptr<const SimulatedCurves>(
      const std::shared_ptr<const api::TaskResult>&)>;
  MeasurementChartView(QString title, Extract extract, QWidget* parent = nullptr);
  // Where showResult() finds the simulated curves (without: lines through the simulated
  // values at the measurement times).
  void setCurveSource(CurveExtract curves) { curveSource_ = std::move(curves); }

  QString title() const override { return title_; }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path,
                QString* errorString) const override;

  // The experiments in the combo box's order ("cond" or "preeq → cond") and the chosen one.
  QStringList experiments() const;
  void setExperiment(int index);
  QComboBox* experimentBox() const { return experiment_; }
  QChart* chart() const { return chart_; }
  QCheckBox* logScaleBox() const { return logY_; }
  // Measurement rows of the chosen experiment (indices into the points).
  const std::vector<std::size_t>& shownRows() const { return shownRows_; }
  // The whole table (all experiments) as CSV.
  QString toCsv() const;
  // The σ bars drawn for the chosen experiment, in data coordinates: (x, low) to (x, high).
  QList<QLineF> sigmaBars() const;

 private:
  struct Experiment {
    QString preequilibration, simulation;
    std::vector<std::size_t> rows;
  };
  void replot();
  // Fills the chart of `view` (an ErrorBarChartView, measurement_chart_view.cpp) with the
  // chosen experiment and gives it the σ bars; returns the caption's notes.
  QStringList populate(QChartView* view) const;

  QString title_;
  Extract extract_;
  std::shared_ptr<const MeasurementPoints> points_;
  CurveExtract curveSource_;
  std::shared_ptr<const SimulatedCurves> curves_;
  std::vector<Experiment> experiments_;
  std::vector<std::size_t> shownRows_;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QComboBox* experiment_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QLabel* caption_ = nullptr;
};

}  // namespace sensode::plugin
