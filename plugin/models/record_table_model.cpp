// SPDX-License-Identifier: MIT
#include "plugin/models/record_table_model.h"

#include "plugin/models/number_format.h"

namespace sensode::plugin {

RecordTableModel::RecordTableModel(QStringList headers, QObject* parent)
    : QAbstractTableModel(parent), headers_(std::move(headers)) {}

void RecordTableModel::setRows(QList<Row> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

void RecordTableModel::setTable(QStringList headers, QList<Row> rows) {
  beginResetModel();
  headers_ = std::move(headers);
  rows_ = std::move(rows);
  endResetModel();
}

int RecordTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RecordTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(headers_.size());
}

QVariant RecordTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& row = rows_[index.row()];
  if (index.column() >= row.cells.size()) return {};
  const QVariant& v = row.cells[index.column()];
  const bool isNumber = v.typeId() == QMetaType::Double;
  switch (role) {
    case Qt::DisplayRole:
      return isNumber ? QVariant(shortNumber(v.toDouble())) : v;
    case kValueRole:
      return v;
    case Qt::ToolTipRole:
      if (index.column() < row.toolTips.size() && !row.toolTips[index.column()].isEmpty())
        return row.toolTips[index.column()];
      return isNumber ? QVariant(exactNumber(v.toDouble())) : v;
    case Qt::TextAlignmentRole:
      if (uniformAlignment_.toInt() != 0) return QVariant(uniformAlignment_ | Qt::AlignVCenter);
      return isNumber || v.typeId() == QMetaType::LongLong || v.typeId() == QMetaType::Int
                 ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                 : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default:
      return {};
  }
}

QVariant RecordTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  return section < headers_.size() ? QVariant(headers_[section]) : QVariant();
}

Qt::ItemFlags RecordTableModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

}  // namespace sensode::plugin
