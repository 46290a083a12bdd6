// SPDX-License-Identifier: MIT
#include "plugin/runner/task_runner.h"

#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <exception>

#include "core/common/cancellation.h"
#include "core/common/errors.h"

namespace sensode::plugin {

RunContext::RunContext(QPromise<void>& promise, CancelToken token)
    : promise_(promise), token_(std::move(token)) {
  monitor_.token = token_;
  monitor_.callback = [this](const ProgressInfo& info) {
    if (promise_.isCanceled()) {
      token_.cancel();
      return Decision::Abort;
    }
    if (info.tEnd > 0 && std::isfinite(info.t)) {
      const double fraction =
          (sliceIndex_ + std::clamp(info.t / info.tEnd, 0.0, 1.0)) / sliceCount_;
      const int value = static_cast<int>(fraction * kProgressMaximum);
      constexpr qint64 kTextInterval = 250;  // ms
      // The bar in steps of 1/1000 (a step per integration step would flood the GUI thread);
      // the text at most every kTextInterval while the bar stands still.
      const bool moved = lastValue_ < 0 || value >= lastValue_ + kProgressMaximum / 1000 ||
                         (value == kProgressMaximum && value > lastValue_);
      const bool textDue = progressText_ && lastValue_ >= 0 && textTimer_.isValid() &&
                           textTimer_.elapsed() > kTextInterval;
      if (moved || textDue) {
        const QString text =
            prefix_ + (progressText_ ? progressText_(info)
                                     : QStringLiteral("t = %1 of %2, %3 steps")
                                           .arg(info.t, 0, 'g', 4)
                                           .arg(info.tEnd, 0, 'g', 4)
                                           .arg(info.steps));
        textTimer_.start();
        if (moved || text != lastText_) {
          // A text with the bar standing still goes one step of the fine scale further: QFuture
          // drops a text whose value is not above the last one.
          shownValue_ = std::min(std::max(value, shownValue_ + 1), kProgressMaximum);
          lastValue_ = value;
          lastText_ = text;
          promise_.setProgressValueAndText(shownValue_, text);
        }
      }
    }
    return Decision::Continue;
  };
}

void RunContext::setPhase(const QString& text) {
  if (lastValue_ >= 0 || phase_ >= -1) return;  // integrating already, or out of phase slots
  promise_.setProgressValueAndText(++phase_, prefix_ + text);
}

bool RunContext::cancelled() const { return token_.cancelled() || promise_.isCanceled(); }

CoreTaskRunner::CoreTaskRunner(Work work) : work_(std::move(work)) {
  pool_.setMaxThreadCount(1);
  pool_.setObjectName(QStringLiteral("sensode task runner"));
}

CoreTaskRunner::~CoreTaskRunner() {
  cancel();
  if (future_.isValid()) future_.waitForFinished();
  pool_.waitForDone();
}

QFuture<void> CoreTaskRunner::start(const api::ModelSession& session, const QJsonObject& settings) {
  token_ = CancelToken();  // a fresh flag per run: an old cancel must not stop a new run
  outcome_ = std::make_shared<Outcome>();
  future_ = QtConcurrent::run(
      &pool_,
      [work = work_, session, settings, token = token_, outcome = outcome_](
          QPromise<void>& promise) {
        promise.setProgressRange(-RunContext::kPhaseSlots, RunContext::kProgressMaximum);
        RunContext context(promise, token);
        // Import, conservation analysis and compilation take no monitor: they see the token
        // through the scope (core/common/cancellation.h), so Cancel stops them too.
        const CancellationScope cancellation(token);
        std::shared_ptr<const api::TaskResult> result;
        try {
          result = work(session, settings, context);
        } catch (const Cancelled&) {
          result = std::make_shared<MessageResult>(
              api::TaskStatus::Cancelled,
              QStringLiteral("cancelled while reading and compiling the model"));
        } catch (const IntegrationFailure& e) {
          result = std::make_shared<MessageResult>(api::TaskStatus::Failed,
                                                   QString::fromStdString(e.what()), QJsonObject{},
                                                   QString::fromStdString(e.details()));
        } catch (const std::exception& e) {
          result = std::make_shared<MessageResult>(api::TaskStatus::Failed,
                                                   QString::fromStdString(e.what()));
        } catch (...) {
          result = std::make_shared<MessageResult>(api::TaskStatus::Failed,
                                                   QStringLiteral("unknown error"));
        }
        std::lock_guard lock(outcome->mutex);
        outcome->result = std::move(result);
      });
  return future_;
}

void CoreTaskRunner::cancel() {
  token_.cancel();
  if (future_.isValid() && !future_.isFinished()) future_.cancel();
}

std::shared_ptr<const api::TaskResult> CoreTaskRunner::takeResult() {
  if (!outcome_) return nullptr;
  std::shared_ptr<const api::TaskResult> result;
  {
    std::lock_guard lock(outcome_->mutex);
    result = std::move(outcome_->result);
  }
  if (!result && future_.isFinished()) {
    // Cancelled before the worker started: QtConcurrent skips the function entirely.
    result = std::make_shared<MessageResult>(
        token_.cancelled() ? api::TaskStatus::Cancelled : api::TaskStatus::Failed,
        token_.cancelled() ? QStringLiteral("cancelled before it started")
                           : QStringLiteral("the task ended without a result"));
  }
  return result;
}

}  // namespace sensode::plugin
