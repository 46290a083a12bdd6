// SPDX-License-Identifier: MIT
// A read-only table of small records (one row per gradient entry, per steady state, per method
// pair): a header and rows of QVariant cells, filled by a task from its core result. Roles as
// the other Sensode table models, so TableResultView sorts, copies and exports it the same way:
// kValueRole (Qt::UserRole) holds the exact value (double, integer or text), DisplayRole a
// short text (numbers with 8 significant digits), ToolTipRole the exact number or the cell's
// own tool tip. Cells are aligned by type (numbers right, text left), unless the table is
// transposed (one row per diagnostic, numbers and long texts in one column): there one
// alignment for every cell keeps a short number beside its label instead of at the far edge of
// a column widened by a long text (setUniformAlignment).
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <QVariant>

namespace sensode::plugin {

class RecordTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  static constexpr int kValueRole = Qt::UserRole;
  struct Row {
    QVariantList cells;
    QStringList toolTips;  // optional, per cell (empty: the exact value)
  };

  explicit RecordTableModel(QStringList headers, QObject* parent = nullptr);
  void setRows(QList<Row> rows);
  // New headers and rows at once (tables whose columns depend on the result).
  void setTable(QStringList headers, QList<Row> rows);
  const QList<Row>& rows() const { return rows_; }
  const QStringList& headers() const { return headers_; }
  // Every cell aligned the same way (for tables whose columns mix numbers and texts).
  void setUniformAlignment(Qt::Alignment alignment) { uniformAlignment_ = alignment; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 private:
  QStringList headers_;
  QList<Row> rows_;
  Qt::Alignment uniformAlignment_ = {};  // empty: by type
};

}  // namespace sensode::plugin
