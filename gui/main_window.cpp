// SPDX-License-Identifier: MIT
#include "gui/main_window.h"
#include "gui/native_cache_preference.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSet>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdio>

#include "gui/model_browser.h"
#include "gui/model_table_model.h"
#include "gui/plugin_loader.h"
#include "gui/plugins_dialog.h"
#include "gui/sbml_support_dialog.h"
#include "gui/task_panel.h"

// gui.qrc is compiled into the static sensode_gui_lib; referencing its initializer keeps the
// linker from dropping it (Q_INIT_RESOURCE must be used outside any namespace).
static void initGuiResources() { Q_INIT_RESOURCE(gui); }

namespace sensode::gui {

namespace {

constexpr int kMaxRecentFiles = 8;

QString formatOf(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  return suffix == QLatin1String("yaml") || suffix == QLatin1String("yml") ? QStringLiteral("petab")
                                                                           : QStringLiteral("sbml");
}

}  // namespace

MainWindow::MainWindow() : MainWindow(Options{}) {}

MainWindow::MainWindow(const Options& options)
    : options_(options), plugins_(std::make_unique<PluginLoader>()) {
  initGuiResources();
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(QStringLiteral("Sensode"));

  pluginFolders_ = options_.pluginFolders ? *options_.pluginFolders
                                          : PluginLoader::defaultSearchPaths();
  plugins_->loadAll(pluginFolders_);

  browser_ = new ModelBrowser;
  browser_->setObjectName(QStringLiteral("modelBrowser"));
  connect(browser_, &ModelBrowser::overridesChanged, this, &MainWindow::setOverrides);
  auto* dock = new QDockWidget(tr("Model"), this);
  dock->setObjectName(QStringLiteral("modelDock"));
  dock->setWidget(browser_);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  taskTabs_ = new QTabWidget;
  taskTabs_->setObjectName(QStringLiteral("taskTabs"));
  taskTabs_->setTabsClosable(true);
  taskTabs_->setMovable(true);
  connect(taskTabs_, &QTabWidget::tabCloseRequested, this, [this](int index) {
    auto* panel = qobject_cast<TaskPanel*>(taskTabs_->widget(index));
    if (!panel) return;
    saveTaskSettings(panel);
    taskTabs_->removeTab(index);
    delete panel;  // cancels and waits for a running task
    if (taskTabs_->count() == 0) centre_->setCurrentWidget(welcome_);
  });
  welcome_ = new QLabel;
  welcome_->setObjectName(QStringLiteral("welcome"));
  welcome_->setAlignment(Qt::AlignCenter);
  welcome_->setWordWrap(true);
  updateWelcome();
  centre_ = new QStackedWidget;
  centre_->addWidget(welcome_);
  centre_->addWidget(taskTabs_);
  setCentralWidget(centre_);

  buildMenus();
  statusBar()->showMessage(
      plugins_->failureCount() > 0
          ? tr("%n plugin problem(s): see Help ▸ Plugins", "", plugins_->failureCount())
          : tr("Ready"));

  resize(1400, 880);
  if (options_.useSettings) {
    auto s = settings();
    restoreGeometry(s->value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(s->value(QStringLiteral("window/state")).toByteArray());
  }
  resizeDocks({dock}, {360}, Qt::Horizontal);
}

MainWindow::~MainWindow() {
  // Panels first (their runners cancel and wait), while the plugins are still loaded.
  while (taskTabs_->count() > 0) {
    QWidget* w = taskTabs_->widget(0);
    taskTabs_->removeTab(0);
    delete w;
  }
}

std::unique_ptr<QSettings> MainWindow::settings() const { return std::make_unique<QSettings>(); }

void MainWindow::buildMenus() {
  fileMenu_ = menuBar()->addMenu(tr("&File"));
  QAction* open = fileMenu_->addAction(tr("&Open..."), this, &MainWindow::openFileDialog);
  open->setShortcut(QKeySequence::Open);
  open->setObjectName(QStringLiteral("actionOpen"));
  recentMenu_ = fileMenu_->addMenu(tr("Open &Recent"));
  recentMenu_->setObjectName(QStringLiteral("recentMenu"));
  updateRecentMenu();
  saveModelAction_ =
      fileMenu_->addAction(tr("&Save model as..."), this, &MainWindow::saveModelDialog);
  saveModelAction_->setShortcut(QKeySequence::SaveAs);
  saveModelAction_->setObjectName(QStringLiteral("actionSaveModelAs"));
  updateSaveAction();
  QAction* beforeExport = fileMenu_->addSeparator();
  exportMenu_ = fileMenu_->addMenu(tr("&Export"));
  exportMenu_->setObjectName(QStringLiteral("exportMenu"));
  connect(exportMenu_, &QMenu::aboutToShow, this, &MainWindow::updateExportMenu);
  fileMenu_->addSeparator();
  QAction* quit = fileMenu_->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  tasksMenu_ = menuBar()->addMenu(tr("&Tasks"));
  tasksMenu_->setObjectName(QStringLiteral("tasksMenu"));
  buildTaskActions();
  buildOpenResultsActions(beforeExport);

  QMenu* settingsMenu = menuBar()->addMenu(tr("&Settings"));
  settingsMenu->setObjectName(QStringLiteral("settingsMenu"));
  addNativeCachePreference(settingsMenu, options_.useSettings);

  helpMenu_ = menuBar()->addMenu(tr("&Help"));
  QAction* pluginsAction =
      helpMenu_->addAction(tr("&Plugins..."), this, &MainWindow::showPluginsDialog);
  pluginsAction->setObjectName(QStringLiteral("actionPlugins"));
  QAction* sbml =
      helpMenu_->addAction(tr("&SBML support..."), this, &MainWindow::showSbmlSupportDialog);
  sbml->setObjectName(QStringLiteral("actionSbmlSupport"));
  helpMenu_->addSeparator();
  helpMenu_->addAction(tr("&About Sensode"), this, &MainWindow::showAbout);
}

void MainWindow::buildTaskActions() {
  QMap<QString, QMenu*> menus;
  menus.insert(QStringLiteral("Tasks"), tasksMenu_);
  auto menuFor = [&](const QString& path) {
    QStringList parts = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (parts.isEmpty()) parts << QStringLiteral("Tasks");
    QString key;
    QMenu* parent = nullptr;
    for (const QString& part : parts) {
      key = key.isEmpty() ? part : key + QLatin1Char('/') + part;
      if (QMenu* existing = menus.value(key)) {
        parent = existing;
        continue;
      }
      QMenu* created = parent ? parent->addMenu(part) : new QMenu(part, this);
      if (!parent) menuBar()->insertMenu(tasksMenu_->menuAction(), created);
      menus.insert(key, created);
      parent = created;
    }
    return parent;
  };

  const QList<api::TaskDescription> tasks = plugins_->tasks();
  for (const api::TaskDescription& t : tasks) {
    QMenu* menu = menuFor(t.menuPath);
    QAction* a = menu->addAction(t.icon, t.displayName);
    a->setObjectName(QStringLiteral("task_") + t.id);
    a->setData(t.id);
    a->setToolTip(t.toolTip);
    a->setStatusTip(t.toolTip);
    const QString id = t.id;
    connect(a, &QAction::triggered, this, [this, id] { openTask(id); });
  }
  if (tasks.isEmpty()) {
    QAction* none = tasksMenu_->addAction(tr("No task plugins loaded (see Help ▸ Plugins)"));
    none->setEnabled(false);
  }
}

QStringList MainWindow::recentFiles() const {
  if (!options_.useSettings) return {};
  return settings()->value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  const QStringList files = recentFiles();
  for (const QString& f : files) {
    QAction* a = recentMenu_->addAction(QDir::toNativeSeparators(f));
    connect(a, &QAction::triggered, this, [this, f] { openModel(f); });
  }
  if (!files.isEmpty()) {
    recentMenu_->addSeparator();
    recentMenu_->addAction(tr("Clear list"), this, [this] {
      if (options_.useSettings) settings()->remove(QStringLiteral("recentFiles"));
      updateRecentMenu();
    });
  }
  recentMenu_->setEnabled(!files.isEmpty());
}

void MainWindow::addRecentFile(const QString& path) {
  if (!options_.useSettings) return;
  QStringList files = recentFiles();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  settings()->setValue(QStringLiteral("recentFiles"), files);
  updateRecentMenu();
}

void MainWindow::openFileDialog() {
  QString dir;
  if (options_.useSettings) dir = settings()->value(QStringLiteral("dirs/open")).toString();
  if (dir.isEmpty() && session_.isOpen()) dir = QFileInfo(session_.filePath).absolutePath();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open model"), dir,
      tr("SBML models (*.xml *.sbml);;PEtab problems (*.yaml *.yml);;All files (*)"));
  if (path.isEmpty()) return;
  if (options_.useSettings) {
    settings()->setValue(QStringLiteral("dirs/open"), QFileInfo(path).absolutePath());
  }
  openModel(path);
}

bool MainWindow::openModel(const QString& path) {
  const QFileInfo info(path);
  if (!info.exists() || !info.isFile()) {
    reportError(tr("Cannot open model"), tr("%1: no such file").arg(QDir::toNativeSeparators(path)));
    return false;
  }
  const QString absolute = info.absoluteFilePath();
  const QString format = formatOf(absolute);

  const QList<const api::TaskPlugin*> readers = plugins_->modelReaders(format);
  std::optional<api::ModelOverview> overview;
  if (!readers.isEmpty()) {
    // Reading compiles the model (seconds for thousands of species): on a worker thread, with
    // the window repainting and showing what it does, but ignoring input until it is done, so
    // openModel() keeps its synchronous contract for menus, --open and tests.
    QGuiApplication::setOverrideCursor(Qt::WaitCursor);
    statusBar()->showMessage(tr("Reading %1...").arg(QDir::toNativeSeparators(absolute)));
    const api::TaskPlugin* reader = readers.first();
    QString why;
    QFuture<std::optional<api::ModelOverview>> future =
        QtConcurrent::run([reader, absolute, &why] { return reader->readModel(absolute, &why); });
    QFutureWatcher<std::optional<api::ModelOverview>> watcher;
    QEventLoop loop;
    connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
    watcher.setFuture(future);
    if (!future.isFinished()) loop.exec(QEventLoop::ExcludeUserInputEvents);
    overview = future.result();
    QGuiApplication::restoreOverrideCursor();
    statusBar()->clearMessage();
    if (!overview) {
      reportError(tr("Cannot open model"), why);
      return false;
    }
  }

  session_ = api::ModelSession{absolute, format, {}};
  if (overview) {
    browser_->setOverview(*overview);
  } else {
    browser_->clear(tr("No loaded plugin describes %1 files; tasks can still use the file.")
                        .arg(format));
  }
  for (int i = 0; i < taskTabs_->count(); ++i) {
    if (auto* panel = qobject_cast<TaskPanel*>(taskTabs_->widget(i))) panel->setSession(session_);
  }
  addRecentFile(absolute);
  updateSaveAction();
  updateWelcome();
  setWindowTitle(tr("%1 — Sensode").arg(info.fileName()));
  statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(absolute)), 8000);
  emit modelOpened(absolute);
  return true;
}

void MainWindow::updateSaveAction() {
  const bool writable =
      session_.isOpen() && !plugins_->modelWriters(session_.format).isEmpty();
  saveModelAction_->setEnabled(writable);
  saveModelAction_->setStatusTip(
      writable ? tr("Write the model with the edited values to a new SBML file")
      : session_.format == QLatin1String("petab")
          ? tr("A PEtab problem is saved with its fit: Parameter estimation ▸ Save fitted problem")
          : tr("Open a model first (and load a plugin that writes models)"));
  saveModelAction_->setToolTip(saveModelAction_->statusTip());
}

void MainWindow::saveModelDialog() {
  if (!session_.isOpen()) return;
  QString dir;
  if (options_.useSettings) dir = settings()->value(QStringLiteral("dirs/save")).toString();
  if (dir.isEmpty()) dir = QFileInfo(session_.filePath).absolutePath();
  const QString suggested = QDir(dir).filePath(
      QStringLiteral("%1_edited.xml").arg(QFileInfo(session_.filePath).completeBaseName()));
  QString path = QFileDialog::getSaveFileName(this, tr("Save model as"), suggested,
                                              tr("SBML models (*.xml *.sbml)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".xml");
  if (options_.useSettings)
    settings()->setValue(QStringLiteral("dirs/save"), QFileInfo(path).absolutePath());
  saveModelAs(path);
}

bool MainWindow::saveModelAs(const QString& path) {
  const QList<const api::ModelWriter*> writers =
      session_.isOpen() ? plugins_->modelWriters(session_.format) : QList<const api::ModelWriter*>{};
  if (writers.isEmpty()) {
    reportError(tr("Cannot save model"),
                session_.isOpen() ? tr("no loaded plugin writes %1 files").arg(session_.format)
                                  : tr("no model is open"));
    return false;
  }
  QStringList warnings;
  QString why;
  if (!writers.first()->saveModel(session_, QFileInfo(path).absoluteFilePath(), &warnings, &why)) {
    reportError(tr("Cannot save model"), why);
    return false;
  }
  for (const QString& w : warnings)
    std::fprintf(stderr, "sensode-gui: warning: %s: %s\n", qPrintable(path), qPrintable(w));
  const QString saved =
      tr("Saved %1 with %n edited value(s)", "", int(session_.overrides.size()))
          .arg(QDir::toNativeSeparators(path));
  statusBar()->showMessage(warnings.isEmpty() ? saved
                                              : saved + QStringLiteral("; ") + warnings.join(QStringLiteral("; ")),
                           10000);
  if (options_.interactive && !warnings.isEmpty()) {
    auto* box = new QMessageBox(QMessageBox::Information, tr("Model saved"), saved + QLatin1Char('.'),
                                QMessageBox::Ok, this);
    box->setInformativeText(warnings.join(QLatin1Char('\n')));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
  return true;
}

QStringList MainWindow::applyOverrides(const QMap<QString, double>& values) {
  QSet<QString> editable;
  for (const QString& title : browser_->tableTitles())
    if (const ModelTableModel* model = browser_->tableModel(title))
      for (const api::ModelTable::Row& row : model->table().rows)
        if (!row.overrideId.isEmpty()) editable.insert(row.overrideId);
  QMap<QString, double> merged = session_.overrides;
  QStringList ignored;
  for (auto it = values.cbegin(); it != values.cend(); ++it) {
    if (editable.contains(it.key())) merged.insert(it.key(), it.value());
    else ignored << it.key();
  }
  browser_->setOverrides(merged);
  setOverrides(browser_->overrides());
  statusBar()->showMessage(
      tr("%n value(s) applied to the model", "", int(values.size() - ignored.size())) +
          (ignored.isEmpty() ? QString()
                             : tr("; not in the open model: %1").arg(ignored.join(QStringLiteral(", ")))),
      10000);
  return ignored;
}

void MainWindow::updateWelcome() {
  int loadedPlugins = 0;
  for (const PluginRecord& r : plugins_->records()) loadedPlugins += r.loaded ? 1 : 0;
  const QString next =
      session_.isOpen()
          ? tr("<p><b>%1</b> is open: choose a task from the <b>Tasks</b> menu.</p>")
                .arg(QFileInfo(session_.filePath).fileName().toHtmlEscaped())
          : tr("<p>Open an SBML model or a PEtab problem with <b>File ▸ Open</b>, then choose a "
               "task from the <b>Tasks</b> menu.</p>");
  welcome_->setText(
      tr("<h3>Sensode</h3>%1<p>%2 task(s) from %3 plugin(s) loaded%4.</p>")
          .arg(next)
          .arg(plugins_->tasks().size())
          .arg(loadedPlugins)
          .arg(plugins_->failureCount() > 0
                   ? tr("; %1 problem(s), see Help ▸ Plugins").arg(plugins_->failureCount())
                   : QString()));
}

void MainWindow::setOverrides(const QMap<QString, double>& overrides) {
  session_.overrides = overrides;
  for (int i = 0; i < taskTabs_->count(); ++i) {
    if (auto* panel = qobject_cast<TaskPanel*>(taskTabs_->widget(i))) panel->setSession(session_);
  }
  statusBar()->showMessage(overrides.isEmpty()
                               ? tr("Using the values in the model file")
                               : tr("%n edited value(s) will be used by the tasks", "",
                                    int(overrides.size())),
                           6000);
}

TaskPanel* MainWindow::taskPanel(const QString& id) const {
  for (int i = 0; i < taskTabs_->count(); ++i) {
    auto* panel = qobject_cast<TaskPanel*>(taskTabs_->widget(i));
    if (panel && panel->task().id == id) return panel;
  }
  return nullptr;
}

TaskPanel* MainWindow::currentTaskPanel() const {
  return qobject_cast<TaskPanel*>(taskTabs_->currentWidget());
}

void MainWindow::buildOpenResultsActions(QAction* before) {
  int n = 0;
  for (const api::ResultsOpener* opener : plugins_->resultsOpeners()) {
    auto* action = new QAction(tr("Open %1").arg(opener->openResultsLabel()), fileMenu_);
    action->setObjectName(QStringLiteral("actionOpenResults%1").arg(n++));
    fileMenu_->insertAction(before, action);
    connect(action, &QAction::triggered, this, [this, opener] {
      const QString folder = QFileDialog::getExistingDirectory(
          this, tr("Open %1").arg(opener->openResultsLabel()),
          options_.useSettings ? settings()->value(QStringLiteral("dirs/results")).toString()
                               : QString());
      if (folder.isEmpty()) return;
      if (options_.useSettings) settings()->setValue(QStringLiteral("dirs/results"), folder);
      QString why;
      if (!showOpenedResults(*opener, folder, &why))
        reportError(tr("Cannot open results"), why);
    });
  }
}

bool MainWindow::showOpenedResults(const api::ResultsOpener& opener, const QString& folder,
                                   QString* errorString) {
  QApplication::setOverrideCursor(Qt::WaitCursor);
  const std::optional<api::OpenedResults> opened = opener.openResults(folder, errorString);
  QApplication::restoreOverrideCursor();
  if (!opened) return false;
  TaskPanel* panel = openTask(opened->taskId);
  if (!panel) {
    if (errorString) *errorString = lastError_;
    return false;
  }
  if (!opened->settings.isEmpty()) panel->setupWidget()->setSettings(opened->settings);
  panel->showOpenedResult(opened->result, folder);
  statusBar()->showMessage(
      tr("Opened %1: %2").arg(QDir::toNativeSeparators(folder), opened->result->summary()), 8000);
  return true;
}

bool MainWindow::openResultsFolder(const QString& folder) {
  QString firstError;
  for (const api::ResultsOpener* opener : plugins_->resultsOpeners()) {
    QString why;
    if (showOpenedResults(*opener, folder, &why)) return true;
    if (firstError.isEmpty()) firstError = why;
  }
  reportError(tr("Cannot open results"),
              firstError.isEmpty() ? tr("no loaded plugin opens saved results") : firstError);
  return false;
}

TaskPanel* MainWindow::openTask(const QString& id) {
  if (TaskPanel* existing = taskPanel(id)) {
    taskTabs_->setCurrentWidget(existing);
    centre_->setCurrentWidget(taskTabs_);
    return existing;
  }
  const api::TaskDescription* task = plugins_->task(id);
  if (!task) {
    QStringList known;
    for (const api::TaskDescription& t : plugins_->tasks()) known << t.id;
    reportError(tr("Unknown task"),
                tr("no loaded plugin provides the task '%1' (known: %2)")
                    .arg(id, known.isEmpty() ? tr("none") : known.join(QStringLiteral(", "))));
    return nullptr;
  }
  auto* panel = new TaskPanel(*task);
  if (options_.useSettings) {
    const QByteArray stored =
        settings()->value(QStringLiteral("tasks/%1/settings").arg(id)).toByteArray();
    if (!stored.isEmpty()) {
      const QJsonDocument doc = QJsonDocument::fromJson(stored);
      if (doc.isObject()) panel->setupWidget()->setSettings(doc.object());
    }
  }
  panel->setSession(session_);
  // Views that propose values for the model (the estimation task's "Apply best fit").
  QList<QObject*> widgets{panel->setupWidget()};
  for (api::TaskResultView* view : panel->resultViews()) widgets << view;
  for (QObject* widget : widgets)
    if (auto* source = qobject_cast<api::OverrideSource*>(widget))
      source->setApplyOverrides(
          [this](const QMap<QString, double>& values) { return applyOverrides(values); });
  connect(panel, &TaskPanel::errorOccurred, this, &MainWindow::reportError);
  connect(panel, &TaskPanel::statusMessage, this, [this](const QString& text) {
    statusBar()->showMessage(text);
    // A run's summary can be longer than the line (fallback sentences): the whole on hover.
    statusBar()->setToolTip(text);
  });
  connect(panel, &TaskPanel::settingsChanged, this, [this, panel] { saveTaskSettings(panel); });
  connect(panel, &TaskPanel::exportRequested, this,
          [this, panel](api::TaskResultView* view, const api::ExportFormat& format) {
            exportFromPanel(panel, view, format);
          });
  const int index = taskTabs_->addTab(panel, task->icon, task->displayName);
  taskTabs_->setCurrentIndex(index);
  centre_->setCurrentWidget(taskTabs_);
  return panel;
}

void MainWindow::saveTaskSettings(TaskPanel* panel) {
  if (!options_.useSettings || !panel) return;
  settings()->setValue(
      QStringLiteral("tasks/%1/settings").arg(panel->task().id),
      QJsonDocument(panel->setupWidget()->settings()).toJson(QJsonDocument::Compact));
}

void MainWindow::updateExportMenu() {
  exportMenu_->clear();
  TaskPanel* panel = currentTaskPanel();
  if (!panel || !panel->shownResult()) {
    exportMenu_->addAction(tr("Nothing to export yet: run a task"))->setEnabled(false);
    return;
  }
  for (const TaskPanel::ExportTarget& t : panel->exportTargets()) {
    api::TaskResultView* view = t.view;
    const api::ExportFormat format = t.format;
    exportMenu_->addAction(format.label, this,
                           [this, panel, view, format] { exportFromPanel(panel, view, format); });
  }
}

void MainWindow::exportFromPanel(TaskPanel* panel, api::TaskResultView* view,
                                 const api::ExportFormat& format) {
  QString dir;
  if (options_.useSettings) dir = settings()->value(QStringLiteral("dirs/export")).toString();
  if (dir.isEmpty()) dir = session_.isOpen() ? QFileInfo(session_.filePath).absolutePath()
                                             : QDir::homePath();
  const QString base = session_.isOpen() ? QFileInfo(session_.filePath).completeBaseName()
                                         : QStringLiteral("result");
  const QString suggested =
      QDir(dir).filePath(QStringLiteral("%1_%2.%3").arg(base, panel->task().id, format.suffix));
  QString path = QFileDialog::getSaveFileName(this, format.label, suggested, format.filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + format.suffix;
  if (options_.useSettings) {
    settings()->setValue(QStringLiteral("dirs/export"), QFileInfo(path).absolutePath());
  }
  QString why;
  if (!panel->exportResult(view, format.id, path, &why)) {
    reportError(tr("Export failed"), why);
    return;
  }
  statusBar()->showMessage(tr("Exported %1 (provenance in %2)")
                               .arg(QDir::toNativeSeparators(path),
                                    QFileInfo(TaskPanel::provenancePath(path)).fileName()),
                           10000);
}

void MainWindow::reportError(const QString& title, const QString& message,
                             const QString& details) {
  lastError_ = title + QStringLiteral(": ") + message;
  statusBar()->showMessage(lastError_);
  std::fprintf(stderr, "sensode-gui: %s\n", qPrintable(lastError_));
  if (!details.isEmpty()) std::fprintf(stderr, "sensode-gui: details: %s\n", qPrintable(details));
  emit errorReported(title, message);
  if (!options_.interactive) return;
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorBox"));
  if (!details.isEmpty()) box->setDetailedText(details);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setTextInteractionFlags(Qt::TextSelectableByMouse);
  box->open();
}

void MainWindow::showPluginsDialog() {
  auto* dialog = new PluginsDialog(*plugins_, pluginFolders_, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->open();
}

void MainWindow::showSbmlSupportDialog() {
  auto* dialog = new SbmlSupportDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  if (!dialog->errorString().isEmpty()) {
    reportError(tr("SBML support table"), dialog->errorString());
  }
  dialog->open();
}

void MainWindow::showAbout() {
  QMessageBox::about(
      this, tr("About Sensode"),
      tr("<h3>Sensode %1</h3><p>Time courses, parameter sensitivities and steady-state "
         "gradients of SBML models, with exact symbolic derivatives.</p><p>Qt %2</p>")
          .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion())));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (options_.useSettings) {
    auto s = settings();
    s->setValue(QStringLiteral("window/geometry"), saveGeometry());
    s->setValue(QStringLiteral("window/state"), saveState());
    for (int i = 0; i < taskTabs_->count(); ++i) {
      saveTaskSettings(qobject_cast<TaskPanel*>(taskTabs_->widget(i)));
    }
  }
  event->accept();
}

}  // namespace sensode::gui
