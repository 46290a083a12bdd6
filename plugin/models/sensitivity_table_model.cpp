// SPDX-License-Identifier: MIT
#include "plugin/models/sensitivity_table_model.h"

#include <algorithm>
#include <climits>

#include "plugin/models/number_format.h"

namespace sensode::plugin {

SensitivityTableModel::SensitivityTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SensitivityTableModel::setResult(std::shared_ptr<const tasks::SensitivityResult> result) {
  beginResetModel();
  result_ = std::move(result);
  endResetModel();
}

int SensitivityTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !result_) return 0;
  const std::size_t n =
      result_->times.size() * result_->outputIds.size() * result_->parameterIds.size();
  return static_cast<int>(std::min<std::size_t>(n, static_cast<std::size_t>(INT_MAX)));
}

int SensitivityTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || !result_ ? 0 : ColumnCount;
}

SensitivityTableModel::Entry SensitivityTableModel::entry(int row) const {
  const std::size_t np = result_->parameterIds.size();
  const std::size_t ny = result_->outputIds.size();
  const auto r = static_cast<std::size_t>(row);
  return {r / (ny * np), (r / np) % ny, r % np};
}

QVariant SensitivityTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Entry e = entry(index.row());
  const auto idText = [](const std::string& s) { return QString::fromStdString(s); };
  switch (index.column()) {
    case Time:
      if (role == Qt::DisplayRole) return shortNumber(result_->times[e.it]);
      if (role == kValueRole) return result_->times[e.it];
      break;
    case Variable:
      if (role == Qt::DisplayRole || role == kValueRole) return idText(result_->outputIds[e.iy]);
      break;
    case Parameter:
      if (role == Qt::DisplayRole || role == kValueRole) return idText(result_->parameterIds[e.ip]);
      break;
    case Value: {
      const double v = result_->at(e.it, e.iy, e.ip);
      if (role == Qt::DisplayRole) return shortNumber(v);
      if (role == kValueRole) return v;
      if (role == Qt::ToolTipRole) {
        const std::size_t k = e.it * result_->outputIds.size() + e.iy;
        const bool guarded = result_->scaled && k < result_->guarded.size() && result_->guarded[k];
        return guarded ? tr("|y| <= atol: the scaled value is reported as 0") : exactNumber(v);
      }
      break;
    }
    default: break;
  }
  if (role == Qt::TextAlignmentRole) {
    return index.column() == Time || index.column() == Value
               ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
               : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
  }
  return {};
}

QVariant SensitivityTableModel::headerData(int section, Qt::Orientation orientation,
                                           int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  switch (section) {
    case Time: return QStringLiteral("time");
    case Variable: return QStringLiteral("variable");
    case Parameter: return QStringLiteral("parameter");
    case Value: return QStringLiteral("value");
    default: return {};
  }
}

Qt::ItemFlags SensitivityTableModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

}  // namespace sensode::plugin
