// SPDX-License-Identifier: MIT
#include "plugin/models/key_value_table_model.h"

#include <QLocale>

namespace sensode::plugin {

KeyValueTableModel::KeyValueTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void KeyValueTableModel::setEntries(QList<Entry> entries) {
  beginResetModel();
  entries_ = std::move(entries);
  endResetModel();
}

QVariant KeyValueTableModel::value(const QString& key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return e.value;
  }
  return {};
}

int KeyValueTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int KeyValueTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 2;
}

QVariant KeyValueTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Entry& e = entries_[index.row()];
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == 0) return e.label;
      if (e.value.typeId() == QMetaType::Double) {
        return QString::number(e.value.toDouble(), 'g', 4);
      }
      if (e.value.typeId() == QMetaType::LongLong || e.value.typeId() == QMetaType::Int ||
          e.value.typeId() == QMetaType::Long) {
        return QLocale::c().toString(e.value.toLongLong());
      }
      return e.value.toString();
    case kValueRole: return index.column() == 0 ? QVariant(e.key) : e.value;
    case Qt::ToolTipRole: return e.toolTip.isEmpty() ? QVariant() : QVariant(e.toolTip);
    case Qt::TextAlignmentRole:
      return index.column() == 1 ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default: return {};
  }
}

QVariant KeyValueTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  return section == 0 ? tr("Quantity") : tr("Value");
}

}  // namespace sensode::plugin
