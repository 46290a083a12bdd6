// SPDX-License-Identifier: MIT
// The reproducible-run flags of sensode-gui: --open FILE, --run TASK_ID, --screenshot FILE.
// Opens the model, opens the task and runs it with its current settings, and — with
// --screenshot — once the run has finished and its results are shown, saves the main window as
// PNG and quits. Exit status: 0 when everything asked for succeeded; 1 when opening, running or
// saving failed (the window is still saved when a run fails, so the error shows); 2 for an
// unknown task id. Works with QT_QPA_PLATFORM=offscreen.
#pragma once

#include <QObject>
#include <QString>

namespace sensode::gui {

class MainWindow;

class ScriptedRun : public QObject {
  Q_OBJECT

 public:
  struct Plan {
    QString open;        // model file, or empty
    QString run;         // task id, or empty
    QString screenshot;  // PNG path, or empty
  };
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
  void fail(int exitCode, const QString& message);

  MainWindow* window_;
  Plan plan_;
};

}  // namespace sensode::gui
