// SPDX-License-Identifier: MIT
// The Parameter estimation task's icon: data points and the curve fitted through them, drawn
// with QPainter in the style of the sensode_tasks icons (plugin/common/task_icons.cpp).
#pragma once

#include <QIcon>

namespace sensode::plugin::estimation {

QIcon estimationIcon();

}  // namespace sensode::plugin::estimation
