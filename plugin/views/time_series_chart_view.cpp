// SPDX-License-Identifier: MIT
#include "plugin/views/time_series_chart_view.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <tuple>
#include <cmath>
#include <limits>

#include "plugin/views/axis_range.h"
#include "plugin/views/event_marks_chart_view.h"
#include "plugin/views/widget_export.h"

namespace sensode::plugin {

namespace {

// Rows to draw for one column: all of them, or per bucket the rows of the minimum and maximum.
QList<QPointF> drawnPoints(const tasks::TimeCourseResult& s, std::size_t column, bool positiveOnly,
                           int* skipped) {
  const std::size_t nt = s.times.size();
  QList<QPointF> points;
  auto usable = [&](double y) {
    if (!std::isfinite(y)) return false;
    if (positiveOnly && !(y > 0)) {
      ++*skipped;
      return false;
    }
    return true;
  };
  const std::size_t limit = TimeSeriesChartView::kMaxDrawnPoints;
  if (nt <= limit) {
    points.reserve(static_cast<qsizetype>(nt));
    for (std::size_t i = 0; i < nt; ++i) {
      const double y = s.at(i, column);
      if (usable(y)) points.append(QPointF(s.times[i], y));
    }
    return points;
  }
  const std::size_t bucket = (nt + limit / 2 - 1) / (limit / 2);
  points.reserve(static_cast<qsizetype>(limit + 2));
  for (std::size_t start = 0; start < nt; start += bucket) {
    const std::size_t end = std::min(nt, start + bucket);
    std::size_t lo = nt, hi = nt;
    for (std::size_t i = start; i < end; ++i) {
      const double y = s.at(i, column);
      if (!usable(y)) continue;
      if (lo == nt || y < s.at(lo, column)) lo = i;
      if (hi == nt || y > s.at(hi, column)) hi = i;
    }
    if (lo == nt) continue;
    const std::size_t first = std::min(lo, hi), second = std::max(lo, hi);
    points.append(QPointF(s.times[first], s.at(first, column)));
    if (second != first) points.append(QPointF(s.times[second], s.at(second, column)));
  }
  return points;
}

// Ten distinguishable colours (the Tableau 10 / matplotlib "tab10" palette); after ten lines the
// colours repeat with dashes, then dots, so no two of the first thirty lines look alike.
QPen seriesPen(std::size_t index) {
  static const QRgb colours[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine};
  QPen pen(QColor::fromRgb(colours[index % 10]));
  pen.setWidthF(2.0);
  pen.setStyle(styles[(index / 10) % 3]);
  return pen;
}

}  // namespace

TimeSeriesChartView::TimeSeriesChartView(QString title, QString yAxisTitle, Extract extract,
                                         QWidget* parent)
    : api::TaskResultView(parent), title_(std::move(title)), yAxisTitle_(std::move(yAxisTitle)),
      extract_(std::move(extract)) {
  chart_ = new QChart;
  chart_->setAnimationOptions(QChart::NoAnimation);
  chart_->legend()->setAlignment(Qt::AlignRight);
  chart_->setMargins(QMargins(4, 4, 4, 4));
  chartView_ = new EventMarksChartView(chart_, this);
  chartView_->setObjectName(QStringLiteral("chartView"));
  chartView_->setRenderHint(QPainter::Antialiasing);
  chartView_->setRubberBand(QChartView::RectangleRubberBand);

  logY_ = new QCheckBox(tr("Logarithmic y axis"), this);
  logY_->setObjectName(QStringLiteral("logScale"));
  connect(logY_, &QCheckBox::toggled, this, &TimeSeriesChartView::rebuild);
  caption_ = new QLabel(this);
  // Wraps rather than widening the window: its one-line width would be the tab's minimum.
  caption_->setWordWrap(true);
  caption_->setEnabled(false);

  auto* bar = new QHBoxLayout;
  bar->addWidget(logY_);
  bar->addSpacing(12);
  bar->addWidget(caption_, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(chartView_, 1);
  rebuild();
}

void TimeSeriesChartView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  if (extract_) setSeries(extract_(result));
}

void TimeSeriesChartView::setSeries(std::shared_ptr<const tasks::TimeCourseResult> series) {
  series_ = std::move(series);
  rebuild();
  chartView_->setEventMarks(eventMarks());
}

QList<EventMark> TimeSeriesChartView::eventMarks() const {
  QList<EventMark> marks;
  if (!series_) return marks;
  for (std::size_t i = 0; i < series_->eventTimes.size(); ++i) {
    marks.append({series_->eventTimes[i], i < series_->eventIds.size()
                                              ? QString::fromStdString(series_->eventIds[i])
                                              : QString()});
  }
  return marks;
}

bool TimeSeriesChartView::logScale() const { return logY_->isChecked(); }

void TimeSeriesChartView::setLogScale(bool on) { logY_->setChecked(on); }

void TimeSeriesChartView::setSeriesVisible(const QString& id, bool visible) {
  if (visible) {
    hidden_.remove(id);
  } else {
    hidden_.insert(id);
  }
  // In place: called from a legend marker's clicked(), so nothing may be deleted here.
  for (QAbstractSeries* series : chart_->series()) {
    if (series->name() == id) series->setVisible(visible);
  }
  rescaleY(chart_);
  styleMarkers();
}

void TimeSeriesChartView::rescaleY(QChart* chart) const {
  const QList<QAbstractAxis*> axes = chart->axes(Qt::Vertical);
  if (axes.isEmpty()) return;
  QAbstractAxis* y = axes.first();
  const bool log = y->type() == QAbstractAxis::AxisTypeLogValue;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (QAbstractSeries* series : chart->series()) {
    if (!series->isVisible()) continue;
    for (const QPointF& p : static_cast<QLineSeries*>(series)->points()) {
      lo = std::min(lo, p.y());
      hi = std::max(hi, p.y());
    }
  }
  std::tie(lo, hi) = dataRangeOrDefault(lo, hi, log);
  if (log) {
    const auto [a, b] = logDecadeRange(lo, hi);
    y->setRange(a, b);
  } else {
    if (lo == hi) {
      const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
      lo -= pad;
      hi += pad;
    }
    setNiceRange(static_cast<QValueAxis*>(y), lo, hi);
  }
}

QStringList TimeSeriesChartView::hiddenSeries() const {
  QStringList ids(hidden_.begin(), hidden_.end());
  ids.sort();
  return ids;
}

TimeSeriesChartView::Drawn TimeSeriesChartView::populate(QChart* chart, bool interactive) const {
  Drawn drawn;
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  if (!series_ || series_->times.empty()) {
    chart->setTitle(tr("Run the task to plot its results here."));
    return drawn;
  }
  chart->setTitle({});
  const bool log = logY_->isChecked();

  QValueAxis* x = makeLinearAxis();
  x->setTitleText(tr("time"));
  setNiceRange(x, series_->times.front(), series_->times.back());
  QAbstractAxis* y = makeValueAxis(log);
  y->setTitleText(yAxisTitle_);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  for (std::size_t j = 0; j < series_->columns.size(); ++j) {
    const QString id = QString::fromStdString(series_->columns[j]);
    const bool visible = !hidden_.contains(id);
    if (!visible && !interactive) continue;
    auto* line = new QLineSeries;
    line->setName(id);
    line->replace(drawnPoints(*series_, j, log, &drawn.skippedNonPositive));
    chart->addSeries(line);
    line->setPen(seriesPen(j));
    line->attachAxis(x);
    line->attachAxis(y);
    line->setVisible(visible);
  }
  rescaleY(chart);
  chart->legend()->setVisible(series_->columns.size() > 0);
  return drawn;
}

void TimeSeriesChartView::rebuild() {
  if (series_ && hidden_.isEmpty() && static_cast<int>(series_->columns.size()) > kMaxInitiallyVisible) {
    // Too many lines to read at once: start with the first ones.
    for (std::size_t j = kMaxInitiallyVisible; j < series_->columns.size(); ++j) {
      hidden_.insert(QString::fromStdString(series_->columns[j]));
    }
  }
  const Drawn drawn = populate(chart_, true);
  for (QLegendMarker* marker : chart_->legend()->markers()) {
    connect(marker, &QLegendMarker::clicked, this, [this, marker] {
      setSeriesVisible(marker->series()->name(), !marker->series()->isVisible());
    });
  }
  styleMarkers();
  QStringList notes;
  if (series_ && !series_->times.empty()) {
    notes << tr("Click a legend entry to hide or show its line; drag to zoom, right-click to "
                "zoom out.");
    if (static_cast<int>(series_->times.size()) > kMaxDrawnPoints) {
      notes << tr("Lines show the extremes of %1 rows.").arg(series_->times.size());
    }
    if (!series_->eventTimes.empty()) {
      notes << tr("Dashed lines: %n event time(s) (hover for the events).", "",
                  int(series_->eventTimes.size()));
    }
    if (drawn.skippedNonPositive > 0) {
      notes << tr("%n non-positive value(s) not drawn on the log axis.", "", drawn.skippedNonPositive);
    }
  }
  caption_->setText(notes.join(QLatin1Char(' ')));
  caption_->setToolTip(caption_->text());
}

void TimeSeriesChartView::styleMarkers() {
  for (QLegendMarker* marker : chart_->legend()->markers()) {
    // A hidden series' marker stays in the legend, dimmed, so it can be clicked back.
    marker->setVisible(true);
    const bool on = marker->series()->isVisible();
    QColor label = chart_->legend()->labelColor();
    label.setAlphaF(on ? 1.0 : 0.35);
    marker->setLabelBrush(label);
    QBrush brush = marker->brush();
    QColor c = brush.color();
    c.setAlphaF(on ? 1.0 : 0.25);
    brush.setColor(c);
    marker->setBrush(brush);
    QPen pen = marker->pen();
    QColor pc = pen.color();
    pc.setAlphaF(on ? 1.0 : 0.25);
    pen.setColor(pc);
    marker->setPen(pen);
  }
}

QList<api::ExportFormat> TimeSeriesChartView::exportFormats() const {
  return imageExportFormats(title_);
}

bool TimeSeriesChartView::exportTo(const QString& formatId, const QString& path,
                                   QString* errorString) const {
  const auto fail = [errorString](const QString& message) {
    if (errorString) *errorString = message;
    return false;
  };
  if (formatId != QLatin1String("png") && formatId != QLatin1String("svg")) {
    return fail(tr("unknown format '%1'").arg(formatId));
  }
  if (!series_) return fail(tr("nothing plotted yet"));

  // A chart of its own, laid out at the on-screen size (or a default when the tab was never
  // shown), so exports do not depend on which tab is visible.
  const QSize size = chartView_->isVisible() && chartView_->width() > 200
                         ? chartView_->size()
                         : QSize(kExportWidth, kExportHeight);
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setMargins(chart_->margins());
  EventMarksChartView view(chart);
  view.setEventMarks(eventMarks());
  view.setRenderHint(QPainter::Antialiasing);
  view.setAttribute(Qt::WA_DontShowOnScreen);
  view.resize(size);
  populate(chart, false);
  view.show();
  QCoreApplication::sendPostedEvents(&view);
  QCoreApplication::sendPostedEvents(chart);

  return exportWidgetImage(view, title_, formatId, path, errorString);
}

}  // namespace sensode::plugin
