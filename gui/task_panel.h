// SPDX-License-Identifier: MIT
// One open task: its set-up widget with Run, Cancel and a progress bar on the left (side views
// such as statistics below), its result views in tabs on the right, and an Export menu.
//
// The run cycle (qtbase examples/qtconcurrent/progressdialog): Run asks the set-up widget to
// validate, starts the plugin's runner and watches its QFuture<void> with a QFutureWatcher that
// drives the progress bar; Cancel asks the runner to stop. When the future finishes (also after a
// cancel) the panel takes the result: a success goes to every result view; a failure or a cancel
// leaves the views — the previous results — untouched and is reported through runFinished().
#pragma once

#include <QFutureWatcher>
#include <QJsonObject>
#include <QWidget>

#include <memory>

#include "gui/plugin_api/task_plugin.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QToolButton;
class QMenu;

namespace sensode::gui {

class TaskPanel : public QWidget {
  Q_OBJECT

 public:
  TaskPanel(const api::TaskDescription& task, QWidget* parent = nullptr);
  ~TaskPanel() override;  // cancels a running task and waits for it

  const api::TaskDescription& task() const { return task_; }
  api::TaskSetupWidget* setupWidget() const { return setup_; }
  QList<api::TaskResultView*> resultViews() const { return views_; }
  api::TaskResultView* resultView(const QString& title) const;
  // Brings a result tab to the front (side views are always shown).
  void showResultView(api::TaskResultView* view);
  // The result the views show (the last successful run), or nullptr.
  std::shared_ptr<const api::TaskResult> shownResult() const { return shown_; }
  bool isRunning() const;
  QPushButton* runButton() const { return run_; }
  QPushButton* cancelButton() const { return cancel_; }
  QProgressBar* progressBar() const { return progress_; }

  void setSession(const api::ModelSession& session);
  // Shows a result read from `source` (saved results, results_opener.h) as a finished run's.
  void showOpenedResult(const std::shared_ptr<const api::TaskResult>& result,
                        const QString& source);

  // Every (view, format) pair the views offer.
  struct ExportTarget {
    api::TaskResultView* view;
    api::ExportFormat format;
  };
  QList<ExportTarget> exportTargets() const;
  // Writes the shown result through `view` in `formatId` to `path`, then the provenance JSON
  // beside it (see provenancePath()). Errors go into *errorString.
  bool exportResult(api::TaskResultView* view, const QString& formatId, const QString& path,
                    QString* errorString);
  // "<path>.provenance.json".
  static QString provenancePath(const QString& exportPath);

 public slots:
  void run();
  void cancel();

 signals:
  void runStarted();
  // Every run ends here; status Succeeded means the views now show the new result.
  void runFinished(sensode::api::TaskStatus status, const QString& message);
  void statusMessage(const QString& text);
  // `details`: the technical detail behind `message` (TaskResult::details()), may be empty.
  void errorOccurred(const QString& title, const QString& message, const QString& details = {});
  void settingsChanged();
  // The user picked an entry of the Export menu; the main window asks for the file name.
  void exportRequested(sensode::api::TaskResultView* view, const sensode::api::ExportFormat& format);

 private:
  void onFinished();
  void show(const std::shared_ptr<const api::TaskResult>& result);
  void setRunning(bool running);
  void showExportMenu();

  api::TaskDescription task_;
  api::ModelSession session_;
  api::TaskSetupWidget* setup_ = nullptr;
  QList<api::TaskResultView*> views_;
  std::unique_ptr<api::TaskRunner> runner_;
  QFutureWatcher<void> watcher_;
  std::shared_ptr<const api::TaskResult> shown_;
  QJsonObject runSettings_;

  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* progressText_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QToolButton* export_ = nullptr;
  QLabel* placeholder_ = nullptr;
};

}  // namespace sensode::gui
