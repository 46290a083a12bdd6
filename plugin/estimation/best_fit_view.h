// SPDX-License-Identifier: MIT
// The estimation task's "Best fit" side view: what the fit reached and two ways to keep it.
//  - Apply best fit: the best point (linear values, as PEtab nominal values) becomes the open
//    model's edited values through the host (api::OverrideSource): the PEtab parameters of the
//    open problem, or the parameters of an open SBML model that share the PEtab ids. Every task
//    then uses them; File ▸ Save model as writes them into an SBML model.
//  - Save fitted problem...: DIR/problem.yaml, the PEtab problem with the best fit as its nominal
//    values and copies of its other files — what `sensode estimate --out DIR` writes, through the
//    same core function (core/estimation/fitted_problem.h).
#pragma once

#include <memory>

#include "gui/plugin_api/model_editing.h"
#include "gui/plugin_api/task_plugin.h"

class QLabel;
class QPushButton;

namespace sensode::plugin::estimation {

class BestFitView : public api::TaskResultView, public api::OverrideSource {
  Q_OBJECT
  Q_INTERFACES(sensode::api::OverrideSource)

 public:
  explicit BestFitView(QWidget* parent = nullptr);

  QString title() const override { return QStringLiteral("Best fit"); }
  Placement placement() const override { return Placement::Side; }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  void setApplyOverrides(ApplyOverrides apply) override;

  // The actions without dialogs (tests, scripting). false with the reason in *errorString.
  bool applyBestFit(QString* errorString = nullptr);
  bool saveFittedProblem(const QString& dir, QString* errorString = nullptr);

  QPushButton* applyButton() const { return apply_; }
  QPushButton* saveButton() const { return save_; }
  // The line under the buttons: what the last action did.
  QString statusText() const;

 private:
  void updateButtons();

  std::shared_ptr<const api::TaskResult> result_;
  ApplyOverrides applyOverrides_;
  QLabel* summary_ = nullptr;
  QLabel* status_ = nullptr;
  QPushButton* apply_ = nullptr;
  QPushButton* save_ = nullptr;
};

}  // namespace sensode::plugin::estimation
