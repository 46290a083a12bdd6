// SPDX-License-Identifier: MIT
// A result tab plotting a time series (tasks::TimeCourseResult shape: times, column ids,
// row-major values) with Qt Charts: one line per column, an optional logarithmic y axis, and
// export as PNG and SVG (QSvgGenerator). Models with events: the times events changed the state
// (TimeCourseResult::eventTimes / eventIds) are marked by dashed vertical lines with the event ids
// (EventMarksChartView), on screen and in the exports.
//
// Which lines: with more than kMaxInitiallyVisible columns, the chart opens on those that vary
// most relative to their own range (core tasks::mostVaryingColumns), and a note above the chart
// says how many are shown and names the hidden ones. Beside the chart, a scrollable list of
// every series (checkbox, pen sample, name; the id in the tooltip) shows and hides lines; those
// choices stay across runs of the same columns. Lines are labelled by their SBML names where the
// model gives names (setNameSource), by ids otherwise; the shown lines get the first pens of
// series_palette.h, so they differ in colour or dash. Exports have a legend of the shown lines.
//
// The series read the core struct the result holds (no second table of numbers is kept). Long
// series are thinned for drawing only — per bucket of rows, the minimum and the maximum are kept,
// so peaks survive — and the table and the CSV always have every row. On the log axis,
// non-positive values cannot be drawn and are left out (the caption says how many).
#pragma once

#include <QHash>
#include <QSet>

#include <functional>
#include <memory>

#include "core/tasks/time_course_task.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/views/event_marks_chart_view.h"

class QChart;
class QCheckBox;
class QLabel;
class QListWidget;
class QListWidgetItem;

namespace sensode::plugin {

class TimeSeriesChartView : public api::TaskResultView {
  Q_OBJECT

 public:
  using Extract = std::function<std::shared_ptr<const tasks::TimeCourseResult>(
      const std::shared_ptr<const api::TaskResult>&)>;
  using Names = std::function<QHash<QString, QString>(const std::shared_ptr<const api::TaskResult>&)>;
  // At most this many lines are shown when a result opens (the most varying ones).
  static constexpr int kMaxInitiallyVisible = 12;
  // Hidden series the note names before "and N more" (the tooltip has them all).
  static constexpr int kNamedHidden = 8;
  // Widest the series list beside the chart gets (pixels).
  static constexpr int kListWidth = 200;
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
  // Display names by column id (SBML names); ids without a name are shown as they are.
  void setDisplayNames(QHash<QString, QString> names);
  // Where showResult() finds the display names of a result.
  void setNameSource(Names names) { nameSource_ = std::move(names); }
  // What a column is labelled with: its name, "name (id)" when two columns share the name.
  QString label(const QString& id) const;
  const std::shared_ptr<const tasks::TimeCourseResult>& series() const { return series_; }

  void setLogScale(bool on);
  bool logScale() const;
  void setSeriesVisible(const QString& id, bool visible);
  QStringList hiddenSeries() const;
  QChart* chart() const { return chart_; }
  EventMarksChartView* chartView() const { return chartView_; }
  QCheckBox* logScaleBox() const { return logY_; }
  // The list of every series beside the chart (checked = shown; item data Qt::UserRole = id).
  QListWidget* seriesList() const { return list_; }
  // The note on which series are shown and which are hidden (empty when all are shown).
  QLabel* seriesNote() const { return seriesNote_; }

 private:
  struct Drawn {
    int skippedNonPositive = 0;
  };
  // Fills `chart` from series_ (used for the screen and for export charts).
  Drawn populate(QChart* chart, bool interactive) const;
  void rebuild();
  // hidden_ for a new result: the most varying columns shown, the rest hidden.
  void chooseDefaultSeries();
  void fillSeriesList();
  void updateSeriesNote();
  void findSharedNames();
  // y range over the visible series (decades on the log axis).
  void rescaleY(QChart* chart) const;
  // The marks of series_'s event times.
  QList<EventMark> eventMarks() const;

  QString title_, yAxisTitle_;
  Extract extract_;
  std::shared_ptr<const tasks::TimeCourseResult> series_;
  QSet<QString> hidden_;
  QHash<QString, QString> names_;
  QSet<QString> sharedNames_;  // names that more than one column has
  Names nameSource_;
  // Pen index per column: the default-shown columns first, most varying first.
  std::vector<std::size_t> penOf_;
  // The columns hidden_ was chosen for, and whether the user changed it since.
  std::vector<std::string> chosenFor_;
  bool userChoice_ = false;
  QChart* chart_ = nullptr;
  EventMarksChartView* chartView_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QLabel* caption_ = nullptr;
  QLabel* seriesNote_ = nullptr;
  QListWidget* list_ = nullptr;
};

}  // namespace sensode::plugin
