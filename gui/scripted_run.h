// SPDX-License-Identifier: MIT
// The reproducible-run flags of sensode-gui: --open FILE, --run TASK_ID, --settings JSON,
// --screenshot FILE, --every-tab. Opens the model, opens the task, applies the settings given
// (the other keys keep the task's current values) and runs it, and — with --screenshot — once
// the run has finished and its results are shown, saves the main window as PNG and quits; with
// --every-tab one PNG per result tab, FILE's stem + "-" + the tab's title in lower case with
// dashes ("shot.png" → "shot-heat-map.png"), each with its tab in front. Exit status: 0 when everything asked for succeeded; 1 when opening, running or
// saving failed (the window is still saved when a run fails, so the error shows); 2 for an
// unknown task id. Works with QT_QPA_PLATFORM=offscreen.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

namespace sensode::api {
class TaskResultView;
}

namespace sensode::gui {

class MainWindow;
class TaskPanel;

class ScriptedRun : public QObject {
  Q_OBJECT

 public:
  struct Plan {
    QString open;        // model file, or empty
    QString run;         // task id, or empty
    QString screenshot;  // PNG path, or empty
    QJsonObject settings;  // task settings to apply before the run (keys as the task's JSON)
    bool everyTab = false;  // one screenshot per result tab
  };
  // The PNG of the result tab `title` for the screenshot path `base` (--every-tab).
  static QString tabScreenshotPath(const QString& base, const QString& title);
  ScriptedRun(MainWindow* window, Plan plan, QObject* parent = nullptr);

  // Call once the window is shown; the steps run from the event loop.
  void start();
  bool quitsWhenDone() const { return !plan_.screenshot.isEmpty(); }

 signals:
  // Only when quitsWhenDone(): the process exit status.
  void finished(int exitCode);

 private:
  void afterRun(bool ok);
  void saveAndFinish(int exitCode);
  bool save(const QString& path);
  void saveTab(int index, int exitCode);
  void fail(int exitCode, const QString& message);

  MainWindow* window_;
  Plan plan_;
  TaskPanel* panel_ = nullptr;
  QList<api::TaskResultView*> tabs_;
};

}  // namespace sensode::gui
