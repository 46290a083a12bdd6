// SPDX-License-Identifier: MIT
#include "gui/task_panel.h"

#include <QDir>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "gui/provenance.h"

namespace sensode::gui {

namespace {

// A word-wrapped QLabel asks for about 80 characters of width as its minimum; in a result tab
// or the settings column that minimum widened the whole window (the sensitivity and estimation
// tabs' captions). Such labels take the width they are given and wrap to it instead.
void wrapLabelsToTheirRoom(QWidget* root) {
  for (QLabel* label : root->findChildren<QLabel*>()) {
    if (!label->wordWrap()) continue;
    QSizePolicy policy = label->sizePolicy();
    policy.setHorizontalPolicy(QSizePolicy::Ignored);
    label->setSizePolicy(policy);
  }
}

}  // namespace

TaskPanel::TaskPanel(const api::TaskDescription& task, QWidget* parent)
    : QWidget(parent), task_(task) {
  setObjectName(QStringLiteral("taskPanel_") + task_.id);

  // Left column: settings, Run/Cancel, progress, side views.
  auto* left = new QWidget;
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(6, 6, 6, 6);

  auto* settingsBox = new QGroupBox(tr("Settings"), left);
  auto* settingsLayout = new QVBoxLayout(settingsBox);
  setup_ = task_.createSetupWidget(settingsBox);
  setup_->setObjectName(QStringLiteral("setup_") + task_.id);
  settingsLayout->addWidget(setup_);

  run_ = new QPushButton(tr("Run"), settingsBox);
  run_->setObjectName(QStringLiteral("runButton"));
  run_->setDefault(true);
  run_->setToolTip(tr("Run %1 with these settings").arg(task_.displayName));
  cancel_ = new QPushButton(tr("Cancel"), settingsBox);
  cancel_->setObjectName(QStringLiteral("cancelButton"));
  cancel_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_, 1);
  buttons->addWidget(cancel_, 1);
  settingsLayout->addLayout(buttons);

  progress_ = new QProgressBar(settingsBox);
  progress_->setObjectName(QStringLiteral("progressBar"));
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setTextVisible(false);
  progressText_ = new QLabel(tr("Ready"), settingsBox);
  progressText_->setObjectName(QStringLiteral("progressText"));
  progressText_->setWordWrap(true);
  settingsLayout->addWidget(progress_);
  settingsLayout->addWidget(progressText_);
  leftLayout->addWidget(settingsBox);

  // Right: result tabs with an Export button in the corner.
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("resultTabs"));
  tabs_->setDocumentMode(true);
  auto* corner = new QWidget(tabs_);
  auto* cornerLayout = new QHBoxLayout(corner);
  cornerLayout->setContentsMargins(0, 2, 6, 2);
  export_ = new QToolButton(corner);
  cornerLayout->addWidget(export_);
  export_->setObjectName(QStringLiteral("exportButton"));
  export_->setText(tr("Export"));
  export_->setToolTip(tr("Export the shown results; a .provenance.json file goes beside each"));
  export_->setPopupMode(QToolButton::InstantPopup);
  export_->setMenu(new QMenu(export_));
  export_->setEnabled(false);
  connect(export_->menu(), &QMenu::aboutToShow, this, &TaskPanel::showExportMenu);
  tabs_->setCornerWidget(corner, Qt::TopRightCorner);

  views_ = task_.createResultViews(this);
  for (api::TaskResultView* view : views_) {
    view->setObjectName(QStringLiteral("resultView_") + view->title());
    if (view->placement() == api::TaskResultView::Placement::Side) {
      auto* box = new QGroupBox(view->title(), left);
      auto* boxLayout = new QVBoxLayout(box);
      boxLayout->setContentsMargins(4, 4, 4, 4);
      view->setParent(box);
      boxLayout->addWidget(view);
      leftLayout->addWidget(box);
    } else {
      tabs_->addTab(view, view->title());
    }
  }
  leftLayout->addStretch(1);
  wrapLabelsToTheirRoom(left);
  for (api::TaskResultView* view : views_) wrapLabelsToTheirRoom(view);

  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("settingsScroll"));
  scroll->setWidget(left);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(left->minimumSizeHint().width() + 12);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(scroll);
  splitter->addWidget(tabs_);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);
  splitter->setChildrenCollapsible(false);
  splitter->setSizes({320, 900});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(splitter);

  runner_ = task_.createRunner();

  connect(run_, &QPushButton::clicked, this, &TaskPanel::run);
  connect(cancel_, &QPushButton::clicked, this, &TaskPanel::cancel);
  connect(&watcher_, &QFutureWatcher<void>::progressRangeChanged, progress_,
          &QProgressBar::setRange);
  connect(&watcher_, &QFutureWatcher<void>::progressValueChanged, progress_,
          &QProgressBar::setValue);
  connect(&watcher_, &QFutureWatcher<void>::progressTextChanged, progressText_, &QLabel::setText);
  connect(&watcher_, &QFutureWatcher<void>::finished, this, &TaskPanel::onFinished);
}

TaskPanel::~TaskPanel() {
  // The runner's destructor cancels and waits; disconnect first so no signal reaches a
  // half-destroyed panel.
  watcher_.disconnect(this);
  runner_.reset();
}

api::TaskResultView* TaskPanel::resultView(const QString& title) const {
  for (api::TaskResultView* v : views_) {
    if (v->title() == title) return v;
  }
  return nullptr;
}

void TaskPanel::showResultView(api::TaskResultView* view) {
  const int index = tabs_->indexOf(view);
  if (index >= 0) tabs_->setCurrentIndex(index);
}

bool TaskPanel::isRunning() const { return watcher_.future().isValid() && !watcher_.isFinished(); }

void TaskPanel::setSession(const api::ModelSession& session) {
  session_ = session;
  setup_->setSession(session);
}

void TaskPanel::run() {
  if (isRunning()) return;
  if (!session_.isOpen()) {
    emit errorOccurred(tr("%1").arg(task_.displayName), tr("Open a model first (File ▸ Open)."));
    return;
  }
  if (!task_.sessionFormats.contains(session_.format)) {
    emit errorOccurred(task_.displayName,
                       tr("%1 does not run on %2 files (it needs: %3).")
                           .arg(task_.displayName, session_.format,
                                task_.sessionFormats.join(QStringLiteral(", "))));
    return;
  }
  const QString problem = setup_->validate();
  if (!problem.isEmpty()) {
    emit errorOccurred(tr("%1: invalid settings").arg(task_.displayName), problem);
    return;
  }
  runSettings_ = setup_->settings();
  emit settingsChanged();
  progress_->setRange(0, 0);  // busy until the runner reports a range
  progress_->setTextVisible(true);
  progressText_->setText(tr("Starting..."));
  setRunning(true);
  watcher_.setFuture(runner_->start(session_, runSettings_));
  emit runStarted();
  emit statusMessage(tr("%1 running...").arg(task_.displayName));
}

void TaskPanel::cancel() {
  if (!isRunning()) return;
  cancel_->setEnabled(false);
  progressText_->setText(tr("Cancelling..."));
  runner_->cancel();
}

void TaskPanel::setRunning(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  setup_->setEnabled(!running);
}

void TaskPanel::show(const std::shared_ptr<const api::TaskResult>& result) {
  shown_ = result;
  for (api::TaskResultView* view : views_) view->showResult(result);
  export_->setEnabled(!exportTargets().isEmpty());
}

void TaskPanel::showOpenedResult(const std::shared_ptr<const api::TaskResult>& result,
                                 const QString& source) {
  progress_->setRange(0, 1);
  progress_->setValue(1);
  progressText_->setToolTip(QDir::toNativeSeparators(source));
  progressText_->setText(tr("Opened %1: %2")
                             .arg(QFileInfo(source).fileName(), result->summary()));
  show(result);
}

void TaskPanel::onFinished() {
  setRunning(false);
  progress_->setRange(0, 1);
  std::shared_ptr<const api::TaskResult> result = runner_->takeResult();
  if (!result) {
    progress_->setValue(0);
    progressText_->setText(tr("Failed"));
    const QString message = tr("the task ended without a result");
    emit errorOccurred(tr("%1 failed").arg(task_.displayName), message);
    emit runFinished(api::TaskStatus::Failed, message);
    return;
  }
  switch (result->status()) {
    case api::TaskStatus::Succeeded:
      progress_->setValue(1);
      progressText_->setToolTip({});
      progressText_->setText(tr("Done: %1").arg(result->summary()));
      show(result);
      emit statusMessage(result->summary());
      break;
    case api::TaskStatus::Cancelled:
      progress_->setValue(0);
      progressText_->setText(shown_ ? tr("Cancelled (%1); the previous results are still shown.")
                                          .arg(result->message())
                                    : tr("Cancelled (%1).").arg(result->message()));
      emit statusMessage(tr("%1 cancelled: %2").arg(task_.displayName, result->message()));
      break;
    case api::TaskStatus::Failed:
      // The headline in the panel and the dialog; the technical detail behind it in the
      // dialog's expandable part and the label's tool tip.
      progress_->setValue(0);
      progressText_->setText(tr("Failed: %1").arg(result->message()));
      progressText_->setToolTip(result->details());
      emit errorOccurred(tr("%1 failed").arg(task_.displayName), result->message(),
                         result->details());
      break;
  }
  emit runFinished(result->status(), result->message());
}

QList<TaskPanel::ExportTarget> TaskPanel::exportTargets() const {
  QList<ExportTarget> targets;
  for (api::TaskResultView* view : views_) {
    for (const api::ExportFormat& f : view->exportFormats()) targets.append({view, f});
  }
  return targets;
}

QString TaskPanel::provenancePath(const QString& exportPath) {
  return exportPath + QStringLiteral(".provenance.json");
}

bool TaskPanel::exportResult(api::TaskResultView* view, const QString& formatId,
                             const QString& path, QString* errorString) {
  if (!shown_) {
    if (errorString) *errorString = tr("there is no result to export yet; run the task first");
    return false;
  }
  QString why;
  if (!view->exportTo(formatId, path, &why)) {
    if (errorString) *errorString = QStringLiteral("%1: %2").arg(path, why);
    return false;
  }
  if (!writeProvenance(*shown_, task_, path, formatId, provenancePath(path), &why)) {
    if (errorString) *errorString = why;
    return false;
  }
  return true;
}

void TaskPanel::showExportMenu() {
  QMenu* menu = export_->menu();
  menu->clear();
  for (const ExportTarget& t : exportTargets()) {
    QAction* a = menu->addAction(t.format.label);
    api::TaskResultView* view = t.view;
    const api::ExportFormat format = t.format;
    connect(a, &QAction::triggered, this, [this, view, format] {
      emit exportRequested(view, format);
    });
  }
}

}  // namespace sensode::gui
