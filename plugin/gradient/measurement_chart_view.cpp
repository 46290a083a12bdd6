// SPDX-License-Identifier: MIT
#include "plugin/gradient/measurement_chart_view.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QSaveFile>
#include <QScatterSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <tuple>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "plugin/models/number_format.h"
#include "plugin/views/axis_range.h"
#include "plugin/views/widget_export.h"

namespace sensode::plugin {

namespace {

// The Tableau 10 palette (as the time-course chart), one colour per observable.
QColor observableColour(std::size_t index) {
  static const QRgb colours[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  return QColor::fromRgb(colours[index % 10]);
}

// The measured value's ±σ interval on the linear scale (σ is on the observable's scale).
std::pair<double, double> sigmaInterval(const MeasurementPoint& p) {
  switch (p.transformation) {
    case petab::Transformation::Log:
      return {p.measured * std::exp(-p.sigma), p.measured * std::exp(p.sigma)};
    case petab::Transformation::Log10:
      return {p.measured * std::pow(10.0, -p.sigma), p.measured * std::pow(10.0, p.sigma)};
    case petab::Transformation::Lin: break;
  }
  return {p.measured - p.sigma, p.measured + p.sigma};
}

// A chart view that draws vertical σ bars over its chart, in data coordinates of a series, so
// they follow zoom and axis changes and are part of every rendering (screen, PNG, SVG).
class ErrorBarChartView : public QChartView {
 public:
  struct Bar {
    QAbstractSeries* series;
    double x, low, high;
  };
  using QChartView::QChartView;
  void setBars(std::vector<Bar> bars) {
    bars_ = std::move(bars);
    viewport()->update();
  }
  const std::vector<Bar>& bars() const { return bars_; }

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override {
    QChartView::drawForeground(painter, rect);
    QChart* c = chart();
    if (!c || bars_.empty()) return;
    painter->save();
    painter->setClipRect(c->mapRectToScene(c->plotArea()));
    painter->setRenderHint(QPainter::Antialiasing);
    for (const Bar& b : bars_) {
      if (!b.series->isVisible()) continue;
      const QPointF low = c->mapToScene(c->mapToPosition(QPointF(b.x, b.low), b.series));
      const QPointF high = c->mapToScene(c->mapToPosition(QPointF(b.x, b.high), b.series));
      QPen pen(static_cast<QScatterSeries*>(b.series)->color());
      pen.setWidthF(1.2);
      painter->setPen(pen);
      painter->drawLine(low, high);
      painter->drawLine(low - QPointF(3, 0), low + QPointF(3, 0));
      painter->drawLine(high - QPointF(3, 0), high + QPointF(3, 0));
    }
    painter->restore();
  }

 private:
  std::vector<Bar> bars_;
};

// Marker and dash of the n-th group of one observable (the colour is the observable's).
QScatterSeries::MarkerShape groupMarker(int n) {
  static const QScatterSeries::MarkerShape shapes[] = {
      QScatterSeries::MarkerShapeCircle, QScatterSeries::MarkerShapeTriangle,
      QScatterSeries::MarkerShapeRotatedRectangle, QScatterSeries::MarkerShapeStar,
      QScatterSeries::MarkerShapePentagon};
  return shapes[n % 5];
}

Qt::PenStyle groupDash(int n) {
  static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                        Qt::DashDotLine, Qt::DashDotDotLine};
  return styles[n % 5];
}

QString experimentLabel(const QString& preequilibration, const QString& simulation) {
  return preequilibration.isEmpty() ? simulation
                                    : QStringLiteral("%1 → %2").arg(preequilibration, simulation);
}

}  // namespace

MeasurementChartView::MeasurementChartView(QString title, Extract extract, QWidget* parent)
    : api::TaskResultView(parent), title_(std::move(title)), extract_(std::move(extract)) {
  chart_ = new QChart;
  chart_->setAnimationOptions(QChart::NoAnimation);
  chart_->setMargins(QMargins(4, 4, 4, 4));
  view_ = new ErrorBarChartView(chart_, this);
  view_->setObjectName(QStringLiteral("chartView"));
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setRubberBand(QChartView::RectangleRubberBand);
  view_->setToolTip(tr("Click a legend entry to hide or show its observable; drag to zoom, "
                       "right-click to zoom out."));

  experiment_ = new QComboBox(this);
  experiment_->setObjectName(QStringLiteral("experiment"));
  experiment_->setToolTip(tr("Simulation condition (after its pre-equilibration condition)"));
  experiment_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(experiment_, &QComboBox::currentIndexChanged, this, &MeasurementChartView::replot);
  logY_ = new QCheckBox(tr("Logarithmic y axis"), this);
  logY_->setObjectName(QStringLiteral("logScale"));
  connect(logY_, &QCheckBox::toggled, this, &MeasurementChartView::replot);
  caption_ = new QLabel(this);
  caption_->setEnabled(false);
  caption_->setWordWrap(true);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Condition"), this));
  bar->addWidget(experiment_);
  bar->addSpacing(12);
  bar->addWidget(logY_);
  bar->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(view_, 1);
  layout->addWidget(caption_);
  replot();
}

void MeasurementChartView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  points_ = extract_ ? extract_(result) : nullptr;
  curves_ = curveSource_ ? curveSource_(result) : nullptr;
  const QString previous = experiment_->currentText();
  experiments_.clear();
  if (points_) {
    // Experiments in the order of their first measurement row (the measurement table's order).
    std::map<std::pair<QString, QString>, std::size_t> index;
    for (std::size_t i = 0; i < points_->size(); ++i) {
      const MeasurementPoint& p = (*points_)[i];
      const auto key = std::make_pair(p.preequilibrationCondition, p.simulationCondition);
      auto [it, added] = index.emplace(key, experiments_.size());
      if (added) experiments_.push_back({p.preequilibrationCondition, p.simulationCondition, {}});
      experiments_[it->second].rows.push_back(i);
    }
  }
  const QSignalBlocker block(experiment_);
  experiment_->clear();
  for (const Experiment& e : experiments_)
    experiment_->addItem(experimentLabel(e.preequilibration, e.simulation));
  const int keep = experiment_->findText(previous);  // the same condition after a re-run
  experiment_->setCurrentIndex(keep >= 0 ? keep : 0);
  replot();
}

QStringList MeasurementChartView::experiments() const {
  QStringList labels;
  for (const Experiment& e : experiments_) labels << experimentLabel(e.preequilibration, e.simulation);
  return labels;
}

void MeasurementChartView::setExperiment(int index) { experiment_->setCurrentIndex(index); }

void MeasurementChartView::replot() {
  const int chosen = experiment_->currentIndex();
  shownRows_ = chosen >= 0 && chosen < static_cast<int>(experiments_.size())
                   ? experiments_[static_cast<std::size_t>(chosen)].rows
                   : std::vector<std::size_t>{};
  QStringList notes = populate(view_);
  // A legend entry hides or shows its observable (measured and simulated series, which
  // populate() adds in pairs); hidden entries stay in the legend, dimmed, to be clicked back.
  const QList<QAbstractSeries*> series = chart_->series();
  for (qsizetype k = 0; k + 1 < series.size(); k += 2) {
    QAbstractSeries* measured = series[k];
    QAbstractSeries* simulated = series[k + 1];
    for (QLegendMarker* marker : chart_->legend()->markers(measured)) {
      connect(marker, &QLegendMarker::clicked, this, [this, marker, measured, simulated] {
        const bool show = !measured->isVisible();
        measured->setVisible(show);
        simulated->setVisible(show);
        marker->setVisible(true);
        QColor label = chart_->legend()->labelColor();
        label.setAlphaF(show ? 1.0 : 0.35);
        marker->setLabelBrush(label);
        view_->viewport()->update();  // the σ bars of hidden series go too
      });
    }
  }
  if (!shownRows_.empty())
    notes.prepend(tr("%n measurement(s) in this condition.", "",
                     static_cast<int>(shownRows_.size())));
  caption_->setText(notes.join(QLatin1Char(' ')));
}

QStringList MeasurementChartView::populate(QChartView* target) const {
  QChart* chart = target->chart();
  auto* bars = static_cast<ErrorBarChartView*>(target);
  std::vector<ErrorBarChartView::Bar> drawnBars;
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  QStringList notes;
  if (!points_ || shownRows_.empty()) {
    chart->setTitle(points_ ? tr("No measurements.") : tr("Run the task to plot the measurements here."));
    bars->setBars({});
    return notes;
  }
  chart->setTitle({});
  const bool log = logY_->isChecked();
  const MeasurementPoints& all = *points_;

  // Observables in order of appearance; the x position of each row.
  QStringList observables;
  double tMin = std::numeric_limits<double>::infinity(), tMax = -tMin;
  int steadyState = 0;
  for (std::size_t i : shownRows_) {
    const MeasurementPoint& p = all[i];
    if (!observables.contains(p.observableId)) observables << p.observableId;
    if (std::isfinite(p.time)) {
      tMin = std::min(tMin, p.time);
      tMax = std::max(tMax, p.time);
    } else {
      ++steadyState;
    }
  }
  const bool onlySteadyState = !(tMin <= tMax);
  // The curves start where the simulation does (t = 0), before the first measurement.
  if (curves_ && !onlySteadyState) tMin = std::min(tMin, 0.0);
  // Steady-state rows beside time courses: one step right of the last time.
  const double tInf = onlySteadyState ? 0 : tMax + std::max(0.08 * (tMax - tMin), 1e-3);
  const auto xOf = [&](const MeasurementPoint& p) {
    if (onlySteadyState) return static_cast<double>(observables.indexOf(p.observableId));
    return std::isfinite(p.time) ? p.time : tInf;
  };

  QAbstractAxis* x = nullptr;
  if (onlySteadyState) {
    auto* categories = new QCategoryAxis;
    categories->setStartValue(-0.5);
    // Numbered slots (names do not fit under the axis; the legend pairs numbers and names).
    for (int k = 0; k < observables.size(); ++k) categories->append(QString::number(k + 1), k + 0.5);
    categories->setRange(-0.5, observables.size() - 0.5);  // (append() leaves it unset)
    categories->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    categories->setTitleText(tr("observable (steady state, t = ∞)"));
    x = categories;
    notes << tr("Steady-state data, one numbered slot per observable: circles measured ± σ, "
                "squares simulated.");
  } else {
    QValueAxis* time = makeLinearAxis();
    time->setTitleText(tr("time"));
    setNiceRange(time, tMin, steadyState ? tInf : tMax);
    x = time;
    notes << tr("Markers: measured ± σ.");
    if (steadyState)
      notes << tr("%n steady-state measurement(s) (t = ∞) drawn at t = %1.", "", steadyState)
                   .arg(tInf, 0, 'g', 4);
  }
  QAbstractAxis* y = makeValueAxis(log);
  y->setTitleText(tr("observable"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  int skipped = 0;
  const auto usable = [&](double v) {
    if (!std::isfinite(v)) return false;
    if (log && !(v > 0)) {
      ++skipped;
      return false;
    }
    return true;
  };
  const auto extend = [&](double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  // Within each observable, the groups of rows with the same observable parameters (two gels
  // with their own scale factors): one curve and one marker shape each.
  struct Group {
    int observable = 0, index = 0;  // index: the group's number within its observable
    QString group;
    std::vector<std::size_t> rows;
  };
  std::vector<Group> groups;
  std::vector<int> groupCount(static_cast<std::size_t>(observables.size()), 0);
  for (int k = 0; k < observables.size(); ++k) {
    const std::size_t first = groups.size();
    for (std::size_t i : shownRows_) {
      if (all[i].observableId != observables[k]) continue;
      auto it = std::find_if(groups.begin() + static_cast<std::ptrdiff_t>(first), groups.end(),
                             [&](const Group& g) { return g.group == all[i].group; });
      if (it == groups.end()) {
        groups.push_back({k, groupCount[std::size_t(k)]++, all[i].group, {}});
        it = groups.end() - 1;
      }
      it->rows.push_back(i);
    }
  }
  const Experiment& experiment = experiments_[static_cast<std::size_t>(experiment_->currentIndex())];
  const auto curveOf = [&](const QString& observable, const QString& group) -> const SimulatedCurve* {
    if (!curves_ || onlySteadyState) return nullptr;
    for (const SimulatedCurve& c : *curves_)
      if (c.observableId == observable && c.group == group &&
          c.simulationCondition == experiment.simulation &&
          c.preequilibrationCondition == experiment.preequilibration)
        return &c;
    return nullptr;
  };
  bool joined = false;
  for (const Group& g : groups) {
    std::vector<std::size_t> rows = g.rows;
    std::stable_sort(rows.begin(), rows.end(),
                     [&](std::size_t a, std::size_t b) { return xOf(all[a]) < xOf(all[b]); });
    const int k = g.observable;
    const bool several = groupCount[std::size_t(k)] > 1;
    const QString label =
        several ? QStringLiteral("%1 [%2]").arg(observables[k],
                                                g.group.isEmpty() ? tr("no parameters") : g.group)
                : observables[k];
    const QColor colour = observableColour(static_cast<std::size_t>(k));
    auto* measured = new QScatterSeries;
    measured->setName(tr("%1 measured").arg(label));
    measured->setMarkerShape(groupMarker(g.index));
    measured->setMarkerSize(g.index == 0 ? 8 : 10);
    const SimulatedCurve* curve = curveOf(observables[k], g.group);
    QXYSeries* simulated = nullptr;
    if (onlySteadyState) {
      auto* sq = new QScatterSeries;
      sq->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
      sq->setMarkerSize(9);
      simulated = sq;
    } else {
      auto* line = new QLineSeries;
      line->setPointsVisible(curve == nullptr);
      simulated = line;
    }
    simulated->setName(tr("%1 simulated").arg(label));
    QList<QPointF> measuredPoints, simulatedPoints;
    std::vector<std::array<double, 3>> sigmaBars;
    if (curve) {
      for (std::size_t n = 0; n < curve->times.size() && n < curve->values.size(); ++n)
        if (usable(curve->values[n])) {
          simulatedPoints << QPointF(curve->times[n], curve->values[n]);
          extend(curve->values[n]);
        }
    } else if (!onlySteadyState) {
      joined = true;
    }
    for (std::size_t i : rows) {
      const MeasurementPoint& p = all[i];
      const double px = xOf(p);
      if (usable(p.measured)) {
        measuredPoints << QPointF(px, p.measured);
        extend(p.measured);
        if (p.sigma > 0 && std::isfinite(p.sigma)) {
          auto [low, high] = sigmaInterval(p);
          if (log && !(low > 0)) low = p.measured * 1e-3;  // a bar down to "zero" on a log axis
          sigmaBars.push_back({px, low, high});
          extend(low);
          extend(high);
        }
      }
      // With a curve, only the steady-state values (t = inf) are added, at the end.
      if ((!curve || !std::isfinite(p.time)) && usable(p.simulated)) {
        simulatedPoints << QPointF(px, p.simulated);
        extend(p.simulated);
      }
    }
    measured->replace(measuredPoints);
    simulated->replace(simulatedPoints);
    chart->addSeries(measured);
    chart->addSeries(simulated);
    measured->setColor(colour);
    measured->setBorderColor(colour.darker(130));
    QPen pen(colour);
    pen.setWidthF(2.0);
    pen.setStyle(groupDash(g.index));
    simulated->setPen(pen);
    simulated->setColor(colour);
    for (QXYSeries* s : {static_cast<QXYSeries*>(measured), simulated}) {
      s->attachAxis(x);
      s->attachAxis(y);
    }
    for (const auto& b : sigmaBars) drawnBars.push_back({measured, b[0], b[1], b[2]});
    // One legend entry per group (its colour and marker); the caption says markers and lines.
    const QList<QLegendMarker*> markers = chart->legend()->markers(measured);
    if (!markers.isEmpty())
      markers.first()->setLabel(onlySteadyState ? QStringLiteral("%1  %2").arg(k + 1).arg(label)
                                                : label);
    for (QLegendMarker* m : chart->legend()->markers(simulated)) m->setVisible(false);
  }
  if (!onlySteadyState) {
    notes << (joined ? tr("Simulated values at the measurement times, joined per group.")
                     : tr("Lines: the simulated observable on a fine time grid, one curve per "
                          "group of observable parameters."));
    QStringList split;
    for (int k = 0; k < observables.size(); ++k)
      if (groupCount[std::size_t(k)] > 1)
        split << tr("%1 (%2 groups)").arg(observables[k]).arg(groupCount[std::size_t(k)]);
    if (!split.isEmpty())
      notes << tr("Observable parameters differ within %1: one marker shape and dash per group.")
                   .arg(split.join(QStringLiteral(", ")));
  }
  std::tie(lo, hi) = dataRangeOrDefault(lo, hi, log);
  if (log) {
    const auto [a, b] = logDecadeRange(lo, hi);
    y->setRange(a, b);
  } else {
    const double pad = hi > lo ? 0.05 * (hi - lo) : (lo == 0 ? 1.0 : 0.1 * std::abs(lo));
    // Non-negative data keep 0 as the floor (no axis below it for the padding's sake).
    setNiceRange(static_cast<QValueAxis*>(y), lo >= 0 ? std::max(0.0, lo - pad) : lo - pad,
                 hi + pad);
  }
  // Below a time plot with a few observables (the plot keeps its width); beside numbered slots,
  // whose legend pairs numbers with names, and beside many observables, whose names need the
  // width.
  chart->legend()->setAlignment(onlySteadyState || groups.size() > 6 ? Qt::AlignRight
                                                                     : Qt::AlignBottom);
  chart->legend()->setVisible(true);
  bars->setBars(std::move(drawnBars));
  if (skipped) notes << tr("%n non-positive value(s) not drawn on the log axis.", "", skipped);
  return notes;
}

QList<QLineF> MeasurementChartView::sigmaBars() const {
  QList<QLineF> lines;
  for (const ErrorBarChartView::Bar& b : static_cast<const ErrorBarChartView*>(view_)->bars())
    lines << QLineF(b.x, b.low, b.x, b.high);
  return lines;
}

QList<api::ExportFormat> MeasurementChartView::exportFormats() const {
  QList<api::ExportFormat> formats = imageExportFormats(title_);
  formats.append({QStringLiteral("csv"), tr("Measurements and simulation as CSV..."),
                  tr("CSV files (*.csv)"), QStringLiteral("csv")});
  return formats;
}

QString MeasurementChartView::toCsv() const {
  QString out = QStringLiteral(
      "observableId,preequilibrationConditionId,simulationConditionId,time,measurement,"
      "simulation,sigma\n");
  if (!points_) return out;
  for (const MeasurementPoint& p : *points_) {
    out += QStringList{csvField(p.observableId), csvField(p.preequilibrationCondition),
                       csvField(p.simulationCondition), exactNumber(p.time),
                       exactNumber(p.measured), exactNumber(p.simulated), exactNumber(p.sigma)}
               .join(QLatin1Char(','));
    out += QLatin1Char('\n');
  }
  return out;
}

bool MeasurementChartView::exportTo(const QString& formatId, const QString& path,
                                    QString* errorString) const {
  const auto fail = [errorString](const QString& message) {
    if (errorString) *errorString = message;
    return false;
  };
  if (!points_) return fail(tr("nothing plotted yet"));
  if (formatId == QLatin1String("csv")) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return fail(file.errorString());
    file.write(toCsv().toUtf8());
    if (!file.commit()) return fail(file.errorString());
    return true;
  }
  if (formatId != QLatin1String("png") && formatId != QLatin1String("svg"))
    return fail(tr("unknown format '%1'").arg(formatId));
  // A chart of its own at the on-screen size (or a default when the tab was never shown).
  const QSize size = view_->isVisible() && view_->width() > 200
                         ? view_->size()
                         : QSize(kExportWidth, kExportHeight);
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setMargins(chart_->margins());
  chart->setTitle(experiment_->currentText());
  ErrorBarChartView view(chart);
  view.setRenderHint(QPainter::Antialiasing);
  view.setAttribute(Qt::WA_DontShowOnScreen);
  view.resize(size);
  populate(&view);
  chart->setTitle(tr("Condition %1").arg(experiment_->currentText()));
  view.show();
  QCoreApplication::sendPostedEvents(&view);
  QCoreApplication::sendPostedEvents(chart);
  return exportWidgetImage(view, title_, formatId, path, errorString);
}

}  // namespace sensode::plugin
