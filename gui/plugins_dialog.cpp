// SPDX-License-Identifier: MIT
#include "gui/plugins_dialog.h"

#include <QBrush>
#include <QDialogButtonBox>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QPalette>
#include <QTableView>
#include <QVBoxLayout>

namespace sensode::gui {

PluginListModel::PluginListModel(const std::vector<PluginRecord>& records, bool onlyFailures,
                                 QObject* parent)
    : QAbstractTableModel(parent) {
  for (const PluginRecord& r : records) {
    if (onlyFailures ? !r.error.isEmpty() : r.loaded) records_.push_back(r);
  }
}

int PluginListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(records_.size());
}

int PluginListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant PluginListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const PluginRecord& r = record(index.row());
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case Name: return r.name;
      case Version: return r.version;
      case Status:
        if (!r.loaded) return tr("failed");
        return r.error.isEmpty() ? tr("loaded") : tr("loaded, with problems");
      case Detail:
        if (!r.error.isEmpty()) return r.error;
        return r.taskIds.isEmpty() ? tr("no tasks") : r.taskIds.join(QStringLiteral(", "));
      case File: return QDir::toNativeSeparators(r.file);
      default: return {};
    }
  }
  if (role == Qt::ForegroundRole && index.column() == Status && !r.error.isEmpty()) {
    return QBrush(r.loaded ? QColor(0x9a, 0x60, 0x00) : QColor(0xb0, 0x00, 0x20));
  }
  return {};
}

QVariant PluginListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  switch (section) {
    case Name: return tr("Plugin");
    case Version: return tr("Version");
    case Status: return tr("Status");
    case Detail: return tr("Tasks / reason");
    case File: return tr("File");
    default: return {};
  }
}

namespace {

QTableView* makeTable(QAbstractItemModel* model, QWidget* parent, const QString& name) {
  auto* view = new QTableView(parent);
  view->setObjectName(name);
  view->setModel(model);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setWordWrap(true);
  view->verticalHeader()->setVisible(false);
  view->horizontalHeader()->setStretchLastSection(true);
  view->resizeColumnsToContents();
  view->resizeRowsToContents();
  return view;
}

}  // namespace

PluginsDialog::PluginsDialog(const PluginLoader& loader, const QStringList& searchPaths,
                             QWidget* parent)
    : QDialog(parent) {
  setObjectName(QStringLiteral("pluginsDialog"));
  setWindowTitle(tr("Plugins"));
  loaded_ = new PluginListModel(loader.records(), false, this);
  failures_ = new PluginListModel(loader.records(), true, this);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(tr("<b>Loaded</b> (%1 tasks)").arg(loader.tasks().size()), this));
  layout->addWidget(makeTable(loaded_, this, QStringLiteral("loadedPlugins")), 1);
  layout->addWidget(new QLabel(
      failures_->rowCount() == 0 ? tr("<b>Failures</b>: none")
                                 : tr("<b>Failures</b> (%1)").arg(failures_->rowCount()),
      this));
  auto* failureView = makeTable(failures_, this, QStringLiteral("pluginFailures"));
  layout->addWidget(failureView, 1);

  QStringList shown;
  for (const QString& p : searchPaths) shown << QDir::toNativeSeparators(p);
  auto* paths = new QLabel(
      tr("Searched: %1. Add folders with the environment variable SENSODE_PLUGIN_PATH.")
          .arg(shown.isEmpty() ? tr("(no plugin folder exists)")
                               : shown.join(QStringLiteral(", "))),
      this);
  paths->setWordWrap(true);
  paths->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(paths);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  resize(860, 460);
}

}  // namespace sensode::gui
