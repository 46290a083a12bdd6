// SPDX-License-Identifier: MIT
#include "gui/native_cache_preference.h"

#include <QtCore/QCoreApplication>
#include <QtCore/QSettings>
#include <QtGui/QAction>
#include <QtWidgets/QMenu>

namespace sensode::gui {

namespace {
const QString kKey = QStringLiteral("native/useCache");
}  // namespace

QAction* addNativeCachePreference(QMenu* menu, bool persist) {
  QAction* action = menu->addAction(QObject::tr("Use the &compiled-model cache"));
  action->setObjectName(QStringLiteral("actionUseNativeCache"));
  action->setCheckable(true);
  action->setToolTip(QObject::tr(
      "Load and store models' compiled code on disk, so that a model opened again evaluates "
      "natively from its first step (applies to models compiled from now on)"));
  const bool on = persist ? QSettings().value(kKey, true).toBool() : true;
  action->setChecked(on);
  qApp->setProperty(kNativeCacheProperty, on);
  QObject::connect(action, &QAction::toggled, action, [persist](bool checked) {
    qApp->setProperty(kNativeCacheProperty, checked);
    if (persist) QSettings().setValue(kKey, checked);
  });
  return action;
}

}  // namespace sensode::gui
