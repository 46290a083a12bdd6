// SPDX-License-Identifier: MIT
#include "gui/model_browser.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QToolBox>
#include <QTableView>
#include <QVBoxLayout>

#include "gui/model_table_model.h"

namespace sensode::gui {

ModelBrowser::ModelBrowser(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("modelTitle"));
  title_->setWordWrap(true);
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("modelSummary"));
  summary_->setWordWrap(true);

  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter by id, name or formula"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, this, &ModelBrowser::applyFilter);

  // One page per section, titles stacked: every section stays visible however narrow the dock
  // is (a tab bar would scroll), and more sections fit later.
  sections_ = new QToolBox(this);
  sections_->setObjectName(QStringLiteral("modelSections"));

  reset_ = new QPushButton(tr("Reset edited values"), this);
  reset_->setObjectName(QStringLiteral("resetOverrides"));
  reset_->setToolTip(tr("Go back to the values in the model file"));
  reset_->setEnabled(false);
  connect(reset_, &QPushButton::clicked, this, [this] {
    setOverrides({});
    emit overridesChanged(overrides_);
  });

  auto* bottom = new QHBoxLayout;
  auto* hint = new QLabel(tr("Double-click a value to edit it."), this);
  hint->setEnabled(false);
  bottom->addWidget(hint, 1);
  bottom->addWidget(reset_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(title_);
  layout->addWidget(summary_);
  layout->addWidget(filter_);
  layout->addWidget(sections_, 1);
  layout->addLayout(bottom);
  clear();
}

void ModelBrowser::clear(const QString& message) {
  while (sections_->count() > 0) sections_->removeItem(0);
  qDeleteAll(views_);
  qDeleteAll(proxies_);
  qDeleteAll(models_);
  views_.clear();
  proxies_.clear();
  models_.clear();
  title_->setText(tr("No model"));
  summary_->setText(message.isEmpty() ? tr("Open an SBML model or a PEtab problem with File ▸ Open.") : message);
  filter_->setEnabled(false);
  overrides_.clear();
  updateResetButton();
}

void ModelBrowser::setOverview(const api::ModelOverview& overview) {
  clear();
  title_->setText(overview.title);
  summary_->setText(overview.summary);
  filter_->setEnabled(true);
  for (const api::ModelTable& table : overview.tables) {
    auto* model = new ModelTableModel(this);
    model->setTable(table);
    connect(model, &ModelTableModel::overrideEdited, this,
            [this](const QString& id, std::optional<double> value) {
              if (value) {
                overrides_.insert(id, *value);
              } else {
                overrides_.remove(id);
              }
              // The same id may show in more than one table.
              for (ModelTableModel* m : models_) m->setOverrides(overrides_);
              updateResetButton();
              emit overridesChanged(overrides_);
            });
    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(model);
    proxy->setSortRole(ModelTableModel::kSortRole);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy->setFilterKeyColumn(-1);
    auto* view = new QTableView;
    view->setObjectName(QStringLiteral("modelTable_") + table.title);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(-1, Qt::AscendingOrder);  // file order until the user sorts
    view->setAlternatingRowColors(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                          QAbstractItemView::AnyKeyPressed);
    view->verticalHeader()->setVisible(false);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setStretchLastSection(true);
    view->setWordWrap(false);
    view->setTextElideMode(Qt::ElideRight);
    // Columns no row fills (names, in models that give none) only take room.
    for (int c = 0; c < table.headers.size(); ++c) {
      bool empty = c != table.valueColumn;
      for (const api::ModelTable::Row& row : table.rows) {
        if (c < row.cells.size() && !row.cells[c].isEmpty()) empty = false;
      }
      view->setColumnHidden(c, empty && !table.rows.isEmpty());
    }
    view->resizeColumnsToContents();
    for (int c = 0; c < model->columnCount(); ++c) {
      if (view->columnWidth(c) > 220) view->setColumnWidth(c, 220);
    }
    sections_->addItem(view, QStringLiteral("%1 (%2)").arg(table.title).arg(table.rows.size()));
    models_ << model;
    proxies_ << proxy;
    views_ << view;
  }
  // Species first: initial values are what users look at and edit most.
  for (int i = 0; i < models_.size(); ++i) {
    if (models_[i]->table().title == QLatin1String("Species")) sections_->setCurrentIndex(i);
  }
  applyFilter(filter_->text());
  // The value (what users read and edit) right after the id, so the dock's width shows both;
  // names, compartments and flags follow and scroll. (After the filter: a proxy reset would
  // undo the move.)
  for (int i = 0; i < views_.size(); ++i) {
    const int value = models_[i]->table().valueColumn;
    QHeaderView* header = views_[i]->horizontalHeader();
    if (value > 1 && header->visualIndex(value) != 1) header->moveSection(header->visualIndex(value), 1);
  }
}

void ModelBrowser::setOverrides(const QMap<QString, double>& overrides) {
  overrides_ = overrides;
  for (ModelTableModel* m : models_) m->setOverrides(overrides_);
  updateResetButton();
}

void ModelBrowser::applyFilter(const QString& text) {
  for (int i = 0; i < proxies_.size(); ++i) {
    proxies_[i]->setFilterFixedString(text);
    const int all = models_[i]->rowCount();
    const int shown = proxies_[i]->rowCount();
    sections_->setItemText(i, shown == all ? QStringLiteral("%1 (%2)").arg(models_[i]->table().title).arg(all)
                                           : QStringLiteral("%1 (%2 of %3)")
                                                 .arg(models_[i]->table().title)
                                                 .arg(shown)
                                                 .arg(all));
  }
}

void ModelBrowser::updateResetButton() {
  reset_->setEnabled(!overrides_.isEmpty());
  reset_->setText(overrides_.isEmpty() ? tr("Reset edited values")
                                       : tr("Reset %n edited value(s)", "", int(overrides_.size())));
}

ModelTableModel* ModelBrowser::tableModel(const QString& title) const {
  for (ModelTableModel* m : models_) {
    if (m->table().title == title) return m;
  }
  return nullptr;
}

QTableView* ModelBrowser::tableView(const QString& title) const {
  for (int i = 0; i < models_.size(); ++i) {
    if (models_[i]->table().title == title) return views_[i];
  }
  return nullptr;
}

QStringList ModelBrowser::tableTitles() const {
  QStringList titles;
  for (ModelTableModel* m : models_) titles << m->table().title;
  return titles;
}

}  // namespace sensode::gui
