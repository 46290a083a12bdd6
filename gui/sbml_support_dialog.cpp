// SPDX-License-Identifier: MIT
#include "gui/sbml_support_dialog.h"

#include <QBrush>
#include <QDialogButtonBox>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace sensode::gui {

std::optional<QList<TagCoverage>> parseTagTable(const QByteArray& tsv, QString* errorString) {
  const auto fail = [errorString](const QString& message) {
    if (errorString) *errorString = message;
    return std::nullopt;
  };
  QList<TagCoverage> rows;
  const QList<QByteArray> lines = tsv.split('\n');
  int lineNumber = 0;
  bool header = true;
  for (QByteArray line : lines) {
    ++lineNumber;
    line = line.trimmed();
    if (line.isEmpty()) continue;
    const QList<QByteArray> fields = line.split('\t');
    if (header) {
      header = false;
      if (fields.size() < 4 || fields[0] != "tag") {
        return fail(QStringLiteral("line 1: expected the header 'tag passed failed skipped'"));
      }
      continue;
    }
    if (fields.size() < 4) {
      return fail(QStringLiteral("line %1: expected 4 tab-separated fields").arg(lineNumber));
    }
    TagCoverage row;
    row.tag = QString::fromUtf8(fields[0]);
    bool ok1 = false, ok2 = false, ok3 = false;
    row.passed = fields[1].toInt(&ok1);
    row.failed = fields[2].toInt(&ok2);
    row.skipped = fields[3].toInt(&ok3);
    if (!ok1 || !ok2 || !ok3) {
      return fail(QStringLiteral("line %1: counts are not integers").arg(lineNumber));
    }
    rows << row;
  }
  if (header) return fail(QStringLiteral("the table is empty"));
  return rows;
}

TagCoverageModel::TagCoverageModel(QList<TagCoverage> rows, QObject* parent)
    : QAbstractTableModel(parent), rows_(std::move(rows)) {}

int TagCoverageModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TagCoverageModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant TagCoverageModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const TagCoverage& r = rows_[index.row()];
  const double coverage = r.total() > 0 ? 100.0 * r.passed / r.total() : 0.0;
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Tag: return r.tag;
        case Passed: return r.passed;
        case Failed: return r.failed;
        case Skipped: return r.skipped;
        case Coverage: return QStringLiteral("%1 %").arg(coverage, 0, 'f', 0);
        default: return {};
      }
    case kSortRole:
      switch (index.column()) {
        case Tag: return r.tag;
        case Passed: return r.passed;
        case Failed: return r.failed;
        case Skipped: return r.skipped;
        case Coverage: return coverage;
        default: return {};
      }
    case Qt::TextAlignmentRole:
      if (index.column() != Tag) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Qt::ForegroundRole:
      if (index.column() == Coverage && r.passed == 0) return QBrush(QColor(0x90, 0x90, 0x90));
      if (index.column() == Failed && r.failed > 0) return QBrush(QColor(0xb0, 0x00, 0x20));
      return {};
    default:
      return {};
  }
}

QVariant TagCoverageModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  switch (section) {
    case Tag: return tr("Tag");
    case Passed: return tr("Passed");
    case Failed: return tr("Failed");
    case Skipped: return tr("Skipped (unsupported)");
    case Coverage: return tr("Passed of all");
    default: return {};
  }
}

SbmlSupportDialog::SbmlSupportDialog(QWidget* parent, const QString& resource) : QDialog(parent) {
  setObjectName(QStringLiteral("sbmlSupportDialog"));
  setWindowTitle(tr("SBML support"));
  QList<TagCoverage> rows;
  QFile file(resource);
  if (!file.open(QIODevice::ReadOnly)) {
    error_ = tr("%1: %2").arg(resource, file.errorString());
  } else if (auto parsed = parseTagTable(file.readAll(), &error_)) {
    rows = *parsed;
  } else {
    error_ = tr("%1: %2").arg(resource, error_);
  }
  model_ = new TagCoverageModel(rows, this);

  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(
      tr("SBML Test Suite results per component and test tag, as measured by "
         "<tt>sensode test-suite CASES --tags FILE.tsv</tt>. A case is skipped only when it uses "
         "a feature Sensode declares unsupported (events, delays, algebraic rules, fast "
         "reactions, fbc)."),
      this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  if (!error_.isEmpty()) {
    auto* err = new QLabel(tr("Could not read the table: %1").arg(error_), this);
    err->setObjectName(QStringLiteral("sbmlSupportError"));
    err->setWordWrap(true);
    layout->addWidget(err);
  }

  auto* proxy = new QSortFilterProxyModel(this);
  proxy->setSourceModel(model_);
  proxy->setSortRole(TagCoverageModel::kSortRole);
  auto* view = new QTableView(this);
  view->setObjectName(QStringLiteral("sbmlSupportTable"));
  view->setModel(proxy);
  view->setSortingEnabled(true);
  view->sortByColumn(TagCoverageModel::Tag, Qt::AscendingOrder);
  view->verticalHeader()->setVisible(false);
  view->setAlternatingRowColors(true);
  view->horizontalHeader()->setStretchLastSection(true);
  view->resizeColumnsToContents();
  layout->addWidget(view, 1);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  resize(640, 620);
}

}  // namespace sensode::gui
