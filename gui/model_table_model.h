// SPDX-License-Identifier: MIT
// One table of the model browser over an api::ModelTable, with the value column editable for
// rows that carry an override id. An edit is a user's value for that id: the model keeps a copy of
// the session's edited values, shows edited cells in bold with the file's value in the tool tip,
// and reports each edit through overrideEdited(). Entering the file's value again (or an empty
// cell) removes the edit.
#pragma once

#include <QAbstractTableModel>
#include <QMap>

#include <optional>

#include "gui/plugin_api/task_plugin.h"

namespace sensode::gui {

class ModelTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // Sort role: numbers for numeric cells, text otherwise.
  static constexpr int kSortRole = Qt::UserRole;

  explicit ModelTableModel(QObject* parent = nullptr);

  void setTable(const api::ModelTable& table);
  const api::ModelTable& table() const { return table_; }
  void setOverrides(const QMap<QString, double>& overrides);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  // Exact text of a number (shortest form that reads back exactly): edit text and tool tips.
  static QString formatNumber(double v);
  // What a cell shows: 8 significant digits (formatNumber's exact text is the edit text).
  static QString displayNumber(double v);
  // Parses "1e-3", "0.5", " 2 " (C locale, then the system locale); nullopt when not a number.
  static std::optional<double> parseNumber(const QString& text);

 signals:
  // value nullopt: the edit was removed (back to the file's value).
  void overrideEdited(const QString& id, std::optional<double> value);

 private:
  bool isEditable(int row, int column) const;

  api::ModelTable table_;
  QMap<QString, double> overrides_;
};

}  // namespace sensode::gui
