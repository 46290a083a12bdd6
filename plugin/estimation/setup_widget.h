// SPDX-License-Identifier: MIT
// The set-up form of the Parameter estimation task: the PEtab problem (the open one or chosen
// here), the options (optimiser, starts, seed, gradient, iterations, threads, tolerances, from
// fields()) and the table of the problem's estimated parameters read from its PEtab parameter
// table — per row: fit it or hold it at its start value (checkbox), scale, bounds and start
// value (linear, editable; the PEtab nominal value by default, in its tool tip), and whether to
// profile it (checkbox).
//
// Only what differs from the PEtab table goes into the settings (`parameters`), so a changed
// problem file keeps its own bounds and values; `profile` lists the checked ids.
#pragma once

#include <QJsonObject>

#include "gui/plugin_api/task_plugin.h"

class QLabel;
class QLineEdit;
class QTableWidget;

namespace sensode::plugin {
class OptionsForm;
}

namespace sensode::plugin::estimation {

class SetupWidget : public api::TaskSetupWidget {
 public:
  // Columns of parameterTable().
  // The two checkboxes first: long parameter ids must not push them out of sight.
  enum Column { Estimate, Profile, Id, Scale, Lower, Upper, Start, ColumnCount };

  explicit SetupWidget(QWidget* parent);

  QJsonObject settings() const override;
  void setSettings(const QJsonObject& settings) override;
  void setSession(const api::ModelSession& session) override;
  QString validate() const override;

  QTableWidget* parameterTable() const { return table_; }
  OptionsForm* form() const { return form_; }

 private:
  QString effectivePath() const;
  void loadTable(const QString& path);
  // The table's rows as settings: differences from the PEtab table, checked profiles.
  QJsonObject parameterChoices() const;
  QStringList profiled() const;
  // Puts choices and profiles into the rows (pending until a table is loaded).
  void applyChoices(const QJsonObject& choices, const QStringList& profile);

  QLineEdit* problem_ = nullptr;
  OptionsForm* form_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* note_ = nullptr;
  QString sessionPath_, loadedPath_;
  QJsonObject pendingChoices_;
  QStringList pendingProfile_;
  bool pending_ = false;
};

}  // namespace sensode::plugin::estimation
