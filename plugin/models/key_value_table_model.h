// SPDX-License-Identifier: MIT
// A two-column read-only table of labelled values (integrator statistics, run facts). Each task
// fills it from its core Stats struct; the view is the same for all of them.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QVariant>

namespace sensode::plugin {

class KeyValueTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  struct Entry {
    QString key;      // "steps"
    QString label;    // "Steps"
    QVariant value;   // number or text
    QString toolTip;  // what it counts
  };
  static constexpr int kValueRole = Qt::UserRole;

  explicit KeyValueTableModel(QObject* parent = nullptr);
  void setEntries(QList<Entry> entries);
  const QList<Entry>& entries() const { return entries_; }
  QVariant value(const QString& key) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QList<Entry> entries_;
};

}  // namespace sensode::plugin
