// SPDX-License-Identifier: MIT
#include "plugin/views/table_result_view.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

#include "plugin/models/number_format.h"
#include "plugin/views/table_text.h"

namespace sensode::plugin {

namespace {

QString cellText(const QAbstractItemModel* model, const QModelIndex& index) {
  const QVariant v = model->data(index, Qt::UserRole);
  if (v.typeId() == QMetaType::Double) return exactNumber(v.toDouble());
  if (v.isValid()) return v.toString();
  return model->data(index, Qt::DisplayRole).toString();
}

}  // namespace

TableResultView::TableResultView(QString title, QAbstractTableModel* model, Update update,
                                 QWidget* parent)
    : api::TaskResultView(parent), title_(std::move(title)), model_(model),
      update_(std::move(update)) {
  model_->setParent(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(Qt::UserRole);

  view_ = new QTableView(this);
  view_->setObjectName(QStringLiteral("resultTable"));
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(-1, Qt::AscendingOrder);  // the core's order until the user sorts
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  view_->setAlternatingRowColors(true);
  keepCellTextWhole(view_);
  view_->horizontalHeader()->setSectionsMovable(true);
  view_->horizontalHeader()->setDefaultSectionSize(110);
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
  view_->setContextMenuPolicy(Qt::ActionsContextMenu);

  auto* copy = new QAction(tr("Copy"), view_);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(copy, &QAction::triggered, this, &TableResultView::copySelection);
  auto* selectAll = new QAction(tr("Select all"), view_);
  selectAll->setShortcut(QKeySequence::SelectAll);
  selectAll->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(selectAll, &QAction::triggered, view_, &QTableView::selectAll);
  auto* unsort = new QAction(tr("Original order"), view_);
  connect(unsort, &QAction::triggered, this, [this] { view_->sortByColumn(-1, Qt::AscendingOrder); });
  view_->addActions({copy, selectAll, unsort});

  caption_ = new QLabel(tr("Run the task to fill the table."), this);
  caption_->setWordWrap(true);  // its one line would be the tab's minimum width
  caption_->setEnabled(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(view_, 1);
  layout->addWidget(caption_);
}

void TableResultView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  update_(result);
  // Small tables (gradients, diagnostics, comparisons) get columns as wide as their text, up to
  // a limit; long ones (time series) keep the fixed width, since measuring every row is slow.
  if (model_->rowCount() <= 200) {
    view_->resizeColumnsToContents();
    for (int c = 0; c < model_->columnCount(); ++c)
      view_->setColumnWidth(c, std::clamp(view_->columnWidth(c), 60, 520));
  }
  caption_->setText(tr("%1 rows x %2 columns. Click a header to sort; Ctrl+C copies the "
                       "selection with full precision.")
                        .arg(model_->rowCount())
                        .arg(model_->columnCount()));
}

QList<api::ExportFormat> TableResultView::exportFormats() const {
  return {{QStringLiteral("csv"), tr("%1 as CSV...").arg(title_), tr("CSV files (*.csv)"),
           QStringLiteral("csv")}};
}

QString TableResultView::toCsv() const {
  QString out;
  const int rows = model_->rowCount();
  const int columns = model_->columnCount();
  out.reserve(rows * columns * 12);
  for (int c = 0; c < columns; ++c) {
    if (c) out += QLatin1Char(',');
    out += csvField(model_->headerData(c, Qt::Horizontal).toString());
  }
  out += QLatin1Char('\n');
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < columns; ++c) {
      if (c) out += QLatin1Char(',');
      out += csvField(cellText(model_, model_->index(r, c)));
    }
    out += QLatin1Char('\n');
  }
  return out;
}

bool TableResultView::exportTo(const QString& formatId, const QString& path,
                               QString* errorString) const {
  if (formatId != QLatin1String("csv")) {
    if (errorString) *errorString = tr("unknown format '%1'").arg(formatId);
    return false;
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (errorString) *errorString = file.errorString();
    return false;
  }
  file.write(toCsv().toUtf8());
  if (!file.commit()) {
    if (errorString) *errorString = file.errorString();
    return false;
  }
  return true;
}

QString TableResultView::selectionAsText() const {
  const QModelIndexList selected = view_->selectionModel()->selectedIndexes();
  if (selected.isEmpty()) return {};
  // Rows and columns in the order the view shows them (visual columns after moves).
  std::set<int> rows;
  std::set<int> logicalColumns;
  for (const QModelIndex& i : selected) {
    rows.insert(i.row());
    logicalColumns.insert(i.column());
  }
  std::vector<int> columns(logicalColumns.begin(), logicalColumns.end());
  const QHeaderView* header = view_->horizontalHeader();
  std::sort(columns.begin(), columns.end(),
            [header](int a, int b) { return header->visualIndex(a) < header->visualIndex(b); });
  QString text;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    if (k) text += QLatin1Char('\t');
    text += proxy_->headerData(columns[k], Qt::Horizontal).toString();
  }
  text += QLatin1Char('\n');
  const QItemSelectionModel* selection = view_->selectionModel();
  for (int r : rows) {
    for (std::size_t k = 0; k < columns.size(); ++k) {
      if (k) text += QLatin1Char('\t');
      const QModelIndex index = proxy_->index(r, columns[k]);
      if (selection->isSelected(index)) text += cellText(proxy_, index);
    }
    text += QLatin1Char('\n');
  }
  return text;
}

void TableResultView::copySelection() const {
  const QString text = selectionAsText();
  if (!text.isEmpty()) QApplication::clipboard()->setText(text);
}

}  // namespace sensode::plugin
