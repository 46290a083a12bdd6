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
#include <QListWidget>
#include <QLogValueAxis>
#include <QPainter>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <tuple>
#include <cmath>
#include <limits>

#include "core/tasks/series_ranking.h"
#include "plugin/views/axis_range.h"
#include "plugin/views/event_marks_chart_view.h"
#include "plugin/views/series_palette.h"
#include "plugin/views/widget_export.h"

namespace sensode::plugin {

namespace {

// The property that marks the pieces of a line after its first (drawnPoints).
constexpr const char* kContinuation = "sensodeContinuation";

// Rows to draw for one column: all of them, or per bucket the rows of the minimum and maximum; in
// pieces that a value with no number (NaN: an output whose formula has no value there, issue 30)
// separates, so that the line has a gap there instead of bridging it.
QList<QList<QPointF>> drawnPoints(const tasks::TimeCourseResult& s, std::size_t column,
                                  bool positiveOnly, int* skipped) {
  const std::size_t nt = s.times.size();
  QList<QList<QPointF>> pieces(1);
  auto gap = [&] {
    if (!pieces.back().isEmpty()) pieces.append(QList<QPointF>());
  };
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
    for (std::size_t i = 0; i < nt; ++i) {
      const double y = s.at(i, column);
      if (usable(y)) pieces.back().append(QPointF(s.times[i], y));
      else if (!std::isfinite(y)) gap();
    }
  } else {
    const std::size_t bucket = (nt + limit / 2 - 1) / (limit / 2);
    for (std::size_t start = 0; start < nt; start += bucket) {
      const std::size_t end = std::min(nt, start + bucket);
      std::size_t lo = nt, hi = nt;
      for (std::size_t i = start; i < end; ++i) {
        const double y = s.at(i, column);
        if (!usable(y)) {
          if (!std::isfinite(y)) gap();
          continue;
        }
        if (lo == nt || y < s.at(lo, column)) lo = i;
        if (hi == nt || y > s.at(hi, column)) hi = i;
      }
      if (lo == nt) continue;
      const std::size_t first = std::min(lo, hi), second = std::max(lo, hi);
      pieces.back().append(QPointF(s.times[first], s.at(first, column)));
      if (second != first) pieces.back().append(QPointF(s.times[second], s.at(second, column)));
    }
  }
  if (pieces.size() > 1 && pieces.back().isEmpty()) pieces.removeLast();
  return pieces;
}

// The column id a line was drawn for (its name is the display label).
QString idOf(const QAbstractSeries* series) { return series->property("seriesId").toString(); }

}  // namespace

TimeSeriesChartView::TimeSeriesChartView(QString title, QString yAxisTitle, Extract extract,
                                         QWidget* parent)
    : api::TaskResultView(parent), title_(std::move(title)), yAxisTitle_(std::move(yAxisTitle)),
      extract_(std::move(extract)) {
  chart_ = new QChart;
  chart_->setAnimationOptions(QChart::NoAnimation);
  // On screen the series list beside the chart is the legend (it scrolls; Qt's legend cuts off).
  chart_->legend()->setVisible(false);
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
  caption_->setWordWrap(true);
  seriesNote_ = new QLabel(this);
  seriesNote_->setObjectName(QStringLiteral("seriesNote"));
  seriesNote_->setWordWrap(true);
  seriesNote_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  list_ = new QListWidget(this);
  list_->setObjectName(QStringLiteral("seriesList"));
  list_->setToolTip(tr("Tick a series to draw it; hover for its id"));
  list_->setMaximumWidth(kListWidth);
  list_->setIconSize(QSize(28, 12));
  list_->setUniformItemSizes(true);
  connect(list_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    const QString id = item->data(Qt::UserRole).toString();
    const bool on = item->checkState() == Qt::Checked;
    if (on == !hidden_.contains(id)) return;
    userChoice_ = true;
    setSeriesVisible(id, on);
  });

  auto* bar = new QHBoxLayout;
  bar->addWidget(logY_);
  bar->addSpacing(12);
  bar->addWidget(caption_, 1);

  auto* plot = new QHBoxLayout;
  plot->addWidget(chartView_, 1);
  plot->addWidget(list_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(seriesNote_);
  layout->addLayout(plot, 1);
  rebuild();
}

void TimeSeriesChartView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  if (nameSource_) names_ = nameSource_(result);
  if (extract_) setSeries(extract_(result));
}

void TimeSeriesChartView::setDisplayNames(QHash<QString, QString> names) {
  names_ = std::move(names);
  findSharedNames();
  rebuild();
}

QString TimeSeriesChartView::label(const QString& id) const {
  const QString name = names_.value(id).trimmed();
  if (name.isEmpty() || name == id) return id;
  // Two columns of one name (a species in two compartments): the id tells them apart.
  return sharedNames_.contains(name) ? QStringLiteral("%1 (%2)").arg(name, id) : name;
}

void TimeSeriesChartView::findSharedNames() {
  sharedNames_.clear();
  if (!series_) return;
  QSet<QString> seen;
  for (const std::string& c : series_->columns) {
    const QString name = names_.value(QString::fromStdString(c)).trimmed();
    if (name.isEmpty()) continue;
    if (seen.contains(name)) sharedNames_.insert(name);
    seen.insert(name);
  }
}

void TimeSeriesChartView::setSeries(std::shared_ptr<const tasks::TimeCourseResult> series) {
  series_ = std::move(series);
  findSharedNames();
  chooseDefaultSeries();
  rebuild();
  chartView_->setEventMarks(eventMarks());
}

void TimeSeriesChartView::chooseDefaultSeries() {
  if (!series_) return;
  const std::size_t n = series_->columns.size();
  const bool sameColumns = series_->columns == chosenFor_;
  // A re-run of the same columns keeps what the user chose; anything else starts afresh.
  if (!sameColumns) userChoice_ = false;
  chosenFor_ = series_->columns;
  std::vector<std::size_t> shown;
  if (static_cast<int>(n) > kMaxInitiallyVisible) {
    shown = tasks::mostVaryingColumns(*series_, kMaxInitiallyVisible);
    // Nothing varies (a model at steady state): the first columns, as the table has them.
    for (std::size_t j = 0; shown.empty() && j < std::size_t(kMaxInitiallyVisible); ++j)
      shown.push_back(j);
  } else {
    for (std::size_t j = 0; j < n; ++j) shown.push_back(j);
  }
  // Pens: the shown columns first (most varying first), then the rest in column order.
  penOf_.assign(n, 0);
  std::vector<char> isShown(n, 0);
  std::size_t next = 0;
  for (std::size_t j : shown) {
    isShown[j] = 1;
    penOf_[j] = next++;
  }
  for (std::size_t j = 0; j < n; ++j)
    if (!isShown[j]) penOf_[j] = next++;
  if (userChoice_) return;
  hidden_.clear();
  for (std::size_t j = 0; j < n; ++j)
    if (!isShown[j]) hidden_.insert(QString::fromStdString(series_->columns[j]));
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
  // In place: called from the list's itemChanged(), so nothing may be deleted here.
  for (QAbstractSeries* series : chart_->series()) {
    if (idOf(series) == id) series->setVisible(visible);
  }
  for (int i = 0; i < list_->count(); ++i) {
    QListWidgetItem* item = list_->item(i);
    if (item->data(Qt::UserRole).toString() != id) continue;
    const QSignalBlocker block(list_);
    item->setCheckState(visible ? Qt::Checked : Qt::Unchecked);
    item->setIcon(sampleIcon(seriesPen(penOf_[std::size_t(i)]), !visible));
  }
  rescaleY(chart_);
  updateSeriesNote();
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
    // One line per piece between gaps (an undefined value), all under the column's label; the
    // export legend shows the first.
    const QList<QList<QPointF>> pieces = drawnPoints(*series_, j, log, &drawn.skippedNonPositive);
    for (qsizetype k = 0; k < pieces.size(); ++k) {
      auto* line = new QLineSeries;
      line->setName(label(id));
      line->setProperty("seriesId", id);
      line->setProperty(kContinuation, k > 0);
      line->replace(pieces[k]);
      chart->addSeries(line);
      line->setPen(seriesPen(j < penOf_.size() ? penOf_[j] : j));
      line->attachAxis(x);
      line->attachAxis(y);
      line->setVisible(visible);
    }
  }
  rescaleY(chart);
  // Exports carry a legend of the shown lines (the screen has the series list instead).
  chart->legend()->setVisible(!interactive && !series_->columns.empty());
  for (QLegendMarker* marker : chart->legend()->markers())
    marker->setVisible(!marker->series()->property(kContinuation).toBool());
  return drawn;
}

void TimeSeriesChartView::rebuild() {
  const Drawn drawn = populate(chart_, true);
  fillSeriesList();
  updateSeriesNote();
  QStringList notes;
  if (series_ && !series_->times.empty()) {
    notes << tr("Drag to zoom, right-click to zoom out.");
    if (static_cast<int>(series_->times.size()) > kMaxDrawnPoints) {
      notes << tr("Lines show the extremes of %1 rows.").arg(series_->times.size());
    }
    if (!series_->eventTimes.empty()) {
      notes << tr("Dashed lines: %n event time(s) (hover for the events).", "",
                  int(series_->eventTimes.size()));
    }
    for (const tasks::UndefinedOutput& u : series_->undefinedOutputs) {
      notes << tr("'%1' has no value at %n output time(s) (gaps; see the status line).", "",
                  int(u.times.size()))
                   .arg(QString::fromStdString(u.id));
    }
    if (drawn.skippedNonPositive > 0) {
      notes << tr("%n non-positive value(s) not drawn on the log axis.", "", drawn.skippedNonPositive);
    }
  }
  caption_->setText(notes.join(QLatin1Char(' ')));
  caption_->setToolTip(caption_->text());
}

void TimeSeriesChartView::fillSeriesList() {
  const QSignalBlocker block(list_);
  list_->clear();
  list_->setVisible(series_ && !series_->columns.empty());
  if (!series_) return;
  for (std::size_t j = 0; j < series_->columns.size(); ++j) {
    const QString id = QString::fromStdString(series_->columns[j]);
    const bool on = !hidden_.contains(id);
    auto* item = new QListWidgetItem(label(id), list_);
    item->setData(Qt::UserRole, id);
    item->setToolTip(label(id) == id ? id : QStringLiteral("%1\nid: %2").arg(label(id), id));
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    item->setCheckState(on ? Qt::Checked : Qt::Unchecked);
    item->setIcon(sampleIcon(seriesPen(j < penOf_.size() ? penOf_[j] : j), !on));
  }
  // As wide as the labels need, up to kListWidth (longer names elide; the tooltip has them).
  const int scrollBar = list_->verticalScrollBar()->sizeHint().width();
  list_->setFixedWidth(std::min(kListWidth, list_->sizeHintForColumn(0) + 2 * list_->frameWidth() +
                                                scrollBar + 4));
}

void TimeSeriesChartView::updateSeriesNote() {
  QStringList hiddenLabels;
  std::size_t total = 0;
  if (series_) {
    total = series_->columns.size();
    for (const std::string& c : series_->columns) {
      const QString id = QString::fromStdString(c);
      if (hidden_.contains(id)) hiddenLabels << label(id);
    }
  }
  if (hiddenLabels.isEmpty()) {
    seriesNote_->clear();
    seriesNote_->setToolTip({});
    seriesNote_->setVisible(false);
    return;
  }
  const qsizetype shown = qsizetype(total) - hiddenLabels.size();
  QString text = userChoice_
                     ? tr("Showing %1 of %2 series (as ticked in the list).").arg(shown).arg(total)
                     : tr("Showing %1 of %2 series: the most varying, relative to their own "
                          "range.").arg(shown).arg(total);
  QStringList named = hiddenLabels.mid(0, kNamedHidden);
  QString hiddenText = named.join(QStringLiteral(", "));
  if (hiddenLabels.size() > kNamedHidden)
    hiddenText += tr(" and %n more", "", int(hiddenLabels.size() - kNamedHidden));
  text += QLatin1Char(' ') + tr("Hidden: %1 (tick them in the list to draw them).").arg(hiddenText);
  seriesNote_->setText(text);
  seriesNote_->setToolTip(tr("Hidden: %1").arg(hiddenLabels.join(QStringLiteral(", "))));
  seriesNote_->setVisible(true);
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
