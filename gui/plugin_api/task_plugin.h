// SPDX-License-Identifier: MIT
// The seam between the desktop host (sensode-gui) and task plugins (sensode_tasks and any other).
//
// The host loads every plugin it finds with QPluginLoader, qobject_casts it to TaskPlugin, calls
// initialize() and builds its Tasks menu from tasks(). It knows nothing about numerics: it hands
// a task the open model as a ModelSession (a file path plus the user's edited values), shows the
// set-up widget the task creates, starts the task's runner and shows its result views. Whatever a
// task computes reaches the host only as an opaque TaskResult, which the task's own views
// interpret. The plugin-and-paint pattern of qtbase (examples/widgets/tools/plugandpaint) with
// Qt Creator's `bool initialize(QString *errorString)`.
//
// Contract details:
//  - Nothing here carries Q_OBJECT: the header is compiled into the host and into every plugin,
//    and one class must not get two meta-objects. Concrete widgets in a plugin may use Q_OBJECT.
//  - Widgets and runners are created by the plugin and owned by the host (widgets through their
//    Qt parent, runners through std::unique_ptr). The host never unloads a plugin.
//  - Runners compute on a worker thread and report through a QFuture<void>: progress range,
//    value and text for the progress bar, finished() when done (also after cancel()). The result
//    is collected with takeResult() afterwards. (Not the future's own result slot, because Qt
//    drops results reported after QFuture::cancel(), and a cancelled run still has to say where
//    it stopped.)
//  - Changing anything in this header that a compiled plugin relies on (a virtual function, a
//    struct layout) requires a new IID (version 2 added TaskResult::details()). The host
//    refuses plugins with another IID and lists them under Help ▸ Plugins with the reason.
#pragma once

#include <QFuture>
#include <QIcon>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <QtPlugin>

#include <functional>
#include <limits>
#include <memory>
#include <optional>

namespace sensode::api {

// The open model as the host knows it. A plain value: copied into runners, which read it on
// their worker thread.
struct ModelSession {
  QString filePath;  // absolute path of the open file; empty when nothing is open
  QString format;    // "sbml" or "petab" (by file name: .yaml/.yml is PEtab, anything else SBML)
  // Values the user edited in the model browser, by the override id the model overview gave
  // the row (a global parameter "k1", a local parameter "R1.k", a species' initial value "S1",
  // a compartment size "c"). Tasks apply them on top of the file's values.
  QMap<QString, double> overrides;

  bool isOpen() const { return !filePath.isEmpty(); }
  bool operator==(const ModelSession&) const = default;
};

// One table of the model browser (Compartments, Species, Parameters, Reactions, Rules, ...).
struct ModelTable {
  struct Row {
    QStringList cells;   // one per header
    QString overrideId;  // non-empty: the cell in valueColumn is editable and edits this id
    double nominal = std::numeric_limits<double>::quiet_NaN();  // the file's value for overrideId
    QString toolTip;     // shown on every cell of the row (e.g. a full rate law)
  };
  QString title;
  QStringList headers;
  // Column of the values (shown beside the id; editable in rows with an overrideId), -1: none.
  int valueColumn = -1;
  QList<Row> rows;
};

// What a plugin reads from a model file for the host's model browser.
struct ModelOverview {
  QString title;    // "repressilator (Repressilator, dimensionless)"
  QString summary;  // "6 species, 12 reactions, 7 parameters"
  QList<ModelTable> tables;
};

enum class TaskStatus { Succeeded, Failed, Cancelled };

// The outcome of one run. The concrete type belongs to the task; the host only shows the status,
// the message and the summary, passes the result to the task's views, and writes provenance()
// beside every export.
class TaskResult {
 public:
  virtual ~TaskResult() = default;
  virtual TaskStatus status() const = 0;
  // Empty on success; otherwise the core's one-line message (what happened, where), in a
  // modeller's words: the headline of a failure.
  virtual QString message() const = 0;
  // On failure, the technical detail behind message() (which evaluator entry, which solver flag,
  // what was tried), for the expandable part of the error report; empty when there is none.
  // (Added in interface version 2.)
  virtual QString details() const { return {}; }
  // One line for the status bar: "Time course: 501 points x 6 outputs, 1234 steps, 0.012 s".
  virtual QString summary() const = 0;
  // Everything needed to reproduce the run: model file and SHA-256, task settings, method,
  // tolerances, derivative source, Sensode version, parameter overrides, wall time.
  virtual QJsonObject provenance() const = 0;
};

// The task's set-up form. The host shows it beside Run/Cancel, stores settings() in QSettings
// per task id, restores them with setSettings(), and passes settings() to the runner.
class TaskSetupWidget : public QWidget {
 public:
  using QWidget::QWidget;
  virtual QJsonObject settings() const = 0;
  // Unknown keys are ignored; missing keys keep their current values.
  virtual void setSettings(const QJsonObject& settings) = 0;
  // Called when a model is opened or its edited values change (e.g. to offer parameter lists).
  virtual void setSession(const ModelSession& session) { (void)session; }
  // Why the current input cannot run (one line naming the field), or an empty string.
  virtual QString validate() const { return {}; }
};

struct ExportFormat {
  QString id;      // "csv", "png", "svg", ...
  QString label;   // menu text, "Table as CSV..."
  QString filter;  // file dialog filter, "CSV files (*.csv)"
  QString suffix;  // default file suffix without dot, "csv"
};

// A view of results. Tab views fill the host's result tabs; side views go into the column
// under the set-up widget (statistics, summaries).
class TaskResultView : public QWidget {
 public:
  enum class Placement { Tab, Side };
  using QWidget::QWidget;
  virtual QString title() const = 0;
  virtual Placement placement() const { return Placement::Tab; }
  // Called on the GUI thread with every successful result; failed and cancelled runs never
  // reach the views, so the previous results stay on screen.
  virtual void showResult(const std::shared_ptr<const TaskResult>& result) = 0;
  virtual QList<ExportFormat> exportFormats() const { return {}; }
  // Writes the shown result in `formatId` to `path`. The host writes the provenance JSON.
  virtual bool exportTo(const QString& formatId, const QString& path,
                        QString* errorString) const {
    (void)formatId;
    (void)path;
    if (errorString) *errorString = QStringLiteral("this view has nothing to export");
    return false;
  }
};

// Runs a task off the GUI thread. One runner per open task; start() is called again for every
// run, never while the previous future is unfinished. The destructor cancels and waits.
class TaskRunner {
 public:
  virtual ~TaskRunner() = default;
  virtual QFuture<void> start(const ModelSession& session, const QJsonObject& settings) = 0;
  // Asks the running computation to stop; the future finishes soon after (within 0.2 s for the
  // Sensode tasks) and takeResult() then has status Cancelled.
  virtual void cancel() = 0;
  // The outcome of the last run, once its future has finished (nullptr before that).
  virtual std::shared_ptr<const TaskResult> takeResult() = 0;
};

struct TaskDescription {
  QString id;           // stable, used by --run and QSettings: "timecourse"
  QString displayName;  // "Time course"
  // Where the menu entry goes: top-level menu, then sub-menus, separated by '/'.
  QString menuPath = QStringLiteral("Tasks");
  QString toolTip;
  QIcon icon;
  int order = 100;  // ascending within a menu
  QStringList sessionFormats = {QStringLiteral("sbml")};  // ModelSession::format values it runs on
  std::function<TaskSetupWidget*(QWidget* parent)> createSetupWidget;
  std::function<std::unique_ptr<TaskRunner>()> createRunner;
  std::function<QList<TaskResultView*>(QWidget* parent)> createResultViews;
};

class TaskPlugin {
 public:
  virtual ~TaskPlugin() = default;
  // Called once after loading; false (with a reason) lists the plugin as failed.
  virtual bool initialize(QString* errorString) = 0;
  virtual QList<TaskDescription> tasks() const = 0;
  // Model formats readModel() understands ("sbml", "petab"); empty when the plugin reads none.
  virtual QStringList modelFormats() const { return {}; }
  // Reads a model file for the host's browser; nullopt with the reader's message on failure.
  virtual std::optional<ModelOverview> readModel(const QString& path,
                                                 QString* errorString) const {
    (void)path;
    if (errorString) *errorString = QStringLiteral("this plugin reads no models");
    return std::nullopt;
  }
};

}  // namespace sensode::api

#define SENSODE_TASK_PLUGIN_IID "org.sensode.TaskPlugin/2"
Q_DECLARE_INTERFACE(sensode::api::TaskPlugin, SENSODE_TASK_PLUGIN_IID)
