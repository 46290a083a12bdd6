// SPDX-License-Identifier: MIT
// Help ▸ Plugins: what loaded (name, version, file, the tasks it added) and what failed and why
// (Qt Creator's plugin error view). Failures are listed first, in a table of their own, with the
// loader's reason in full.
#pragma once

#include <QAbstractTableModel>
#include <QDialog>

#include <vector>

#include "gui/plugin_loader.h"

namespace sensode::gui {

// Rows are plugin records; `onlyFailures` keeps those with an error.
class PluginListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Version, Status, Detail, File, ColumnCount };
  PluginListModel(const std::vector<PluginRecord>& records, bool onlyFailures,
                  QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  const PluginRecord& record(int row) const { return records_[static_cast<std::size_t>(row)]; }

 private:
  std::vector<PluginRecord> records_;
};

class PluginsDialog : public QDialog {
  Q_OBJECT

 public:
  PluginsDialog(const PluginLoader& loader, const QStringList& searchPaths,
                QWidget* parent = nullptr);
  PluginListModel* loadedModel() const { return loaded_; }
  PluginListModel* failureModel() const { return failures_; }

 private:
  PluginListModel* loaded_ = nullptr;
  PluginListModel* failures_ = nullptr;
};

}  // namespace sensode::gui
