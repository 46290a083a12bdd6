// SPDX-License-Identifier: MIT
// A result tab with a sortable, copyable table over any table model whose cells carry their
// exact value in Qt::UserRole (TimeSeriesTableModel, the sensitivity and gradient tables to
// come). Sorting goes through a proxy, so the model keeps the core's order; Ctrl+C copies the
// selection as tab-separated text with a header row and full-precision numbers; CSV export
// writes the whole table in the model's order with the CLI's number format, so the GUI's CSV and
// `sensode simulate --out` agree.
#pragma once

#include <QAbstractTableModel>

#include <functional>
#include <memory>

#include "gui/plugin_api/task_plugin.h"

class QSortFilterProxyModel;
class QTableView;
class QLabel;

namespace sensode::plugin {

class TableResultView : public api::TaskResultView {
  Q_OBJECT

 public:
  // `update` puts a result into `model` (called with every successful result).
  using Update = std::function<void(const std::shared_ptr<const api::TaskResult>&)>;
  TableResultView(QString title, QAbstractTableModel* model, Update update,
                  QWidget* parent = nullptr);

  QString title() const override { return title_; }
  void showResult(const std::shared_ptr<const api::TaskResult>& result) override;
  QList<api::ExportFormat> exportFormats() const override;
  bool exportTo(const QString& formatId, const QString& path,
                QString* errorString) const override;

  QTableView* tableView() const { return view_; }
  QAbstractTableModel* sourceModel() const { return model_; }
  QSortFilterProxyModel* proxyModel() const { return proxy_; }

  // The selection as tab-separated text (header row first), in the view's order.
  QString selectionAsText() const;
  // The whole table as CSV in the model's order.
  QString toCsv() const;

 public slots:
  void copySelection() const;

 private:
  QString title_;
  QAbstractTableModel* model_;
  Update update_;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* view_ = nullptr;
  QLabel* caption_ = nullptr;
};

}  // namespace sensode::plugin
