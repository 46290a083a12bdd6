// SPDX-License-Identifier: MIT
#include "gui/model_table_model.h"

#include <QFont>
#include <QLocale>

#include <cmath>

namespace sensode::gui {

ModelTableModel::ModelTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ModelTableModel::setTable(const api::ModelTable& table) {
  beginResetModel();
  table_ = table;
  endResetModel();
}

void ModelTableModel::setOverrides(const QMap<QString, double>& overrides) {
  if (overrides == overrides_) return;
  overrides_ = overrides;
  if (table_.valueColumn >= 0 && !table_.rows.isEmpty()) {
    emit dataChanged(index(0, table_.valueColumn),
                     index(static_cast<int>(table_.rows.size()) - 1, table_.valueColumn));
  }
}

int ModelTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows.size());
}

int ModelTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.headers.size());
}

bool ModelTableModel::isEditable(int row, int column) const {
  return column == table_.valueColumn && row >= 0 && row < table_.rows.size() &&
         !table_.rows[row].overrideId.isEmpty();
}

QVariant ModelTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const api::ModelTable::Row& row = table_.rows[index.row()];
  const int column = index.column();
  const bool editable = isEditable(index.row(), column);
  const auto edited = editable ? overrides_.constFind(row.overrideId) : overrides_.constEnd();
  const bool isEdited = editable && edited != overrides_.constEnd();
  const QString text = column < row.cells.size() ? row.cells[column] : QString();

  switch (role) {
    case Qt::DisplayRole:
      return isEdited ? displayNumber(edited.value()) : text;
    case Qt::EditRole:
      if (isEdited) return formatNumber(edited.value());
      return std::isnan(row.nominal) ? text : formatNumber(row.nominal);
    case kSortRole: {
      const QString shown = isEdited ? formatNumber(edited.value()) : text;
      if (const auto v = parseNumber(shown)) return *v;
      return shown;
    }
    case Qt::FontRole:
      if (isEdited) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole:
      if (isEdited) {
        return QStringLiteral("Edited value for '%1'; the file says %2. Clear the cell to go back.")
            .arg(row.overrideId, formatNumber(row.nominal));
      }
      if (editable) {
        return QStringLiteral("%1 in the file; double-click to set a value for '%2'")
            .arg(formatNumber(row.nominal), row.overrideId);
      }
      return row.toolTip.isEmpty() ? QVariant() : QVariant(row.toolTip);
    case Qt::TextAlignmentRole:
      if (column == table_.valueColumn) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default:
      return {};
  }
}

QVariant ModelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Horizontal) {
    return section >= 0 && section < table_.headers.size() ? QVariant(table_.headers[section])
                                                            : QVariant();
  }
  return section + 1;
}

Qt::ItemFlags ModelTableModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  if (isEditable(index.row(), index.column())) f |= Qt::ItemIsEditable;
  return f;
}

bool ModelTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid) ||
      !isEditable(index.row(), index.column()))
    return false;
  const api::ModelTable::Row& row = table_.rows[index.row()];
  const QString text = value.toString().trimmed();
  std::optional<double> newValue;
  if (!text.isEmpty()) {
    newValue = value.typeId() == QMetaType::Double ? std::optional<double>(value.toDouble())
                                                   : parseNumber(text);
    if (!newValue || !std::isfinite(*newValue)) return false;
    if (*newValue == row.nominal) newValue.reset();
  }
  const auto it = overrides_.constFind(row.overrideId);
  const std::optional<double> old =
      it == overrides_.constEnd() ? std::nullopt : std::optional<double>(it.value());
  if (old == newValue) return true;
  if (newValue) {
    overrides_.insert(row.overrideId, *newValue);
  } else {
    overrides_.remove(row.overrideId);
  }
  emit dataChanged(index, index);
  emit overrideEdited(row.overrideId, newValue);
  return true;
}

QString ModelTableModel::formatNumber(double v) {
  if (std::isnan(v)) return QStringLiteral("NaN");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("INF") : QStringLiteral("-INF");
  // Shortest round-trip representation.
  return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

QString ModelTableModel::displayNumber(double v) {
  if (std::isnan(v) || std::isinf(v)) return formatNumber(v);
  if (v == 0) return QStringLiteral("0");
  // As the plugin's tables (number_format.h shortNumber): 8 significant digits, no float noise.
  return QString::number(v, 'g', 8);
}

std::optional<double> ModelTableModel::parseNumber(const QString& text) {
  bool ok = false;
  const QString t = text.trimmed();
  double v = QLocale::c().toDouble(t, &ok);
  if (!ok) v = QLocale().toDouble(t, &ok);
  if (!ok) return std::nullopt;
  return v;
}

}  // namespace sensode::gui
