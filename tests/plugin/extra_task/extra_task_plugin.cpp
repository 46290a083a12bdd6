// SPDX-License-Identifier: MIT
#include "extra_task_plugin.h"

#include <QFile>
#include <QLabel>
#include <QPromise>
#include <QSaveFile>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <memory>
#include <mutex>

namespace {

using namespace sensode;

class StatsResult : public api::TaskResult {
 public:
  StatsResult(api::TaskStatus status, QString message, qint64 bytes = 0, qint64 lines = 0,
              qint64 elements = 0)
      : status_(status), message_(std::move(message)), bytes_(bytes), lines_(lines),
        elements_(elements) {}
  api::TaskStatus status() const override { return status_; }
  QString message() const override { return message_; }
  QString summary() const override { return text(); }
  QJsonObject provenance() const override {
    return {{QStringLiteral("task"), QJsonObject{{QStringLiteral("id"), QStringLiteral("filestats")}}},
            {QStringLiteral("bytes"), bytes_}};
  }
  QString text() const {
    return QStringLiteral("%1 bytes, %2 lines, %3 elements").arg(bytes_).arg(lines_).arg(elements_);
  }

 private:
  api::TaskStatus status_;
  QString message_;
  qint64 bytes_, lines_, elements_;
};

class Setup : public api::TaskSetupWidget {
 public:
  explicit Setup(QWidget* parent) : api::TaskSetupWidget(parent) {
    steps_ = new QSpinBox(this);
    steps_->setObjectName(QStringLiteral("steps"));
    steps_->setRange(1, 1000);
    steps_->setValue(5);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(QStringLiteral("Progress steps"), this));
    layout->addWidget(steps_);
  }
  // finishInStart (no widget, --settings only): the runner's start() returns a future that has
  // finished already, as a runner whose work is quick may (tst_gui_flags).
  QJsonObject settings() const override {
    return {{QStringLiteral("steps"), steps_->value()},
            {QStringLiteral("finishInStart"), finishInStart_}};
  }
  void setSettings(const QJsonObject& s) override {
    if (s.contains(QStringLiteral("steps"))) steps_->setValue(s.value(QStringLiteral("steps")).toInt());
    finishInStart_ = s.value(QStringLiteral("finishInStart")).toBool(finishInStart_);
  }

 private:
  QSpinBox* steps_ = nullptr;
  bool finishInStart_ = false;
};

class Runner : public api::TaskRunner {
 public:
  ~Runner() override {
    cancel();
    if (future_.isValid()) future_.waitForFinished();
  }
  QFuture<void> start(const api::ModelSession& session, const QJsonObject& settings) override {
    state_ = std::make_shared<State>();
    const int steps = settings.value(QStringLiteral("steps")).toInt(5);
    future_ = QtConcurrent::run([session, steps, state = state_](QPromise<void>& promise) {
      promise.setProgressRange(0, steps);
      QFile f(session.filePath);
      std::shared_ptr<StatsResult> r;
      if (!f.open(QIODevice::ReadOnly)) {
        r = std::make_shared<StatsResult>(api::TaskStatus::Failed, f.errorString());
      } else {
        const QByteArray bytes = f.readAll();
        for (int i = 1; i <= steps && !promise.isCanceled(); ++i) {
          QThread::msleep(10);
          promise.setProgressValueAndText(i, QStringLiteral("step %1 of %2").arg(i).arg(steps));
        }
        r = promise.isCanceled()
                ? std::make_shared<StatsResult>(api::TaskStatus::Cancelled, QStringLiteral("cancelled"))
                : std::make_shared<StatsResult>(api::TaskStatus::Succeeded, QString(), bytes.size(),
                                                bytes.count('\n'), bytes.count('<') - bytes.count("</"));
      }
      std::lock_guard lock(state->mutex);
      state->result = r;
    });
    if (settings.value(QStringLiteral("finishInStart")).toBool()) future_.waitForFinished();
    return future_;
  }
  void cancel() override {
    if (future_.isValid()) future_.cancel();
  }
  std::shared_ptr<const api::TaskResult> takeResult() override {
    if (!state_) return nullptr;
    std::lock_guard lock(state_->mutex);
    return state_->result;
  }

 private:
  struct State {
    std::mutex mutex;
    std::shared_ptr<const api::TaskResult> result;
  };
  QFuture<void> future_;
  std::shared_ptr<State> state_;
};

class View : public api::TaskResultView {
 public:
  explicit View(QWidget* parent) : api::TaskResultView(parent) {
    label_ = new QLabel(QStringLiteral("no result"), this);
    label_->setObjectName(QStringLiteral("fileStatsLabel"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(label_);
  }
  QString title() const override { return QStringLiteral("File statistics"); }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override {
    if (const auto* r = dynamic_cast<const StatsResult*>(result.get())) label_->setText(r->text());
  }
  QList<api::ExportFormat> exportFormats() const override {
    return {{QStringLiteral("txt"), QStringLiteral("Statistics as text..."),
             QStringLiteral("Text files (*.txt)"), QStringLiteral("txt")}};
  }
  bool exportTo(const QString&, const QString& path, QString* errorString) const override {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
      if (errorString) *errorString = f.errorString();
      return false;
    }
    f.write(label_->text().toUtf8());
    return f.commit();
  }

 private:
  QLabel* label_ = nullptr;
};

}  // namespace

bool ExtraTaskPlugin::initialize(QString*) { return true; }

QList<sensode::api::TaskDescription> ExtraTaskPlugin::tasks() const {
  sensode::api::TaskDescription d;
  d.id = QStringLiteral("filestats");
  d.displayName = QStringLiteral("File statistics");
  d.menuPath = QStringLiteral("Tasks/Examples");
  d.toolTip = QStringLiteral("Counts bytes, lines and elements of the model file");
  d.order = 1;
  d.sessionFormats = {QStringLiteral("sbml"), QStringLiteral("petab")};
  d.createSetupWidget = [](QWidget* parent) -> sensode::api::TaskSetupWidget* {
    return new Setup(parent);
  };
  d.createRunner = []() -> std::unique_ptr<sensode::api::TaskRunner> {
    return std::make_unique<Runner>();
  };
  d.createResultViews = [](QWidget* parent) {
    return QList<sensode::api::TaskResultView*>{new View(parent)};
  };
  return {d};
}
