// SPDX-License-Identifier: MIT
#include "gui/scripted_run.h"

#include <QCoreApplication>
#include <QPixmap>
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
    connect(panel, &TaskPanel::runFinished, this,
            [this](api::TaskStatus status, const QString&) {
              afterRun(status == api::TaskStatus::Succeeded);
            },
            Qt::SingleShotConnection);
    panel->run();
    if (!panel->isRunning()) afterRun(false);  // refused to start (the error was reported)
  });
}

void ScriptedRun::afterRun(bool ok) {
  if (!quitsWhenDone()) return;
  QTimer::singleShot(kSettleMs, this, [this, ok] { saveAndFinish(ok ? 0 : 1); });
}

void ScriptedRun::saveAndFinish(int exitCode) {
  const QPixmap shot = window_->grab();
  if (shot.isNull() || !shot.save(plan_.screenshot, "PNG")) {
    std::fprintf(stderr, "sensode-gui: %s: cannot save the screenshot\n",
                 qPrintable(plan_.screenshot));
    emit finished(1);
    return;
  }
  std::fprintf(stdout, "sensode-gui: saved %s (%dx%d)\n", qPrintable(plan_.screenshot),
               shot.width(), shot.height());
  std::fflush(stdout);
  emit finished(exitCode);
}

void ScriptedRun::fail(int exitCode, const QString& message) {
  // reportError() has printed the message already; repeat only when it said nothing.
  if (message.isEmpty()) std::fprintf(stderr, "sensode-gui: failed\n");
  if (quitsWhenDone()) {
    emit finished(exitCode);
  }
}

}  // namespace sensode::gui
