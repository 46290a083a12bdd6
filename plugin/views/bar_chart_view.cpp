// SPDX-License-Identifier: MIT
#include "plugin/views/bar_chart_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "plugin/models/number_format.h"
#include "plugin/views/axis_range.h"
#include "plugin/views/widget_export.h"

namespace sensode::plugin {

namespace {

// The symmetric-log floor: a hundredth of the largest magnitude, so the largest bar spans
// about two decades and signs stay visible.
double symlogFloor(const QList<double>& values) {
  double largest = 0;
  for (double v : values)
    if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
  return largest > 0 ? largest / 100 : 1;
}

}  // namespace

BarChartView::BarChartView(QString title, Extract extract, QWidget* parent)
    : api::TaskResultView(parent), title_(std::move(title)), extract_(std::move(extract)) {
  chart_ = new QChart;
  chart_->setAnimationOptions(QChart::NoAnimation);
  chart_->legend()->hide();
  view_ = new QChartView(chart_, this);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setObjectName(QStringLiteral("barChart"));
  symlog_ = new QCheckBox(tr("Symmetric log scale"), this);
  symlog_->setObjectName(QStringLiteral("symlog"));
  symlog_->setToolTip(tr("Bar length sign(g)·log10(1 + |g|/c) with c = max|g|/100"));
  connect(symlog_, &QCheckBox::toggled, this, [this] { replot(); });
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 4, 4, 0);
  bar->addWidget(symlog_);
  bar->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(view_, 1);
  layout->addWidget(caption_);
}

void BarChartView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  data_ = extract_ ? extract_(result) : BarData{};
  replot();
}

void BarChartView::setSymlog(bool on) { symlog_->setChecked(on); }

void BarChartView::replot() {
  populate(chart_);
  caption_->setText(data_.caption);
}

void BarChartView::populate(QChart* chart) const {
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  if (data_.values.isEmpty()) return;
  const bool symlog = symlog_->isChecked();
  const double floor = symlogFloor(data_.values);
  auto* set = new QBarSet(data_.valueTitle);
  set->setColor(QColor(0x2c, 0x6f, 0xbb));
  double lo = 0, hi = 0;
  // Qt draws the first category at the bottom; reversed, the bars read top-down in table order.
  QStringList categories;
  for (qsizetype i = data_.values.size(); i-- > 0;) {
    const double v = data_.values[i];
    const double shown = !std::isfinite(v) ? 0
                         : symlog          ? std::copysign(std::log10(1 + std::abs(v) / floor), v)
                                           : v;
    set->append(shown);
    lo = std::min(lo, shown);
    hi = std::max(hi, shown);
    categories << (i < data_.labels.size() ? data_.labels[i] : QString::number(i + 1));
  }
  auto* series = new QHorizontalBarSeries;
  series->append(set);
  series->setBarWidth(0.7);
  chart->addSeries(series);
  auto* names = new QBarCategoryAxis;
  names->append(categories);
  chart->addAxis(names, Qt::AlignLeft);
  series->attachAxis(names);
  QValueAxis* values = makeLinearAxis();
  if (hi - lo > 0) {
    const double pad = 0.05 * (hi - lo);
    setNiceRange(values, lo < 0 ? lo - pad : 0, hi > 0 ? hi + pad : 0);
  } else {
    setNiceRange(values, -1, 1);  // every bar 0 (a gradient at an optimum): an axis around it
  }
  // On the symmetric-log scale the quantity goes into the chart title (the full width) and the
  // axis title is only the transform with its constant, short enough never to be cut: a long
  // quantity inside the formula pushed the constant past the plot's width, where Qt elides.
  values->setTitleText(symlog ? tr("sign(g) · log10(1 + |g| / c),  c = %1").arg(QString::number(floor, 'g', 3))
                              : data_.valueTitle);
  chart->addAxis(values, Qt::AlignBottom);
  series->attachAxis(values);
  chart->setTitle(symlog ? tr("%1: g = %2").arg(title_, data_.valueTitle) : title_);
}

QList<api::ExportFormat> BarChartView::exportFormats() const { return imageExportFormats(title_); }

bool BarChartView::exportTo(const QString& formatId, const QString& path,
                            QString* errorString) const {
  if (data_.values.isEmpty()) {
    if (errorString) *errorString = tr("nothing plotted yet");
    return false;
  }
  // A chart of its own at the on-screen size, or one tall enough for every label.
  const int rows = static_cast<int>(data_.values.size());
  const QSize size = view_->isVisible() && view_->width() > 200
                         ? view_->size()
                         : QSize(1000, std::clamp(120 + 22 * rows, 400, 4000));
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->hide();
  QChartView view(chart);
  view.setRenderHint(QPainter::Antialiasing);
  view.setAttribute(Qt::WA_DontShowOnScreen);
  view.resize(size);
  populate(chart);
  view.show();
  QCoreApplication::sendPostedEvents(&view);
  QCoreApplication::sendPostedEvents(chart);
  return exportWidgetImage(view, title_, formatId, path, errorString);
}

}  // namespace sensode::plugin
