// SPDX-License-Identifier: MIT
#include "plugin/estimation/setup_widget.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <exception>
#include <optional>

#include "core/petab/petab_problem.h"
#include "plugin/estimation/estimation_task.h"
#include "plugin/forms/options_form.h"
#include "plugin/models/number_format.h"
#include "plugin/views/table_text.h"

namespace sensode::plugin::estimation {

namespace {


// The PEtab table's value of a cell, kept in Qt::UserRole when the row is filled.
double tableValue(const QTableWidgetItem* item) { return item->data(Qt::UserRole).toDouble(); }

const char* columnKey(int column) {
  switch (column) {
    case SetupWidget::Lower: return "lower";
    case SetupWidget::Upper: return "upper";
    case SetupWidget::Start: return "start";
    default: return "";
  }
}

}  // namespace

SetupWidget::SetupWidget(QWidget* parent) : api::TaskSetupWidget(parent) {
  problem_ = new QLineEdit(this);
  problem_->setObjectName(QStringLiteral("problemFile"));
  problem_->setPlaceholderText(tr("the open PEtab problem"));
  // Never narrower than the placeholder: an empty-looking field hides which problem runs.
  problem_->setMinimumWidth(problem_->fontMetrics().horizontalAdvance(problem_->placeholderText()) + 16);
  auto* browse = new QPushButton(tr("Browse..."), this);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString file = QFileDialog::getOpenFileName(
        this, tr("PEtab problem"), QFileInfo(effectivePath()).absolutePath(),
        tr("PEtab problems (*.yaml *.yml)"));
    if (!file.isEmpty()) {
      problem_->setText(file);
      loadTable(effectivePath());
    }
  });
  connect(problem_, &QLineEdit::editingFinished, this, [this] { loadTable(effectivePath()); });
  form_ = new OptionsForm(fields(), this);
  form_->setObjectName(QStringLiteral("options"));

  table_ = new QTableWidget(0, ColumnCount, this);
  table_->setObjectName(QStringLiteral("estimatedParameters"));
  table_->setHorizontalHeaderLabels({tr("Fit"), tr("Profile"), tr("Parameter"), tr("Scale"),
                                     tr("Lower"), tr("Upper"), tr("Start")});
  table_->horizontalHeaderItem(Estimate)->setToolTip(
      tr("Checked: estimated. Unchecked: held at its start value in this fit."));
  table_->horizontalHeaderItem(Lower)->setToolTip(tr("Lower bound (linear scale)"));
  table_->horizontalHeaderItem(Upper)->setToolTip(tr("Upper bound (linear scale)"));
  table_->horizontalHeaderItem(Start)->setToolTip(
      tr("Start value of the first start (linear scale); the PEtab nominal value by default"));
  table_->horizontalHeaderItem(Profile)->setToolTip(
      tr("Compute the likelihood profile of this parameter after the fit"));
  table_->verticalHeader()->hide();
  // Columns as wide as their text (a stretched last column squeezed the start values); the
  // table scrolls sideways when the panel is narrower.
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  keepCellTextWhole(table_);
  table_->setMinimumHeight(180);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  auto* reset = new QPushButton(tr("PEtab table values"), this);
  reset->setObjectName(QStringLiteral("tableValues"));
  reset->setToolTip(tr("Every row back to the PEtab parameter table; no profiles"));
  connect(reset, &QPushButton::clicked, this, [this] { applyChoices({}, {}); });
  auto* defaults = new QPushButton(tr("Restore defaults"), this);
  connect(defaults, &QPushButton::clicked, this, [this] {
    form_->resetToDefaults();
    applyChoices({}, {});
  });

  auto* fileRow = new QHBoxLayout;
  fileRow->addWidget(new QLabel(tr("PEtab problem"), this));
  fileRow->addWidget(problem_, 1);
  fileRow->addWidget(browse);
  auto* noteRow = new QHBoxLayout;
  noteRow->addWidget(note_, 1);
  noteRow->addWidget(reset);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(defaults);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(fileRow);
  layout->addWidget(form_);
  auto* tableTitle =
      new QLabel(tr("Parameters (bounds and start values on the linear scale)"), this);
  tableTitle->setWordWrap(true);  // one line would set the settings column's minimum width
  layout->addWidget(tableTitle);
  layout->addWidget(table_, 1);
  layout->addLayout(noteRow);
  layout->addLayout(buttons);
}

QString SetupWidget::effectivePath() const {
  const QString chosen = problem_->text().trimmed();
  return chosen.isEmpty() ? sessionPath_ : chosen;
}

void SetupWidget::loadTable(const QString& path) {
  if (path == loadedPath_) return;
  const QJsonObject keepChoices = parameterChoices();
  const QStringList keepProfile = profiled();
  const bool hadRows = table_->rowCount() > 0;
  loadedPath_ = path;
  table_->setRowCount(0);
  note_->clear();
  if (path.isEmpty()) return;
  try {
    const petab::Problem problem = petab::loadProblem(QFile::encodeName(path).toStdString());
    const auto fixed = [](const QString& text) {
      auto* item = new QTableWidgetItem(text);
      item->setFlags(item->flags() & ~Qt::ItemIsEditable);
      return item;
    };
    const auto check = [](const QString& toolTip) {
      auto* item = new QTableWidgetItem;
      item->setFlags((item->flags() | Qt::ItemIsUserCheckable) & ~Qt::ItemIsEditable);
      item->setToolTip(toolTip);
      return item;
    };
    for (const petab::Parameter& p : problem.parameters) {
      if (!p.estimate) continue;
      const int r = table_->rowCount();
      table_->insertRow(r);
      table_->setItem(r, Estimate, check(tr("Fit %1").arg(QString::fromStdString(p.id))));
      table_->setItem(r, Id, fixed(QString::fromStdString(p.id)));
      table_->item(r, Id)->setToolTip(QString::fromStdString(p.name));
      table_->setItem(r, Scale, fixed(QString::fromLatin1(petab::toString(p.scale))));
      const double values[] = {p.lowerBound, p.upperBound, p.nominalValue};
      const int columns[] = {Lower, Upper, Start};
      for (int k = 0; k < 3; ++k) {
        auto* item = new QTableWidgetItem;
        item->setData(Qt::UserRole, values[k]);
        showNumberInCell(item, values[k]);
        table_->setItem(r, columns[k], item);
      }
      table_->setItem(r, Profile,
                      check(tr("Profile likelihood of %1").arg(QString::fromStdString(p.id))));
    }
    note_->setText(tr("%n estimated parameter(s) in the PEtab table", "", table_->rowCount()));
  } catch (const std::exception& e) {
    note_->setText(QString::fromStdString(e.what()));
  }
  // Restored settings wait for their table; a changed problem keeps what carries over.
  if (pending_) applyChoices(pendingChoices_, pendingProfile_);
  else if (hadRows) applyChoices(keepChoices, keepProfile);
  else applyChoices({}, {});
}

void SetupWidget::applyChoices(const QJsonObject& choices, const QStringList& profile) {
  if (table_->rowCount() == 0) {
    pending_ = true;
    pendingChoices_ = choices;
    pendingProfile_ = profile;
    return;
  }
  pending_ = false;
  for (int r = 0; r < table_->rowCount(); ++r) {
    const QString id = table_->item(r, Id)->text();
    const QJsonObject c = choices.value(id).toObject();
    table_->item(r, Estimate)->setCheckState(
        c.value(QStringLiteral("estimate")).toBool(true) ? Qt::Checked : Qt::Unchecked);
    for (int column : {Lower, Upper, Start}) {
      QTableWidgetItem* item = table_->item(r, column);
      const QJsonValue v = c.value(QLatin1String(columnKey(column)));
      showNumberInCell(item, v.isDouble() ? v.toDouble() : tableValue(item));
    }
    table_->item(r, Profile)->setCheckState(profile.contains(id) ? Qt::Checked : Qt::Unchecked);
  }
}

QJsonObject SetupWidget::parameterChoices() const {
  if (table_->rowCount() == 0) return pending_ ? pendingChoices_ : QJsonObject{};
  QJsonObject all;
  for (int r = 0; r < table_->rowCount(); ++r) {
    QJsonObject c;
    if (table_->item(r, Estimate)->checkState() != Qt::Checked)
      c.insert(QStringLiteral("estimate"), false);
    for (int column : {Lower, Upper, Start}) {
      const QTableWidgetItem* item = table_->item(r, column);
      const auto v = numberInCell(item);
      if (v && *v != tableValue(item)) c.insert(QLatin1String(columnKey(column)), *v);
    }
    if (!c.isEmpty()) all.insert(table_->item(r, Id)->text(), c);
  }
  return all;
}

QStringList SetupWidget::profiled() const {
  if (table_->rowCount() == 0) return pending_ ? pendingProfile_ : QStringList{};
  QStringList ids;
  for (int r = 0; r < table_->rowCount(); ++r)
    if (table_->item(r, Profile)->checkState() == Qt::Checked) ids << table_->item(r, Id)->text();
  return ids;
}

QJsonObject SetupWidget::settings() const {
  QJsonObject o = form_->values();
  o.insert(QStringLiteral("problem"), problem_->text().trimmed());
  o.insert(QStringLiteral("parameters"), parameterChoices());
  o.insert(QStringLiteral("profile"), QJsonArray::fromStringList(profiled()));
  return o;
}

void SetupWidget::setSettings(const QJsonObject& settings) {
  form_->setValues(settings);
  if (settings.contains(QStringLiteral("problem")))
    problem_->setText(settings.value(QStringLiteral("problem")).toString());
  const bool choices = settings.contains(QStringLiteral("parameters"));
  const bool profile = settings.contains(QStringLiteral("profile"));
  if (choices || profile) {
    QStringList ids;
    for (const QJsonValue& v : settings.value(QStringLiteral("profile")).toArray())
      ids << v.toString();
    const QJsonObject c = choices ? settings.value(QStringLiteral("parameters")).toObject()
                                  : parameterChoices();
    applyChoices(c, profile ? ids : profiled());
  }
  loadTable(effectivePath());
}

void SetupWidget::setSession(const api::ModelSession& session) {
  sessionPath_ = session.format == QLatin1String("petab") ? session.filePath : QString();
  loadTable(effectivePath());
}

QString SetupWidget::validate() const {
  if (effectivePath().isEmpty())
    return tr("PEtab problem: open a PEtab problem (.yaml) or choose one here");
  if (const QString form = form_->validate(); !form.isEmpty()) return form;
  int fitted = 0;
  for (int r = 0; r < table_->rowCount(); ++r) {
    const QString id = table_->item(r, Id)->text();
    const bool logScale = table_->item(r, Scale)->text() != QLatin1String("lin");
    std::optional<double> v[3];
    const int columns[] = {Lower, Upper, Start};
    for (int k = 0; k < 3; ++k) {
      v[k] = numberInCell(table_->item(r, columns[k]));
      if (!v[k])
        return tr("Parameter %1: %2 '%3' is not a number")
            .arg(id, table_->horizontalHeaderItem(columns[k])->text().toLower(),
                 table_->item(r, columns[k])->text());
      if (logScale && !(*v[k] > 0))
        return tr("Parameter %1: %2 = %3 must be > 0 on scale %4")
            .arg(id, table_->horizontalHeaderItem(columns[k])->text().toLower(),
                 table_->item(r, columns[k])->text(), table_->item(r, Scale)->text());
    }
    if (!(*v[0] < *v[1])) return tr("Parameter %1: the lower bound must be below the upper").arg(id);
    if (*v[2] < *v[0] || *v[2] > *v[1])
      return tr("Parameter %1: start value %2 is outside the bounds").arg(id, shortNumber(*v[2]));
    const bool fit = table_->item(r, Estimate)->checkState() == Qt::Checked;
    fitted += fit ? 1 : 0;
    if (!fit && table_->item(r, Profile)->checkState() == Qt::Checked)
      return tr("Parameter %1: only a fitted parameter can be profiled").arg(id);
  }
  if (table_->rowCount() > 0 && fitted == 0) return tr("Parameters: check at least one to fit");
  return {};
}

}  // namespace sensode::plugin::estimation
