// SPDX-License-Identifier: MIT
// The bridge between a core task (plain C++: ProgressMonitor with a CancelToken and a callback
// returning Continue/Abort, core/common/progress.h) and the host's QFuture-based runner
// interface. STYLE.md guideline 9, after qtbase examples/qtconcurrent/progressdialog:
//
//   host Cancel ─► CoreTaskRunner::cancel() ─► CancelToken::cancel() + QFuture::cancel()
//   worker: integrator step ─► ProgressMonitor::check() ─► token set / promise.isCanceled()
//           ─► Cancelled thrown inside the core ─► Result{UserAbort, partial data}
//   worker returns ─► result stored ─► QPromise finishes ─► QFutureWatcher::finished (GUI)
//
// Cancel latency is one integration step plus a queued signal: far below the 0.2 s the GUI
// promises, as long as the core checks the monitor every step (the integrators do).
//
// Each runner has its own one-thread pool, so a long run of one task never queues behind
// another task's run in the global pool. A work function reports phases ("Compiling the
// model...") through RunContext and never touches widgets.
#pragma once

#include <QElapsedTimer>
#include <QFuture>
#include <QJsonObject>
#include <QPromise>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <mutex>

#include "core/common/progress.h"
#include "gui/plugin_api/task_plugin.h"

namespace sensode::plugin {

// What a work function gets on the worker thread.
class RunContext {
 public:
  // Progress runs from -kPhaseSlots to kProgressMaximum: the negative values belong to phases
  // before the first integration step (QFuture only reports increasing values), 0..max to t/tEnd.
  // QFuture also drops a new text whose value is not above the last one, so a text that changes
  // while the bar stands still (an estimation's global phase counting its evaluations at 0 of N
  // starts) moves the value by one step of this fine scale: at most one step per kTextInterval,
  // a bar ahead of the truth by 0.4 % after an hour of it.
  static constexpr int kProgressMaximum = 1000000;
  static constexpr int kPhaseSlots = 4;

  RunContext(QPromise<void>& promise, CancelToken token);
  RunContext(const RunContext&) = delete;  // the monitor's callback refers to this object
  RunContext& operator=(const RunContext&) = delete;
  // For the core task: checks the token and the promise every call, maps t/tEnd to progress.
  const ProgressMonitor& monitor() const { return monitor_; }
  // Progress text for phases without a time axis (busy indicator until the first step).
  void setPhase(const QString& text);
  bool cancelled() const;
  // Prefix of the progress text ("Run 2 of 7: ") for tasks that run the core several times.
  void setTextPrefix(const QString& prefix) { prefix_ = prefix; }
  // For tasks that run the core several times: run `index` of `count` fills its share of the
  // bar (QFuture ignores progress that goes back, so each run must start where the last ended).
  void setRunSlice(int index, int count) {
    sliceIndex_ = index;
    sliceCount_ = count > 0 ? count : 1;
  }
  // For tasks whose core progress is not an integration time (the estimation's starts done of
  // planned): the text shown for each ProgressInfo instead of "t = .. of .., .. steps".
  void setProgressText(std::function<QString(const ProgressInfo&)> text) {
    progressText_ = std::move(text);
  }

 private:
  QPromise<void>& promise_;
  CancelToken token_;
  ProgressMonitor monitor_;
  QString prefix_;
  int lastValue_ = -1;   // the last progress reported, from t/tEnd
  int shownValue_ = -1;  // the value QFuture got with it (ahead by the text-only steps)
  // The text also changes while the bar stands still (an estimation's global phase counts its
  // evaluations at 0 of N starts), at most every kTextInterval.
  QString lastText_;
  QElapsedTimer textTimer_;
  int phase_ = -kPhaseSlots;
  int sliceIndex_ = 0, sliceCount_ = 1;
  std::function<QString(const ProgressInfo&)> progressText_;
};

// A task result that carries only a status and a message (failures before the core task ran,
// cancellation before start).
class MessageResult : public api::TaskResult {
 public:
  MessageResult(api::TaskStatus status, QString message, QJsonObject provenance = {},
                QString details = {})
      : status_(status), message_(std::move(message)), details_(std::move(details)),
        provenance_(std::move(provenance)) {}
  api::TaskStatus status() const override { return status_; }
  QString message() const override { return message_; }
  QString details() const override { return details_; }
  QString summary() const override { return message_; }
  QJsonObject provenance() const override { return provenance_; }

 private:
  api::TaskStatus status_;
  QString message_, details_;
  QJsonObject provenance_;
};

class CoreTaskRunner : public api::TaskRunner {
 public:
  // Runs on the worker thread. Exceptions become a Failed MessageResult with what() (and an
  // IntegrationFailure's details()).
  using Work = std::function<std::shared_ptr<const api::TaskResult>(
      const api::ModelSession& session, const QJsonObject& settings, RunContext& context)>;

  explicit CoreTaskRunner(Work work);
  ~CoreTaskRunner() override;

  QFuture<void> start(const api::ModelSession& session, const QJsonObject& settings) override;
  void cancel() override;
  std::shared_ptr<const api::TaskResult> takeResult() override;

 private:
  struct Outcome {
    std::mutex mutex;
    std::shared_ptr<const api::TaskResult> result;
  };

  Work work_;
  QThreadPool pool_;
  QFuture<void> future_;
  CancelToken token_;
  std::shared_ptr<Outcome> outcome_;
};

}  // namespace sensode::plugin
