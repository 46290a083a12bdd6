// SPDX-License-Identifier: MIT
#include "plugin/views/heat_map_widget.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "plugin/models/number_format.h"

namespace sensode::plugin {

namespace {

constexpr int kMargin = 8;
constexpr int kBarWidth = 16;

}  // namespace

HeatMapWidget::HeatMapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(320, 240);
  setAutoFillBackground(true);
  QPalette p = palette();
  p.setColor(QPalette::Window, Qt::white);
  setPalette(p);
}

void HeatMapWidget::setData(QStringList rows, QStringList columns, std::vector<double> values,
                            QString title) {
  rows_ = std::move(rows);
  columns_ = std::move(columns);
  values_ = std::move(values);
  title_ = std::move(title);
  maxAbs_ = 0;
  for (double v : values_)
    if (std::isfinite(v)) maxAbs_ = std::max(maxAbs_, std::abs(v));
  update();
}

QColor HeatMapWidget::colorFor(double v) const {
  if (std::isnan(v)) return QColor(0xc8, 0xc8, 0xc8);
  const double x = maxAbs_ > 0 ? std::clamp(v / maxAbs_, -1.0, 1.0) : 0.0;
  // White to a saturated red (positive) or blue (negative), linear in |x|.
  const QColor end = x >= 0 ? QColor(0xb2, 0x18, 0x2b) : QColor(0x21, 0x66, 0xac);
  const double a = std::abs(x);
  return QColor::fromRgbF(static_cast<float>(1 + a * (end.redF() - 1)),
                          static_cast<float>(1 + a * (end.greenF() - 1)),
                          static_cast<float>(1 + a * (end.blueF() - 1)));
}

QRectF HeatMapWidget::matrixRect() const {
  const QFontMetrics fm(font());
  int rowLabel = 0;
  for (const QString& r : rows_) rowLabel = std::max(rowLabel, fm.horizontalAdvance(r));
  int colLabel = 0;
  for (const QString& c : columns_) colLabel = std::max(colLabel, fm.horizontalAdvance(c));
  const double left = kMargin + std::min(rowLabel + 4, width() / 3) + 6;  // +4: no eliding at the exact width
  const double top = kMargin + fm.height() + 6;
  // Column labels are drawn rotated under the matrix; the colour bar and its numbers on the right.
  const double bottom = std::min<double>(colLabel, height() / 3.0) + kMargin + 6;
  const double right = kMargin + kBarWidth + 8 + fm.horizontalAdvance(QStringLiteral("-0.00000e+00"));
  return QRectF(left, top, std::max(10.0, width() - left - right), std::max(10.0, height() - top - bottom));
}

std::pair<int, int> HeatMapWidget::cellAt(const QPoint& p) const {
  if (rows_.isEmpty() || columns_.isEmpty()) return {-1, -1};
  const QRectF m = matrixRect();
  if (!m.contains(p)) return {-1, -1};
  const int r = std::min<int>(static_cast<int>((p.y() - m.top()) / (m.height() / rows_.size())),
                              static_cast<int>(rows_.size()) - 1);
  const int c = std::min<int>(static_cast<int>((p.x() - m.left()) / (m.width() / columns_.size())),
                              static_cast<int>(columns_.size()) - 1);
  return {r, c};
}

void HeatMapWidget::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), Qt::white);
  const QFontMetrics fm(font());
  painter.setPen(Qt::black);
  painter.drawText(QRectF(0, kMargin, width(), fm.height()), Qt::AlignHCenter, title_);
  if (rows_.isEmpty() || columns_.isEmpty()) {
    painter.drawText(rect(), Qt::AlignCenter, tr("Run the task to see the heat map."));
    return;
  }
  const QRectF m = matrixRect();
  const double ch = m.height() / rows_.size(), cw = m.width() / columns_.size();
  for (qsizetype r = 0; r < rows_.size(); ++r)
    for (qsizetype c = 0; c < columns_.size(); ++c) {
      const std::size_t k = static_cast<std::size_t>(r * columns_.size() + c);
      const double v = k < values_.size() ? values_[k] : NAN;
      painter.fillRect(QRectF(m.left() + c * cw, m.top() + r * ch, cw, ch), colorFor(v));
    }
  // Grid lines only while cells are large enough to tell apart.
  if (cw >= 6 && ch >= 6) {
    painter.setPen(QPen(QColor(255, 255, 255), 1));
    for (qsizetype r = 1; r < rows_.size(); ++r) painter.drawLine(QPointF(m.left(), m.top() + r * ch), QPointF(m.right(), m.top() + r * ch));
    for (qsizetype c = 1; c < columns_.size(); ++c) painter.drawLine(QPointF(m.left() + c * cw, m.top()), QPointF(m.left() + c * cw, m.bottom()));
  }
  // The numbers themselves when every cell has room for its text (a correlation matrix of a
  // few parameters): fixed decimals down to a hundredth of the largest magnitude (the tool tip
  // has every digit), white text on the saturated cells.
  const int decimals =
      maxAbs_ > 0 ? std::max(0, 2 - static_cast<int>(std::floor(std::log10(maxAbs_)))) : 0;
  const auto cellText = [decimals](double v) { return QString::number(v, 'f', decimals); };
  int widest = 0;
  for (double v : values_)
    if (!std::isnan(v)) widest = std::max(widest, fm.horizontalAdvance(cellText(v)));
  if (cw >= widest + 6 && ch >= fm.height() + 4) {
    for (qsizetype r = 0; r < rows_.size(); ++r)
      for (qsizetype c = 0; c < columns_.size(); ++c) {
        const std::size_t k = static_cast<std::size_t>(r * columns_.size() + c);
        const double v = k < values_.size() ? values_[k] : NAN;
        if (std::isnan(v)) continue;
        const bool dark = maxAbs_ > 0 && std::abs(v) / maxAbs_ > 0.6;
        painter.setPen(dark ? Qt::white : Qt::black);
        painter.drawText(QRectF(m.left() + c * cw, m.top() + r * ch, cw, ch), Qt::AlignCenter,
                         cellText(v));
      }
  }
  painter.setPen(Qt::black);
  painter.drawRect(m);
  // Labels: every row/column while they fit, else every k-th.
  const int rowStep = std::max(1, static_cast<int>(std::ceil(fm.height() / ch)));
  for (qsizetype r = 0; r < rows_.size(); r += rowStep)
    painter.drawText(QRectF(kMargin, m.top() + r * ch, m.left() - kMargin - 6, ch),
                     Qt::AlignRight | Qt::AlignVCenter, fm.elidedText(rows_[r], Qt::ElideRight, static_cast<int>(m.left()) - kMargin - 6));
  const int colStep = std::max(1, static_cast<int>(std::ceil(fm.height() / cw)));
  for (qsizetype c = 0; c < columns_.size(); c += colStep) {
    painter.save();
    painter.translate(m.left() + (c + 0.5) * cw + fm.ascent() / 2.0, m.bottom() + 6);
    painter.rotate(-90);
    painter.drawText(QPointF(-fm.horizontalAdvance(columns_[c]), 0), columns_[c]);
    painter.restore();
  }
  // Colour bar: +max at the top, 0 in the middle, −max at the bottom.
  const QRectF bar(m.right() + 8, m.top(), kBarWidth, m.height());
  const int steps = 64;
  for (int i = 0; i < steps; ++i) {
    const double v = maxAbs_ * (1 - 2.0 * (i + 0.5) / steps);
    painter.fillRect(QRectF(bar.left(), bar.top() + i * bar.height() / steps, bar.width(), bar.height() / steps + 1), colorFor(v));
  }
  painter.drawRect(bar);
  const auto label = [&](double v, double y) {
    painter.drawText(QPointF(bar.right() + 4, y + fm.ascent() / 2.0), shortNumber(v).left(12));
  };
  label(maxAbs_, bar.top());
  label(0, bar.center().y());
  label(-maxAbs_, bar.bottom());
}

bool HeatMapWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const auto [r, c] = cellAt(help->pos());
    if (r >= 0) {
      const std::size_t k = static_cast<std::size_t>(r * columns_.size() + c);
      const double v = k < values_.size() ? values_[k] : NAN;
      QToolTip::showText(help->globalPos(),
                         QStringLiteral("%1, %2: %3").arg(rows_[r], columns_[c],
                                                          std::isnan(v) ? tr("undefined (|y| <= atol, or y has no value)") : exactNumber(v)),
                         this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(e);
}

}  // namespace sensode::plugin
