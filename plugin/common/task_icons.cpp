// SPDX-License-Identifier: MIT
#include "plugin/common/task_icons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

#include <cmath>

namespace sensode::plugin {

namespace {

QPixmap draw(IconKind kind, int size) {
  QPixmap pm(size, size);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setRenderHint(QPainter::Antialiasing);
  const double s = size;
  p.setPen(QPen(QColor(0x60, 0x60, 0x60), std::max(1.0, s / 24)));
  p.drawLine(QPointF(s * 0.12, s * 0.88), QPointF(s * 0.92, s * 0.88));  // time axis
  p.drawLine(QPointF(s * 0.12, s * 0.88), QPointF(s * 0.12, s * 0.08));  // value axis
  QPainterPath path;
  switch (kind) {
    case IconKind::TimeCourse: {
      for (int i = 0; i <= 32; ++i) {
        const double u = i / 32.0;
        const QPointF pt(s * (0.14 + 0.78 * u),
                         s * (0.5 - 0.32 * std::sin(2 * M_PI * 1.5 * u) * std::exp(-1.2 * u)));
        if (i == 0) path.moveTo(pt); else path.lineTo(pt);
      }
      p.setPen(QPen(QColor(0x1f, 0x77, 0xb4), std::max(1.5, s / 10), Qt::SolidLine, Qt::RoundCap));
      break;
    }
    case IconKind::Sensitivities: {
      path.moveTo(s * 0.14, s * 0.8);
      path.cubicTo(s * 0.4, s * 0.8, s * 0.5, s * 0.2, s * 0.9, s * 0.2);
      p.setPen(QPen(QColor(0xd6, 0x27, 0x28), std::max(1.5, s / 10), Qt::SolidLine, Qt::RoundCap));
      break;
    }
    case IconKind::Gradient: {
      path.moveTo(s * 0.18, s * 0.2);
      path.lineTo(s * 0.55, s * 0.55);
      path.lineTo(s * 0.85, s * 0.45);
      p.setPen(QPen(QColor(0x2c, 0xa0, 0x2c), std::max(1.5, s / 10), Qt::SolidLine, Qt::RoundCap));
      break;
    }
  }
  p.drawPath(path);
  return pm;
}

}  // namespace

QIcon taskIcon(IconKind kind) {
  QIcon icon;
  for (int size : {16, 24, 32, 48, 64}) icon.addPixmap(draw(kind, size));
  return icon;
}

}  // namespace sensode::plugin
