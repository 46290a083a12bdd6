// SPDX-License-Identifier: MIT
// The model browser: one sortable, filterable table per section of the open model
// (compartments, species with initial values, parameters, reactions with their rate laws,
// rules), with editable values the tasks use.
//
// Where the content comes from: the host asks a loaded plugin to read the model
// (TaskPlugin::readModel → api::ModelOverview) instead of linking core/model itself. That keeps
// the arrow gui → core out of the build (the host stays free of libSBML and of every core
// header), shows exactly what the tasks will compute with — the same importer, the same ODE
// parameter ids for the editable values, so an edit the browser accepts is an override id the
// core knows — and lets a PEtab plugin describe its problems the same way later. The cost is
// that without a model-reading plugin the browser stays empty; the file still opens.
#pragma once

#include <QMap>
#include <QWidget>

#include <optional>

#include "gui/plugin_api/task_plugin.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QToolBox;
class QTableView;

namespace sensode::gui {

class ModelTableModel;

class ModelBrowser : public QWidget {
  Q_OBJECT

 public:
  explicit ModelBrowser(QWidget* parent = nullptr);

  void setOverview(const api::ModelOverview& overview);
  void clear(const QString& message = {});
  void setOverrides(const QMap<QString, double>& overrides);
  const QMap<QString, double>& overrides() const { return overrides_; }

  // For tests and scripting: the table titled `title` ("Parameters"), or nullptr.
  ModelTableModel* tableModel(const QString& title) const;
  QTableView* tableView(const QString& title) const;
  QStringList tableTitles() const;

 signals:
  void overridesChanged(const QMap<QString, double>& overrides);

 private:
  void applyFilter(const QString& text);
  void updateResetButton();

  QLabel* title_ = nullptr;
  QLabel* summary_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QToolBox* sections_ = nullptr;
  QPushButton* reset_ = nullptr;
  QList<ModelTableModel*> models_;
  QList<QSortFilterProxyModel*> proxies_;
  QList<QTableView*> views_;
  QMap<QString, double> overrides_;
};

}  // namespace sensode::gui
