// SPDX-License-Identifier: MIT
#include "plugin/sensitivities/sensitivity_views.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/tasks/sensitivity_comparison.h"
#include "plugin/models/number_format.h"
#include "plugin/models/record_table_model.h"
#include "plugin/sensitivities/sensitivities_task.h"
#include "plugin/views/heat_map_widget.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/time_series_chart_view.h"
#include "plugin/views/widget_export.h"

namespace sensode::plugin::sensitivities {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

const Result* resultOf(const std::shared_ptr<const api::TaskResult>& r) {
  return dynamic_cast<const Result*>(r.get());
}

}  // namespace

HeatMapView::HeatMapView(QWidget* parent) : api::TaskResultView(parent) {
  time_ = new QComboBox(this);
  time_->setObjectName(QStringLiteral("heatMapTime"));
  time_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  map_ = new HeatMapWidget(this);
  map_->setObjectName(QStringLiteral("heatMap"));
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setEnabled(false);
  connect(time_, &QComboBox::currentIndexChanged, this, [this](int i) { plot(i); });
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 4, 4, 0);
  bar->addWidget(new QLabel(tr("Scaled sensitivities (p/y)·dy/dp at t ="), this));
  bar->addWidget(time_);
  bar->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(map_, 1);
  layout->addWidget(note_);
}

void HeatMapView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  const Result* r = resultOf(result);
  if (!r) return;
  result_ = result;
  const int previous = time_->currentIndex();
  QSignalBlocker block(time_);
  time_->clear();
  for (double t : r->core()->times) time_->addItem(shortNumber(t));
  // The last time by default: sensitivities have had the whole run to build up.
  const int count = time_->count();
  time_->setCurrentIndex(previous >= 0 && previous < count && count > 0 ? previous : count - 1);
  plot(time_->currentIndex());
}

void HeatMapView::plot(int index) {
  const Result* r = resultOf(result_);
  if (!r || index < 0) return;
  const tasks::SensitivityResult& c = *r->core();
  QStringList rows, columns;
  for (const std::string& id : c.outputIds) rows << q(id);
  for (const std::string& id : c.parameterIds) columns << q(id);
  std::vector<double> values = tasks::scaledSensitivitiesAt(c, static_cast<std::size_t>(index), r->guard());
  // Grey cells: |y| <= atol, or y itself has no value at this time (0/0 in its formula).
  std::size_t undefined = 0;
  for (double v : values) undefined += std::isnan(v) ? 1 : 0;
  QStringList valueless;
  for (std::size_t iy = 0; iy < c.outputIds.size(); ++iy) {
    if (std::isnan(c.outputAt(static_cast<std::size_t>(index), iy))) {
      valueless << q(c.outputIds[iy]);
      undefined -= c.parameterIds.size();
    }
  }
  map_->setData(rows, columns, std::move(values),
                tr("(p/y)·dy/dp at t = %1").arg(time_->itemText(index)));
  QStringList notes;
  if (undefined > 0)
    notes << tr("Grey: %n entries where |y| <= atol (%1), scaled value undefined.", "",
                static_cast<int>(undefined)).arg(shortNumber(r->guard()));
  if (!valueless.isEmpty())
    notes << tr("Grey rows: %1 without a value at this time (NaN).").arg(valueless.join(QStringLiteral(", ")));
  note_->setText(notes.isEmpty() ? tr("Red: y grows with p; blue: y falls. Hover a cell for its value.")
                                 : notes.join(QLatin1Char(' ')));
}

QList<api::ExportFormat> HeatMapView::exportFormats() const { return imageExportFormats(title()); }

bool HeatMapView::exportTo(const QString& formatId, const QString& path, QString* errorString) const {
  if (map_->values().empty()) {
    if (errorString) *errorString = tr("nothing plotted yet");
    return false;
  }
  if (map_->isVisible() && map_->width() > 200)
    return exportWidgetImage(*map_, title(), formatId, path, errorString);
  // Not on screen: a copy laid out at a default size.
  const Result* r = resultOf(result_);
  HeatMapWidget copy;
  QStringList rows, columns;
  for (const std::string& id : r->core()->outputIds) rows << q(id);
  for (const std::string& id : r->core()->parameterIds) columns << q(id);
  copy.setData(rows, columns, map_->values(),
               tr("(p/y)·dy/dp at t = %1").arg(time_->currentText()));
  copy.resize(1000, 700);
  return exportWidgetImage(copy, title(), formatId, path, errorString);
}

CompareView::CompareView(QWidget* parent) : api::TaskResultView(parent) {
  hint_ = new QLabel(tr("Check \"Compare methods\" in the settings and run: the checked methods "
                        "run on the same settings, and their discrepancies from the Method "
                        "(the reference) show here."),
                     this);
  hint_->setWordWrap(true);
  measure_ = new QLabel(this);
  measure_->setObjectName(QStringLiteral("measureNote"));
  measure_->setWordWrap(true);
  measure_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  measure_->setVisible(false);
  chart_ = new TimeSeriesChartView(QStringLiteral("Discrepancy"),
                                   QStringLiteral("max discrepancy"), {}, this);
  chart_->setLogScale(true);
  model_ = new RecordTableModel(
      {QStringLiteral("method"), QStringLiteral("reference"), QStringLiteral("max discrepancy"),
       QStringLiteral("median discrepancy"), QStringLiteral("worst at t"),
       QStringLiteral("worst output"), QStringLiteral("worst parameter"),
       QStringLiteral("wall time (s)"), QStringLiteral("time / reference"), QStringLiteral("steps"),
       QStringLiteral("sensitivity evaluations"), QStringLiteral("status")});
  table_ = new TableResultView(QStringLiteral("Compare table"), model_, [](const auto&) {}, this);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(chart_);
  split->addWidget(table_);
  // The table has a row per compared method (a few): most of the height goes to the plot.
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(hint_);
  layout->addWidget(measure_);
  layout->addWidget(split, 1);
}

void CompareView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  const Result* r = resultOf(result);
  if (!r) return;
  const tasks::SensitivityResult& ref = *r->core();
  const QString refName = methodLabel(tasks::sensitivityMethodFromString(
                              r->provenance().value(QStringLiteral("method")).toString().toStdString())
                              .value_or(tasks::SensitivityMethod::Cvodes));
  QList<RecordTableModel::Row> rows;
  auto series = std::make_shared<tasks::TimeCourseResult>();
  series->times = ref.times;
  std::vector<const tasks::SensitivityDiscrepancy*> plotted;
  for (const Comparison& c : r->comparisons()) {
    const tasks::SensitivityResult& o = *c.result;
    const QString name = methodLabel(c.method);
    RecordTableModel::Row row;
    if (c.discrepancy) {
      const auto& d = *c.discrepancy;
      row.cells = {name, refName, d.maxRelative, d.medianRelative, ref.times[d.worstTime],
                   q(ref.outputIds[d.worstOutput]), q(ref.parameterIds[d.worstParameter])};
      series->columns.push_back(name.toStdString());
      plotted.push_back(&d);
    } else {
      row.cells = {name, refName, QVariant(), QVariant(), QVariant(), QString(), QString()};
    }
    row.cells << o.wallSeconds << (ref.wallSeconds > 0 ? o.wallSeconds / ref.wallSeconds : NAN)
              << qlonglong(o.stats.integrator.steps) << qlonglong(o.stats.sensitivityEvals)
              << (o.termination == tasks::Termination::Success ? QStringLiteral("ok") : q(o.message));
    rows.append(row);
  }
  for (std::size_t it = 0; it < series->times.size(); ++it)
    for (const auto* d : plotted) series->values.push_back(d->maxOverTime[it]);
  model_->setRows(rows);
  table_->showResult(result);
  chart_->setSeries(series);
  hint_->setVisible(rows.isEmpty());
  measure_->setVisible(!plotted.empty());
  if (!plotted.empty()) {
    const tasks::SensitivityDiscrepancy& d = *plotted.front();
    QString text =
        tr("Discrepancy of an entry dy/dp(t) = |method − %1| divided by the largest |%1| of its "
           "output–parameter series over time, but never by less than %2 (1000 × rtol) × the "
           "output's largest response to any parameter, max |p'·dy/dp'|, over |p|: a "
           "sensitivity that small is at the integration's noise level, so noise around an "
           "exact 0 is not called a disagreement.")
            .arg(refName, shortNumber(d.floorTolerance));
    if (d.flooredSeries > 0)
      text += QLatin1Char(' ') + tr("%n output–parameter series were smaller than that floor and "
                                    "measured against it.", "", int(d.flooredSeries));
    if (d.structuralZeros > 0)
      text += QLatin1Char(' ') + tr("%n series are structurally 0 (the parameter reaches nothing "
                                    "the output depends on) and are left out.", "",
                                    int(d.structuralZeros));
    measure_->setText(text);
  }
}

QList<api::ExportFormat> CompareView::exportFormats() const {
  return chart_->exportFormats() + table_->exportFormats();
}

bool CompareView::exportTo(const QString& formatId, const QString& path, QString* errorString) const {
  if (model_->rowCount() == 0) {
    if (errorString) *errorString = tr("no methods compared in the shown run");
    return false;
  }
  if (formatId == QLatin1String("csv")) return table_->exportTo(formatId, path, errorString);
  return chart_->exportTo(formatId, path, errorString);
}

}  // namespace sensode::plugin::sensitivities
