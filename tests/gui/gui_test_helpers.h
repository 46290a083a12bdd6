// SPDX-License-Identifier: MIT
// What every host-window test needs: the window options for tests (only the statically linked
// plugin; message boxes open non-blocking), a Run click that waits for the run's end, and the
// readers for exported files (JSON provenance, SHA-256 of a file), and a Cancel click that checks
// how fast the run ends.
#pragma once

#include <chrono>

#include <QCryptographicHash>
#include <QFile>
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
