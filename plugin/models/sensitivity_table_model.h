// SPDX-License-Identifier: MIT
// A read-only table over a core tasks::SensitivityResult in the long format of the CLI's
// `sensode sensitivities --out` (header time,variable,parameter,value; times outermost, then
// outputs, then parameters): one row per entry of dy/dp (or (p/y)·dy/dp when scaled). Shares the
// result, never copies it. Roles as TimeSeriesTableModel: kValueRole is the exact double (or
// the id text), DisplayRole a short text; guarded scaled entries say so in their tool tip.
#pragma once

#include <QAbstractTableModel>

#include <memory>

#include "core/tasks/sensitivities_task.h"

namespace sensode::plugin {

class SensitivityTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Time, Variable, Parameter, Value, ColumnCount };
  static constexpr int kValueRole = Qt::UserRole;

  explicit SensitivityTableModel(QObject* parent = nullptr);
  void setResult(std::shared_ptr<const tasks::SensitivityResult> result);
  const std::shared_ptr<const tasks::SensitivityResult>& result() const { return result_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 private:
  struct Entry {
    std::size_t it, iy, ip;
  };
  Entry entry(int row) const;

  std::shared_ptr<const tasks::SensitivityResult> result_;
};

}  // namespace sensode::plugin
