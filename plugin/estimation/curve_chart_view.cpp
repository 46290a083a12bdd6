// SPDX-License-Identifier: MIT
#include "plugin/estimation/curve_chart_view.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QTextStream>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plugin/models/number_format.h"
#include "plugin/views/axis_range.h"
#include "plugin/views/widget_export.h"

namespace sensode::plugin::estimation {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Range {
  double lo = kInf, hi = -kInf;
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

// A little room around [lo, hi] on a linear axis (a flat curve gets ±1 % or ±1).
std::pair<double, double> padded(double lo, double hi) {
  auto [a, b] = dataRangeOrDefault(lo, hi, false);
  const double span = b - a;
  const double pad = span > 0 ? 0.05 * span : (a != 0 ? 0.01 * std::abs(a) : 1.0);
  return {a - pad, b + pad};
}

QPen dashed(const QColor& color) {
  QPen pen(color);
  pen.setWidthF(1.5);
  pen.setStyle(Qt::DashLine);
  return pen;
}

}  // namespace

CurveChartView::CurveChartView(QString title, Extract extract, QWidget* parent)
    : api::TaskResultView(parent), title_(std::move(title)), extract_(std::move(extract)) {
  chart_ = new QChart;
  chart_->setAnimationOptions(QChart::NoAnimation);
  view_ = new QChartView(chart_, this);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setObjectName(QStringLiteral("curveChart"));
  page_ = new QComboBox(this);
  page_->setObjectName(QStringLiteral("curvePage"));
  page_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  pageLabel_ = new QLabel(this);
  logY_ = new QCheckBox(tr("Log scale"), this);
  logY_->setObjectName(QStringLiteral("curveLogScale"));
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  connect(page_, &QComboBox::currentIndexChanged, this, [this] { replot(); });
  connect(logY_, &QCheckBox::toggled, this, [this] { replot(); });
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 4, 4, 0);
  bar->addWidget(pageLabel_);
  bar->addWidget(page_);
  bar->addWidget(logY_);
  bar->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(view_, 1);
  layout->addWidget(caption_);
  pageLabel_->hide();
  page_->hide();
  logY_->hide();
}

void CurveChartView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  const QString previous = page_->currentText();
  const bool firstData = data_.pages.isEmpty();
  data_ = extract_ ? extract_(result) : CurveChartData{};
  {
    const QSignalBlocker blockPage(page_);
    const QSignalBlocker blockLog(logY_);
    page_->clear();
    for (const CurvePage& p : data_.pages) page_->addItem(p.name);
    const int keep = page_->findText(previous);
    page_->setCurrentIndex(keep >= 0 ? keep : 0);
    const bool several = data_.pages.size() > 1;
    pageLabel_->setText(data_.pageLabel);
    pageLabel_->setVisible(several && !data_.pageLabel.isEmpty());
    page_->setVisible(several);
    logY_->setVisible(data_.logYAvailable);
    if (firstData) logY_->setChecked(data_.logYAvailable && data_.logYByDefault);
    if (!data_.logYAvailable) logY_->setChecked(false);
  }
  replot();
}

int CurveChartView::currentPage() const { return page_->currentIndex(); }

void CurveChartView::setPage(int index) { page_->setCurrentIndex(index); }

void CurveChartView::replot() {
  const int skipped = populate(chart_);
  const int i = currentPage();
  QString caption = i >= 0 && i < data_.pages.size() ? data_.pages[i].caption : QString();
  if (skipped > 0)
    caption += tr(" %n point(s) ≤ 0 left out on the log axis.", "", skipped);
  caption_->setText(caption.trimmed());
}

int CurveChartView::populate(QChart* chart) const {
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  const int index = currentPage();
  if (index < 0 || index >= data_.pages.size()) {
    chart->setTitle(title_);
    return 0;
  }
  const CurvePage& page = data_.pages[index];
  const bool log = logY_->isChecked();
  Range x, y;
  int skipped = 0;
  QList<QAbstractSeries*> series;
  for (const Curve& c : page.curves) {
    QXYSeries* line = nullptr;
    if (c.line) {
      line = new QLineSeries;
      line->setName(c.name);
      if (c.color.isValid()) {
        QPen pen(c.color);
        pen.setWidthF(2);
        line->setPen(pen);
      }
      if (c.markers) line->setPointsVisible(true);
    } else {
      auto* scatter = new QScatterSeries;
      scatter->setName(c.name);
      scatter->setMarkerSize(9);
      if (c.color.isValid()) {
        scatter->setColor(c.color);
        scatter->setBorderColor(c.color.darker(130));
      }
      line = scatter;
    }
    for (const QPointF& p : c.points) {
      if (!std::isfinite(p.x()) || !std::isfinite(p.y())) continue;
      if (log && !(p.y() > 0)) {
        ++skipped;
        continue;
      }
      line->append(p);
      x.add(p.x());
      y.add(p.y());
    }
    series << line;
  }
  if (page.vertical) x.add(page.vertical->value);
  if (page.horizontal && (!log || page.horizontal->value > 0)) y.add(page.horizontal->value);
  auto [x0, x1] = padded(x.lo, x.hi);
  if (page.integerX) {
    x0 = std::floor(x.lo <= x.hi ? x.lo : 1) - 0.5;
    x1 = std::ceil(x.lo <= x.hi ? x.hi : 1) + 0.5;
  }
  // On the log axis, a factor 1.5 of room, so points on a whole decade (the waterfall's best
  // start at 1) do not sit on the axis.
  const auto [ylo, yhi] = dataRangeOrDefault(y.lo, y.hi, log);
  std::pair<double, double> yr = log ? logDecadeRange(ylo / 1.5, yhi * 1.5) : padded(y.lo, y.hi);
  QValueAxis* xAxis = page.integerX ? new QValueAxis : makeLinearAxis();
  xAxis->setTitleText(page.xTitle);
  xAxis->setRange(x0, x1);
  if (page.integerX) {
    const double count = x1 - x0;
    xAxis->setTickType(QValueAxis::TicksDynamic);
    xAxis->setTickAnchor(1);
    xAxis->setTickInterval(count <= 12 ? 1 : std::ceil(count / 10));
    xAxis->setLabelFormat(QStringLiteral("%.0f"));
  } else {
    setNiceRange(xAxis, x0, x1);
  }
  QAbstractAxis* yAxis = makeValueAxis(log);
  yAxis->setTitleText(page.yTitle);
  yAxis->setRange(yr.first, yr.second);
  if (auto* linearY = qobject_cast<QValueAxis*>(yAxis)) {
    const NiceTicks ticks = setNiceRange(linearY, yr.first, yr.second);
    yr = {ticks.lo, ticks.hi};
  }
  // The reference lines span the axes as they ended up (nice numbers widen them).
  if (page.horizontal && (!log || page.horizontal->value > 0)) {
    auto* h = new QLineSeries;
    h->setName(page.horizontal->name);
    h->setPen(dashed(page.horizontal->color));
    h->append(xAxis->min(), page.horizontal->value);
    h->append(xAxis->max(), page.horizontal->value);
    series << h;
  }
  if (page.vertical) {
    auto* v = new QLineSeries;
    v->setName(page.vertical->name);
    v->setPen(dashed(page.vertical->color));
    v->append(page.vertical->value, yr.first);
    v->append(page.vertical->value, yr.second);
    series << v;
  }
  chart->addAxis(xAxis, Qt::AlignBottom);
  chart->addAxis(yAxis, Qt::AlignLeft);
  for (QAbstractSeries* s : series) {
    chart->addSeries(s);
    s->attachAxis(xAxis);
    s->attachAxis(yAxis);
  }
  chart->legend()->setAlignment(Qt::AlignBottom);
  // Pages named by what they show (a profile's parameter) say so in the title, also alone.
  chart->setTitle(data_.pages.size() > 1 || !data_.pageLabel.isEmpty()
                      ? QStringLiteral("%1: %2").arg(title_, page.name)
                      : title_);
  return skipped;
}

QString CurveChartView::toCsv() const {
  QString out;
  QTextStream s(&out);
  const QString xTitle = data_.pages.isEmpty() ? QStringLiteral("x") : data_.pages[0].xTitle;
  const QString yTitle = data_.pages.isEmpty() ? QStringLiteral("y") : data_.pages[0].yTitle;
  s << csvField(data_.pageLabel.isEmpty() ? QStringLiteral("page") : data_.pageLabel) << ','
    << "curve," << csvField(xTitle) << ',' << csvField(yTitle) << '\n';
  for (const CurvePage& page : data_.pages)
    for (const Curve& c : page.curves)
      for (const QPointF& p : c.points)
        s << csvField(page.name) << ',' << csvField(c.name) << ',' << exactNumber(p.x()) << ','
          << exactNumber(p.y()) << '\n';
  return out;
}

QList<api::ExportFormat> CurveChartView::exportFormats() const {
  QList<api::ExportFormat> formats = imageExportFormats(title_);
  formats << api::ExportFormat{QStringLiteral("csv"), tr("%1 points as CSV...").arg(title_),
                               tr("CSV files (*.csv)"), QStringLiteral("csv")};
  return formats;
}

bool CurveChartView::exportTo(const QString& formatId, const QString& path,
                              QString* errorString) const {
  if (data_.pages.isEmpty()) {
    if (errorString) *errorString = tr("nothing plotted yet");
    return false;
  }
  if (formatId == QLatin1String("csv")) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
      if (errorString) *errorString = f.errorString();
      return false;
    }
    f.write(toCsv().toUtf8());
    return true;
  }
  // A chart of its own at the on-screen size (or a standard one when the tab is hidden).
  const QSize size = view_->isVisible() && view_->width() > 200 ? view_->size()
                                                                 : QSize(kExportWidth, kExportHeight);
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  QChartView view(chart);
  view.setRenderHint(QPainter::Antialiasing);
  view.setAttribute(Qt::WA_DontShowOnScreen);
  view.resize(size);
  populate(chart);
  view.show();
  QCoreApplication::sendPostedEvents(&view);
  QCoreApplication::sendPostedEvents(chart);
  return exportWidgetImage(view, title(), formatId, path, errorString);
}

}  // namespace sensode::plugin::estimation
