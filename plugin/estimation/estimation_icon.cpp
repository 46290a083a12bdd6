// SPDX-License-Identifier: MIT
#include "plugin/estimation/estimation_icon.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

#include <algorithm>
#include <cmath>

namespace sensode::plugin::estimation {

namespace {

QPixmap draw(int size) {
  QPixmap pm(size, size);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setRenderHint(QPainter::Antialiasing);
  const double s = size;
  p.setPen(QPen(QColor(0x60, 0x60, 0x60), std::max(1.0, s / 24)));
  p.drawLine(QPointF(s * 0.12, s * 0.88), QPointF(s * 0.92, s * 0.88));
  p.drawLine(QPointF(s * 0.12, s * 0.88), QPointF(s * 0.12, s * 0.08));
  // The fitted curve: a saturating rise.
  QPainterPath curve;
  for (int i = 0; i <= 32; ++i) {
    const double u = i / 32.0;
    const QPointF pt(s * (0.14 + 0.78 * u), s * (0.8 - 0.6 * (1 - std::exp(-3.5 * u))));
    if (i == 0) curve.moveTo(pt); else curve.lineTo(pt);
  }
  p.setPen(QPen(QColor(0x94, 0x67, 0xbd), std::max(1.5, s / 12), Qt::SolidLine, Qt::RoundCap));
  p.drawPath(curve);
  // The data it was fitted to, scattered about it.
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(0x30, 0x30, 0x30));
  const double r = std::max(1.0, s / 14);
  for (const auto& [u, dy] : {std::pair{0.1, 0.06}, {0.35, -0.07}, {0.6, 0.05}, {0.85, -0.04}}) {
    const QPointF pt(s * (0.14 + 0.78 * u), s * (0.8 - 0.6 * (1 - std::exp(-3.5 * u)) + dy));
    p.drawEllipse(pt, r, r);
  }
  return pm;
}

}  // namespace

QIcon estimationIcon() {
  QIcon icon;
  for (int size : {16, 24, 32, 48, 64}) icon.addPixmap(draw(size));
  return icon;
}

}  // namespace sensode::plugin::estimation
