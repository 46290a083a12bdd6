// SPDX-License-Identifier: MIT
#include "plugin/views/widget_export.h"

#include <QImage>
#include <QObject>
#include <QPainter>
#include <QSvgGenerator>
#include <QWidget>

namespace sensode::plugin {

QList<api::ExportFormat> imageExportFormats(const QString& title) {
  return {{QStringLiteral("png"), QObject::tr("%1 as PNG image...").arg(title),
           QObject::tr("PNG images (*.png)"), QStringLiteral("png")},
          {QStringLiteral("svg"), QObject::tr("%1 as SVG drawing...").arg(title),
           QObject::tr("SVG drawings (*.svg)"), QStringLiteral("svg")}};
}

bool exportWidgetImage(QWidget& widget, const QString& title, const QString& formatId,
                       const QString& path, QString* errorString) {
  const auto fail = [errorString](const QString& message) {
    if (errorString) *errorString = message;
    return false;
  };
  const QSize size = widget.size();
  if (formatId == QLatin1String("png")) {
    const qreal scale = 2.0;
    QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    {
      QPainter painter(&image);
      painter.setRenderHint(QPainter::Antialiasing);
      widget.render(&painter);
    }
    if (!image.save(path, "PNG")) return fail(QObject::tr("cannot write the PNG file"));
    return true;
  }
  if (formatId == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(title);
    svg.setDescription(QObject::tr("Sensode %1").arg(QStringLiteral(SENSODE_VERSION)));
    QPainter painter;
    if (!painter.begin(&svg)) return fail(QObject::tr("cannot write the SVG file"));
    widget.render(&painter);
    if (!painter.end()) return fail(QObject::tr("cannot write the SVG file"));
    return true;
  }
  return fail(QObject::tr("unknown format '%1'").arg(formatId));
}

}  // namespace sensode::plugin
