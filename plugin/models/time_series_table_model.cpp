// SPDX-License-Identifier: MIT
#include "plugin/models/time_series_table_model.h"

#include "plugin/models/number_format.h"

namespace sensode::plugin {

TimeSeriesTableModel::TimeSeriesTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimeSeriesTableModel::setSeries(std::shared_ptr<const tasks::TimeCourseResult> series) {
  beginResetModel();
  series_ = std::move(series);
  endResetModel();
}

void TimeSeriesTableModel::setTimeHeader(const QString& header) {
  timeHeader_ = header;
  emit headerDataChanged(Qt::Horizontal, 0, 0);
}

int TimeSeriesTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !series_) return 0;
  return static_cast<int>(series_->times.size());
}

int TimeSeriesTableModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || !series_) return 0;
  return 1 + static_cast<int>(series_->columns.size());
}

double TimeSeriesTableModel::value(int row, int column) const {
  const auto r = static_cast<std::size_t>(row);
  if (column == 0) return series_->times[r];
  return series_->at(r, static_cast<std::size_t>(column - 1));
}

QVariant TimeSeriesTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  switch (role) {
    case Qt::DisplayRole: return shortNumber(value(index.row(), index.column()));
    case kValueRole: return value(index.row(), index.column());
    case Qt::ToolTipRole: return exactNumber(value(index.row(), index.column()));
    case Qt::TextAlignmentRole: return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default: return {};
  }
}

QVariant TimeSeriesTableModel::headerData(int section, Qt::Orientation orientation,
                                          int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  if (section == 0) return timeHeader_;
  if (!series_ || section < 0 || section > static_cast<int>(series_->columns.size())) return {};
  return QString::fromStdString(series_->columns[static_cast<std::size_t>(section - 1)]);
}

Qt::ItemFlags TimeSeriesTableModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

}  // namespace sensode::plugin
