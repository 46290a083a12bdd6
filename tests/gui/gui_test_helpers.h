// SPDX-License-Identifier: MIT
// What every host-window test needs: the window options for tests (only the statically linked
// plugin; message boxes open non-blocking), a Run click that waits for the run's end, and the
// readers for exported files (JSON provenance, SHA-256 of a file), and a Cancel click that checks
// how fast the run ends.
#pragma once

#include <algorithm>
#include <chrono>

#include <QComboBox>
#include <QCryptographicHash>
#include <QFile>
#include <QLineEdit>
#include <QScrollArea>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest/QtTest>

#include "gui/main_window.h"
#include "gui/task_panel.h"

namespace sensode::testing {

inline gui::MainWindow::Options testWindowOptions() {
  gui::MainWindow::Options o;
  o.pluginFolders = QStringList{};  // only the statically linked plugin
  o.interactive = true;             // message boxes open (non-blocking) so tests can see them
  return o;
}

// Clicks Run and waits for the run to end; returns its status (Failed on time-out).
inline api::TaskStatus clickRunAndWait(gui::TaskPanel* panel, int timeoutMs = 120000) {
  QSignalSpy finished(panel, &gui::TaskPanel::runFinished);
  QTest::mouseClick(panel->runButton(), Qt::LeftButton);
  if (!finished.wait(timeoutMs)) return api::TaskStatus::Failed;
  return finished.takeFirst().at(0).value<api::TaskStatus>();
}

// Clicks Cancel on a running panel; returns the seconds until runFinished (recorded by `finished`,
// a spy on the panel's runFinished), or -1 when it did not come within 5 s.
inline double clickCancelAndWait(gui::TaskPanel* panel, QSignalSpy& finished) {
  const auto clicked = std::chrono::steady_clock::now();
  QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
  if (!finished.wait(5000)) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - clicked).count();
}

// The widgets of a task panel's settings column that do not show their content: a line edit,
// combo box or button narrower than its text, or any visible widget running past the column's
// right edge (cut off: the column does not scroll sideways). One line each, for the failure
// message; empty when all fit.
inline QStringList squeezedSettings(gui::TaskPanel* panel) {
  QStringList problems;
  auto* scroll = panel->findChild<QScrollArea*>(QStringLiteral("settingsScroll"));
  if (!scroll) return {QStringLiteral("no settings column")};
  const QWidget* viewport = scroll->viewport();
  const auto name = [](const QWidget* w) {
    return QStringLiteral("%1 '%2'").arg(QString::fromLatin1(w->metaObject()->className()),
                                         w->objectName());
  };
  for (QWidget* w : scroll->widget()->findChildren<QWidget*>()) {
    if (!w->isVisibleTo(scroll->widget()) || w->width() <= 0) continue;
    // Children of views and of combo boxes are their own business (viewports, popups).
    if (qobject_cast<QAbstractScrollArea*>(w->parentWidget()) ||
        qobject_cast<QComboBox*>(w->parentWidget()))
      continue;
    const int right = w->mapTo(viewport, QPoint(w->width(), 0)).x();
    if (right > viewport->width() + 1)
      problems << QStringLiteral("%1 ends at x = %2, past the column's %3 px")
                      .arg(name(w)).arg(right).arg(viewport->width());
    const QFontMetrics fm = w->fontMetrics();
    int needed = 0;
    QString text;
    if (auto* line = qobject_cast<QLineEdit*>(w)) {
      text = line->text().isEmpty() ? line->placeholderText() : line->text();
      needed = fm.horizontalAdvance(text) + 8;
    } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
      text = combo->currentText();
      needed = fm.horizontalAdvance(text) + 20;
    } else if (auto* button = qobject_cast<QPushButton*>(w)) {
      text = button->text();
      needed = fm.horizontalAdvance(text) + 8;
    }
    if (w->width() < needed)
      problems << QStringLiteral("%1 is %2 px wide for '%3' (needs %4)")
                      .arg(name(w)).arg(w->width()).arg(text).arg(needed);
  }
  return problems;
}

// The window's size is what it was given: nothing in it asked for more room. The message names
// the widest minimum widths in the window, where the growth comes from.
inline QString grewFrom(const QSize& before, const QWidget& window) {
  if (window.size() == before) return {};
  QList<QPair<int, QString>> widest;
  for (const QWidget* w : window.findChildren<QWidget*>()) {
    const int min = std::max(w->minimumWidth(), w->sizePolicy().horizontalPolicy() == QSizePolicy::Ignored
                                                    ? 0 : w->minimumSizeHint().width());
    widest.append({min, QStringLiteral("%1 '%2' %3").arg(QString::fromLatin1(w->metaObject()->className()),
                                                         w->objectName()).arg(min)});
  }
  std::sort(widest.begin(), widest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  QStringList top;
  for (qsizetype i = 0; i < std::min<qsizetype>(12, widest.size()); ++i) top << widest[i].second;
  return QStringLiteral("the window grew from %1x%2 to %3x%4 (widest minimums: %5)")
      .arg(before.width()).arg(before.height()).arg(window.width()).arg(window.height())
      .arg(top.join(QStringLiteral(", ")));
}

// With each result tab in front in turn: the window's growth, then the settings column's
// squeezed widgets (squeezedSettings()); empty when the panel fits the window it was given.
inline QStringList panelDoesNotFit(gui::TaskPanel* panel, const QWidget& window, const QSize& before) {
  QStringList problems;
  for (api::TaskResultView* view : panel->resultViews()) {
    panel->showResultView(view);
    QCoreApplication::processEvents();
    const QString grew = grewFrom(before, window);
    if (!grew.isEmpty()) problems << view->title() + QStringLiteral(": ") + grew;
  }
  return problems + squeezedSettings(panel);
}

inline QJsonObject readJsonFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

inline QString sha256OfFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash h(QCryptographicHash::Sha256);
  h.addData(&f);
  return QString::fromLatin1(h.result().toHex());
}

}  // namespace sensode::testing

// Cancel ends the run within `limitSeconds` with the status Cancelled (the figure is printed: it
// is what a user waits after clicking).
#define SENSODE_VERIFY_CANCEL_WITHIN(panel, finished, limitSeconds)                                 \
  do {                                                                                            \
    const double seconds_ = ::sensode::testing::clickCancelAndWait((panel), (finished));          \
    QVERIFY2(seconds_ >= 0, "the run did not end within 5 s of Cancel");                          \
    qInfo("Cancel to finished: %.3f s", seconds_);                                                \
    QVERIFY2(seconds_ < (limitSeconds), qPrintable(QStringLiteral("cancel took %1 s").arg(seconds_))); \
    QCOMPARE(int((finished).first().at(0).value<::sensode::api::TaskStatus>()),                  \
             int(::sensode::api::TaskStatus::Cancelled));                                          \
  } while (0)
