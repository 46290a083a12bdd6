// SPDX-License-Identifier: MIT
#include "plugin/views/key_value_view.h"

#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "plugin/views/table_text.h"

namespace sensode::plugin {

KeyValueView::KeyValueView(QString title, Extract extract, QWidget* parent)
    : api::TaskResultView(parent), title_(std::move(title)), extract_(std::move(extract)) {
  model_ = new KeyValueTableModel(this);
  view_ = new QTableView(this);
  view_->setObjectName(QStringLiteral("keyValueTable"));
  view_->setModel(model_);
  view_->verticalHeader()->setVisible(false);
  view_->horizontalHeader()->setVisible(false);
  // Labels in full; values take the rest and elide (their tool tip has the whole text), so a
  // long note cannot squeeze the labels to "Objec...".
  view_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  view_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 4);
  view_->setShowGrid(false);
  keepCellTextWhole(view_);
  view_->setAlternatingRowColors(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setMinimumHeight(6 * (view_->fontMetrics().height() + 4));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);
}

void KeyValueView::showResult(const std::shared_ptr<const api::TaskResult>& result) {
  model_->setEntries(extract_(result));
  // As tall as its rows: the column it sits in should not end in an empty box.
  const int rows = std::max(model_->rowCount(), 6);
  view_->setFixedHeight(rows * view_->verticalHeader()->defaultSectionSize() +
                        2 * view_->frameWidth() + 2);
}

}  // namespace sensode::plugin
