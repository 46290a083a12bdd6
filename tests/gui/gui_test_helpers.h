// SPDX-License-Identifier: MIT
// What every host-window test needs: the window options for tests (only the statically linked
// plugin; message boxes open non-blocking), a Run click that waits for the run's end, and the
// readers for exported files (JSON provenance, SHA-256 of a file).
#pragma once

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
