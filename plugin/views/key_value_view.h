// SPDX-License-Identifier: MIT
// A side view listing labelled values (integrator statistics and run facts) beside the charts
// and tables. Filled from each result by a task-specific function.
#pragma once

#include <functional>
#include <memory>

#include "gui/plugin_api/task_plugin.h"
#include "plugin/models/key_value_table_model.h"

class QTableView;

namespace sensode::plugin {

class KeyValueView : public api::TaskResultView {
  Q_OBJECT

 public:
  using Extract =
      std::function<QList<KeyValueTableModel::Entry>(const std::shared_ptr<const api::TaskResult>&)>;
  KeyValueView(QString title, Extract extract, QWidget* parent = nullptr);

  QString title() const override { return title_; }
  Placement placement() const override { return Placement::Side; }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  KeyValueTableModel* model() const { return model_; }
  QTableView* tableView() const { return view_; }

 private:
  QString title_;
  Extract extract_;
  KeyValueTableModel* model_ = nullptr;
  QTableView* view_ = nullptr;
};

}  // namespace sensode::plugin
