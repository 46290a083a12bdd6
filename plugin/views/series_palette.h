// SPDX-License-Identifier: MIT
// Pens for many lines in one chart: the ten Tableau colours (matplotlib "tab10") under solid,
// dashed, dotted and dash-dotted strokes, so the first forty lines all differ (colours alone
// repeat after ten). Charts hand out the first pens to the lines they show first, so that what
// is on screen by default is ten solid colours and then dashes. sampleIcon draws a pen as a
// short stroke, for lists and legends that must show the dash as well as the colour.
#pragma once

#include <QColor>
#include <QIcon>
#include <QPainter>
#include <QPen>
#include <QPixmap>

#include <cstddef>

namespace sensode::plugin {

inline constexpr int kDistinctSeriesPens = 40;

inline QPen seriesPen(std::size_t index) {
  static const QRgb colours[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                        Qt::DashDotLine};
  QPen pen(QColor::fromRgb(colours[index % 10]));
  pen.setWidthF(2.0);
  pen.setStyle(styles[(index / 10) % 4]);
  return pen;
}

// A 28×12 picture of `pen` as a horizontal stroke (dimmed when the line is hidden).
inline QIcon sampleIcon(QPen pen, bool dimmed) {
  QPixmap pixmap(28, 12);
  pixmap.fill(Qt::transparent);
  QColor c = pen.color();
  c.setAlphaF(dimmed ? 0.3 : 1.0);
  pen.setColor(c);
  pen.setWidthF(2.5);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(pen);
  painter.drawLine(QPointF(1, 6), QPointF(27, 6));
  return QIcon(pixmap);
}

}  // namespace sensode::plugin
