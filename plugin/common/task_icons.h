// SPDX-License-Identifier: MIT
// Small task icons drawn with QPainter (no image files, no image-format plugins needed, crisp
// at every size the icon engine asks for).
#pragma once

#include <QIcon>

namespace sensode::plugin {

enum class IconKind { TimeCourse, Sensitivities, Gradient };
QIcon taskIcon(IconKind kind);

}  // namespace sensode::plugin
