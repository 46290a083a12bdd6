// SPDX-License-Identifier: MIT
#include "gui/scripted_run.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>

#include <cstdio>

#include "gui/main_window.h"
#include "gui/task_panel.h"

namespace sensode::gui {

namespace {
// Time for the views to lay out and paint after the result arrived (charts relayout once).
constexpr int kSettleMs = 400;
}  // namespace

ScriptedRun::ScriptedRun(MainWindow* window, Plan plan, QObject* parent)
    : QObject(parent), window_(window), plan_(std::move(plan)) {}

void ScriptedRun::start() {
  QTimer::singleShot(0, this, [this] {
    if (!plan_.open.isEmpty() && !window_->openModel(plan_.open)) {
      fail(1, window_->lastError());
      return;
    }
    if (plan_.run.isEmpty()) {
      if (quitsWhenDone()) QTimer::singleShot(kSettleMs, this, [this] { saveAndFinish(0); });
      return;
    }
    TaskPanel* panel = window_->openTask(plan_.run);
    if (!panel) {
      fail(2, window_->lastError());
      return;
    }
    panel_ = panel;
    if (!plan_.settings.isEmpty()) {
      QJsonObject merged = panel->setupWidget()->settings();
      for (auto it = plan_.settings.begin(); it != plan_.settings.end(); ++it)
        merged.insert(it.key(), it.value());
      panel->setupWidget()->setSettings(merged);
    }
    connect(panel, &TaskPanel::runFinished, this,
            [this](api::TaskStatus status, const QString& message) {
              // A failure's message is on stderr already (MainWindow::reportError); a cancel
              // nobody asked for would otherwise end the run with exit 1 and no word.
              if (status == api::TaskStatus::Cancelled)
                std::fprintf(stderr, "sensode-gui: the run was cancelled: %s\n",
                             qPrintable(message));
              afterRun(status == api::TaskStatus::Succeeded);
            },
            Qt::SingleShotConnection);
    // Whether the run started, from the panel's own signal: isRunning() reads the future's
    // state, which the worker thread sets, so a run that finished before this line (a small
    // model on a loaded machine) looked like one that had refused to start and exited 1.
    // (run() emits runStarted before it returns.)
    bool started = false;
    const QMetaObject::Connection watch =
        connect(panel, &TaskPanel::runStarted, this, [&started] { started = true; });
    panel->run();
    disconnect(watch);
    if (!started) afterRun(false);  // refused to start (the error was reported)
  });
}

void ScriptedRun::afterRun(bool ok) {
  if (!quitsWhenDone()) return;
  QTimer::singleShot(kSettleMs, this, [this, ok] { saveAndFinish(ok ? 0 : 1); });
}

QString ScriptedRun::tabScreenshotPath(const QString& base, const QString& title) {
  const QFileInfo info(base);
  const QString slug = title.toLower().replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")),
                                               QStringLiteral("-"));
  return info.dir().filePath(QStringLiteral("%1-%2.%3")
                                 .arg(info.completeBaseName(), slug,
                                      info.suffix().isEmpty() ? QStringLiteral("png") : info.suffix()));
}

bool ScriptedRun::save(const QString& path) {
  const QPixmap shot = window_->grab();
  if (shot.isNull() || !shot.save(path, "PNG")) {
    std::fprintf(stderr, "sensode-gui: %s: cannot save the screenshot\n", qPrintable(path));
    return false;
  }
  std::fprintf(stdout, "sensode-gui: saved %s (%dx%d)\n", qPrintable(path), shot.width(),
               shot.height());
  std::fflush(stdout);
  return true;
}

void ScriptedRun::saveAndFinish(int exitCode) {
  if (!plan_.everyTab || !panel_) {
    emit finished(save(plan_.screenshot) ? exitCode : 1);
    return;
  }
  for (api::TaskResultView* view : panel_->resultViews())
    if (view->placement() == api::TaskResultView::Placement::Tab) tabs_ << view;
  saveTab(0, exitCode);
}

void ScriptedRun::saveTab(int index, int exitCode) {
  if (index >= tabs_.size()) {
    emit finished(exitCode);
    return;
  }
  // Each tab in front for the time to lay out and paint (charts relayout once).
  panel_->showResultView(tabs_[index]);
  QTimer::singleShot(kSettleMs, this, [this, index, exitCode] {
    const bool saved = save(tabScreenshotPath(plan_.screenshot, tabs_[index]->title()));
    saveTab(index + 1, saved ? exitCode : 1);
  });
}

void ScriptedRun::fail(int exitCode, const QString& message) {
  // reportError() has printed the message already; repeat only when it said nothing.
  if (message.isEmpty()) std::fprintf(stderr, "sensode-gui: failed\n");
  if (quitsWhenDone()) {
    emit finished(exitCode);
  }
}

}  // namespace sensode::gui
