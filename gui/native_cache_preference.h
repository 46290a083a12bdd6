// SPDX-License-Identifier: MIT
// Settings ▸ Use the compiled-model cache: whether models compiled from now on load and store
// their native code in the on-disk cache (docs/native-cache.md). Persisted in QSettings
// ("native/useCache", default on) and published to the plugins as the application property
// kNativeCacheProperty, which plugin/common/model_cache.cpp passes to the core
// (symbolic::NativeOptions::useCache): the host itself knows no numerics.
#pragma once

#include <QtCore/QObject>

class QMenu;
class QAction;

namespace sensode::gui {

inline constexpr char kNativeCacheProperty[] = "sensodeUseNativeCache";

// Adds the checkable action to `menu` (objectName "actionUseNativeCache"); `persist`: read and
// write QSettings (false for --fresh sessions, which start with the cache on).
QAction* addNativeCachePreference(QMenu* menu, bool persist);

}  // namespace sensode::gui
