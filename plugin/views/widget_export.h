// SPDX-License-Identifier: MIT
// PNG and SVG export of a drawn widget (a chart view, the heat map): the formats every chart
// tab offers, written the same way — PNG at twice the widget size (crisp in print), SVG through
// QSvgGenerator with the title and the Sensode version in its metadata.
#pragma once

#include <QList>
#include <QString>

#include "gui/plugin_api/task_plugin.h"

class QWidget;

namespace sensode::plugin {

// "<title> as PNG image..." and "<title> as SVG drawing...".
QList<api::ExportFormat> imageExportFormats(const QString& title);

// Renders `widget` (laid out at its current size) to `path`; false with a reason on failure.
bool exportWidgetImage(QWidget& widget, const QString& title, const QString& formatId,
                       const QString& path, QString* errorString);

}  // namespace sensode::plugin
