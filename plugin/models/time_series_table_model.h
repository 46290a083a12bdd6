// SPDX-License-Identifier: MIT
// A read-only table over a core time series (tasks::TimeCourseResult: nt times, ny columns,
// row-major values): column 0 is time, column j+1 is output j; one row per output time. The
// model shares the result (shared_ptr), it never copies the data (STYLE.md guideline 11,
// qtbase addressbook TableModel, COPASI CQTimeSeriesDM). Lives on the GUI thread; the result
// crossed from the worker once, as a value, when the run finished.
//
// Roles: DisplayRole is a short text (8 significant digits), kValueRole the exact double (for
// sorting, copying and CSV), ToolTipRole the full-precision text.
#pragma once

#include <QAbstractTableModel>

#include <memory>

#include "core/tasks/time_course_task.h"

namespace sensode::plugin {

class TimeSeriesTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  static constexpr int kValueRole = Qt::UserRole;

  explicit TimeSeriesTableModel(QObject* parent = nullptr);

  void setSeries(std::shared_ptr<const tasks::TimeCourseResult> series);
  const std::shared_ptr<const tasks::TimeCourseResult>& series() const { return series_; }
  // Header text of column 0 ("time").
  void setTimeHeader(const QString& header);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

  double value(int row, int column) const;

 private:
  std::shared_ptr<const tasks::TimeCourseResult> series_;
  QString timeHeader_ = QStringLiteral("time");
};

}  // namespace sensode::plugin
