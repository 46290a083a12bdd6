// SPDX-License-Identifier: MIT
// A result tab plotting a time series (tasks::TimeCourseResult shape: times, column ids,
// row-major values) with Qt Charts: one line per column, a legend whose entries toggle their
// series (hidden series stay hidden across runs, by id), an optional logarithmic y axis, and
// export as PNG and SVG (QSvgGenerator). Models with events: the times events changed the state
// (TimeCourseResult::eventTimes / eventIds) are marked by dashed vertical lines with the event ids
// (EventMarksChartView), on screen and in the exports.
//
// The series read the core struct the result holds (no second table of numbers is kept). Long
// series are thinned for drawing only — per bucket of rows, the minimum and the maximum are kept,
// so peaks survive — and the table and the CSV always have every row. On the log axis,
// non-positive values cannot be drawn and are left out (the caption says how many).
#pragma once

#include <QSet>

#include <functional>
#include <memory>

#include "core/tasks/time_course_task.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/views/event_marks_chart_view.h"

class QChart;
class QCheckBox;
class QLabel;

namespace sensode::plugin {

class TimeSeriesChartView : public api::TaskResultView {
  Q_OBJECT

 public:
  using Extract = std::function<std::shared_ptr<const tasks::TimeCourseResult>(
      const std::shared_ptr<const api::TaskResult>&)>;
  // Series beyond this many start hidden (toggle them in the legend).
  static constexpr int kMaxInitiallyVisible = 20;
  // Points per series drawn at most (2 per bucket).
  static constexpr int kMaxDrawnPoints = 4000;
  // Export size when the view is not on screen.
  static constexpr int kExportWidth = 1200, kExportHeight = 750;

  TimeSeriesChartView(QString title, QString yAxisTitle, Extract extract, QWidget* parent = nullptr);

  QString title() const override { return title_; }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path,
                QString* errorString) const override;

  // Plots `series` directly (for views that derive what they plot, e.g. one parameter's
  // sensitivities); showResult() goes through the Extract function instead.
  void setSeries(std::shared_ptr<const tasks::TimeCourseResult> series);
  const std::shared_ptr<const tasks::TimeCourseResult>& series() const { return series_; }

  void setLogScale(bool on);
  bool logScale() const;
  void setSeriesVisible(const QString& id, bool visible);
  QStringList hiddenSeries() const;
  QChart* chart() const { return chart_; }
  EventMarksChartView* chartView() const { return chartView_; }
  QCheckBox* logScaleBox() const { return logY_; }

 private:
  struct Drawn {
    int skippedNonPositive = 0;
  };
  // Fills `chart` from series_ (used for the screen and for export charts).
  Drawn populate(QChart* chart, bool interactive) const;
  void rebuild();
  // y range over the visible series (decades on the log axis).
  void rescaleY(QChart* chart) const;
  void styleMarkers();
  // The marks of series_'s event times.
  QList<EventMark> eventMarks() const;

  QString title_, yAxisTitle_;
  Extract extract_;
  std::shared_ptr<const tasks::TimeCourseResult> series_;
  QSet<QString> hidden_;
  QChart* chart_ = nullptr;
  EventMarksChartView* chartView_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QLabel* caption_ = nullptr;
};

}  // namespace sensode::plugin
