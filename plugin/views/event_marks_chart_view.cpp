// SPDX-License-Identifier: MIT
#include "plugin/views/event_marks_chart_view.h"

#include <QChart>
#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <cmath>
#include <limits>

namespace sensode::plugin {

namespace {

constexpr QRgb kMarkColour = 0x555555;

}  // namespace

EventMarksChartView::EventMarksChartView(QChart* chart, QWidget* parent)
    : QChartView(chart, parent) {}

void EventMarksChartView::setEventMarks(QList<EventMark> marks) {
  marks_ = std::move(marks);
  viewport()->update();
}

double EventMarksChartView::markPixel(int i) const {
  QChart* c = chart();
  if (!c || c->series().isEmpty() || i < 0 || i >= marks_.size()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Through the first series' axes: every line of a time-series chart shares the time axis.
  const QPointF inChart = c->mapToPosition(QPointF(marks_[i].time, 0), c->series().first());
  const QRectF area = c->plotArea();
  if (inChart.x() < area.left() - 0.5 || inChart.x() > area.right() + 0.5) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return mapFromScene(c->mapToScene(inChart)).x();
}

QString EventMarksChartView::toolTipAt(double viewportX) const {
  QStringList lines;
  for (int i = 0; i < marks_.size(); ++i) {
    const double x = markPixel(i);
    if (std::abs(x - viewportX) <= kHoverPixels) {
      lines << tr("event at t = %1: %2").arg(marks_[i].time, 0, 'g', 6).arg(marks_[i].label);
    }
  }
  return lines.join(QLatin1Char('\n'));
}

void EventMarksChartView::drawForeground(QPainter* painter, const QRectF& rect) {
  QChartView::drawForeground(painter, rect);
  QChart* c = chart();
  if (!c || marks_.isEmpty() || c->series().isEmpty()) return;
  const QRectF area = c->mapToScene(c->plotArea()).boundingRect();
  painter->save();
  QPen pen(QColor::fromRgb(kMarkColour));
  pen.setStyle(Qt::DashLine);
  pen.setWidthF(1.0);
  painter->setPen(pen);
  QFont font = painter->font();
  font.setPointSizeF(font.pointSizeF() * 0.85);
  painter->setFont(font);
  const bool labelled = marks_.size() <= kMaxLabelledMarks;
  for (const EventMark& m : marks_) {
    const QPointF p = c->mapToScene(c->mapToPosition(QPointF(m.time, 0), c->series().first()));
    if (p.x() < area.left() - 0.5 || p.x() > area.right() + 0.5) continue;
    const double x = std::floor(p.x()) + 0.5;  // a crisp one-pixel line, not two half-grey ones
    painter->drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    if (labelled) painter->drawText(QPointF(p.x() + 3, area.top() + painter->fontMetrics().ascent()), m.label);
  }
  painter->restore();
}

bool EventMarksChartView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = toolTipAt(help->pos().x());
    if (text.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, viewport());
    }
    return true;
  }
  return QChartView::viewportEvent(event);
}

}  // namespace sensode::plugin
