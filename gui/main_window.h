// SPDX-License-Identifier: MIT
// The desktop host's main window: File (Open, Open Recent, Save model as, Export, Quit), a Tasks
// menu built from
// the loaded plugins, Help (Plugins, SBML support, About); the model browser as a dock; one tab
// per open task. It knows no numerics: models reach tasks as an api::ModelSession and results
// come back as opaque api::TaskResult objects.
//
// Errors from the core (import failures, invalid settings, integration failures) arrive as text
// and are never swallowed: each one goes to the status bar, to stderr, and — when the window is
// interactive — into a message box (opened window-modal with open(), so scripted runs and tests
// are never blocked by it).
//
// Remembered in QSettings: window geometry and dock state, recent files, the last folders of
// Open and Export, and every task's settings (as JSON, under tasks/<id>/settings).
#pragma once

#include <QMainWindow>
#include <QPointer>

#include <memory>
#include <optional>

#include "gui/plugin_api/results_opener.h"
#include "gui/plugin_api/task_plugin.h"

class QLabel;
class QMenu;
class QTabWidget;
class QStackedWidget;
class QSettings;

namespace sensode::gui {

class ModelBrowser;
class PluginLoader;
class TaskPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  struct Options {
    // Folders to load plugins from; PluginLoader::defaultSearchPaths() when unset.
    std::optional<QStringList> pluginFolders;
    // Read and write QSettings (off for --fresh: defaults only, nothing stored).
    bool useSettings = true;
    // Show message boxes for errors (off for scripted runs).
    bool interactive = true;
  };

  MainWindow();
  explicit MainWindow(const Options& options);
  ~MainWindow() override;

  // Opens an SBML file (or PEtab yaml); false and an error report on failure, in which case the
  // previously open model stays open.
  bool openModel(const QString& path);
  // File ▸ Save model as... without the dialog: writes the open model with the edited values to
  // `path` through a plugin's api::ModelWriter. False and an error report on failure. The
  // session stays on the file it opened.
  bool saveModelAs(const QString& path);
  // Merges `values` into the edited values (the browser shows them, the tasks use them); ids
  // the browser has no editable row for are left out and returned. What a task's "Apply best
  // fit" calls (api::OverrideSource).
  QStringList applyOverrides(const QMap<QString, double>& values);
  const api::ModelSession& session() const { return session_; }
  // Opens (or brings to front) the task's tab; nullptr and an error report for an unknown id.
  TaskPanel* openTask(const QString& id);
  // Opens saved results (File ▸ Open ... results): the first plugin whose ResultsOpener reads
  // `folder` shows them in its task's panel, with the run's settings in the set-up form. False
  // and an error report when none can.
  bool openResultsFolder(const QString& folder);
  TaskPanel* taskPanel(const QString& id) const;
  TaskPanel* currentTaskPanel() const;

  ModelBrowser* modelBrowser() const { return browser_; }
  const PluginLoader& plugins() const { return *plugins_; }
  QStringList pluginSearchPaths() const { return pluginFolders_; }
  QMenu* tasksMenu() const { return tasksMenu_; }
  QStringList recentFiles() const;
  // The last error reported (title: message), for tests and scripted runs.
  QString lastError() const { return lastError_; }

 public slots:
  void showPluginsDialog();
  void showSbmlSupportDialog();
  // `details` (optional) goes into the message box's expandable part and stderr.
  void reportError(const QString& title, const QString& message, const QString& details = {});

 signals:
  void modelOpened(const QString& path);
  void errorReported(const QString& title, const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void buildTaskActions();
  void buildOpenResultsActions(QAction* before);
  bool showOpenedResults(const api::ResultsOpener& opener, const QString& folder,
                         QString* errorString);
  void openFileDialog();
  void saveModelDialog();
  void updateSaveAction();
  void updateRecentMenu();
  void addRecentFile(const QString& path);
  void exportFromPanel(TaskPanel* panel, api::TaskResultView* view,
                       const api::ExportFormat& format);
  void updateExportMenu();
  void setOverrides(const QMap<QString, double>& overrides);
  void saveTaskSettings(TaskPanel* panel);
  void showAbout();
  // The centre's text while no task is open: what to do next, for the session as it is.
  void updateWelcome();
  std::unique_ptr<QSettings> settings() const;

  Options options_;
  std::unique_ptr<PluginLoader> plugins_;
  QStringList pluginFolders_;
  api::ModelSession session_;
  ModelBrowser* browser_ = nullptr;
  QStackedWidget* centre_ = nullptr;
  QTabWidget* taskTabs_ = nullptr;
  QLabel* welcome_ = nullptr;
  QMenu* fileMenu_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QAction* saveModelAction_ = nullptr;
  QMenu* exportMenu_ = nullptr;
  QMenu* tasksMenu_ = nullptr;
  QMenu* helpMenu_ = nullptr;
  QString lastError_;
};

}  // namespace sensode::gui
