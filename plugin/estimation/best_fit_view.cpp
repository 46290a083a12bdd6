// SPDX-License-Identifier: MIT
#include "plugin/estimation/best_fit_view.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <exception>

#include "core/common/errors.h"
#include "core/estimation/fitted_problem.h"
#include "plugin/estimation/estimation_task.h"
#include "plugin/models/number_format.h"

namespace sensode::plugin::estimation {

namespace {

const Result* resultOf(const std::shared_ptr<const api::TaskResult>& r) {
  return dynamic_cast<const Result*>(r.get());
}

// The fitted problem's yaml, as the run recorded it in its provenance.
QString problemOf(const Result& r) {
  return r.provenance()
      .value(QStringLiteral("petab"))
      .toObject()
      .value(QStringLiteral("yaml"))
      .toString();
}

}  // namespace

BestFitView::BestFitView(QWidget* parent) : api::TaskResultView(parent) {
  summary_ = new QLabel(tr("Run the estimation to get a best fit."), this);
  summary_->setWordWrap(true);
  apply_ = new QPushButton(tr("Apply best fit"), this);
  apply_->setObjectName(QStringLiteral("applyBestFit"));
  apply_->setToolTip(tr("Use the best fit as the model's values: they appear edited in the model "
                        "browser and every task uses them"));
  save_ = new QPushButton(tr("Save fitted problem..."), this);
  save_->setObjectName(QStringLiteral("saveFittedProblem"));
  save_->setToolTip(tr("Write problem.yaml into a folder: the PEtab problem with the best fit as "
                       "its nominal values, with copies of its other files"));
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("bestFitStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(apply_);
  buttons->addWidget(save_);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(summary_);
  layout->addLayout(buttons);
  layout->addWidget(status_);

  connect(apply_, &QPushButton::clicked, this, [this] { applyBestFit(); });
  connect(save_, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Folder for the fitted problem (problem.yaml and copies of its files)"));
    if (!dir.isEmpty()) saveFittedProblem(dir);
  });
  updateButtons();
}

void BestFitView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  result_ = result;
  const Result* r = resultOf(result);
  status_->clear();
  if (!r || r->core()->best.empty()) {
    summary_->setText(tr("No best fit in this result."));
  } else {
    summary_->setText(tr("Best objective %1 (%2 parameters) in %3.")
                          .arg(shortNumber(r->core()->bestObjective))
                          .arg(r->core()->parameters.size())
                          .arg(QDir::toNativeSeparators(QFileInfo(problemOf(*r)).fileName())));
  }
  updateButtons();
}

void BestFitView::setApplyOverrides(ApplyOverrides apply) {
  applyOverrides_ = std::move(apply);
  updateButtons();
}

void BestFitView::updateButtons() {
  const Result* r = resultOf(result_);
  const bool fitted = r && !r->core()->best.empty();
  apply_->setEnabled(fitted && applyOverrides_ != nullptr);
  save_->setEnabled(fitted);
}

QString BestFitView::statusText() const { return status_->text(); }

bool BestFitView::applyBestFit(QString* errorString) {
  const Result* r = resultOf(result_);
  const auto fail = [&](const QString& why) {
    status_->setText(why);
    if (errorString) *errorString = why;
    return false;
  };
  if (!r || r->core()->best.empty()) return fail(tr("no best fit to apply"));
  if (!applyOverrides_) return fail(tr("the host takes no values from tasks"));
  QMap<QString, double> values;
  for (const auto& [id, value] : sensode::estimation::bestFitNominalValues(*r->core()))
    values.insert(QString::fromStdString(id), value);
  const QStringList ignored = applyOverrides_(values);
  if (ignored.size() == values.size())
    return fail(tr("The open model has none of the fitted parameters (%1).")
                    .arg(ignored.join(QStringLiteral(", "))));
  status_->setText(ignored.isEmpty()
                       ? tr("Applied %n value(s) to the model.", "", int(values.size()))
                       : tr("Applied %n value(s); not in the open model: %1.", "",
                            int(values.size() - ignored.size()))
                             .arg(ignored.join(QStringLiteral(", "))));
  return true;
}

bool BestFitView::saveFittedProblem(const QString& dir, QString* errorString) {
  const Result* r = resultOf(result_);
  try {
    if (!r) throw Error("no best fit to save");
    const auto written = sensode::estimation::writeFittedProblem(
        QFile::encodeName(problemOf(*r)).toStdString(), *r->core(),
        QFile::encodeName(dir).toStdString());
    // The folder's name only (a wrapped line is clipped in the side column); the path in the
    // tool tip.
    const QString yaml = QString::fromStdString(written.yaml.string());
    status_->setText(tr("Saved %1/problem.yaml, %n file(s) copied.", "", int(written.copies.size()))
                         .arg(QFileInfo(QFileInfo(yaml).absolutePath()).fileName()));
    status_->setToolTip(QDir::toNativeSeparators(yaml));
    return true;
  } catch (const std::exception& e) {
    status_->setText(QString::fromStdString(e.what()));
    if (errorString) *errorString = status_->text();
    return false;
  }
}

}  // namespace sensode::plugin::estimation
