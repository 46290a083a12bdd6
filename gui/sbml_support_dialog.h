// SPDX-License-Identifier: MIT
// Help ▸ SBML support: the per-tag coverage of the SBML Test Suite as the test-suite runner
// measured it. The table is a TSV with header `tag passed failed skipped`, written by
//   sensode test-suite CASES_DIR --tags FILE.tsv
// and shipped as resources/sbml_support_tags.tsv, embedded with gui/gui.qrc (regenerate it with
// the CLI whenever the importer or the integrators change what they support).
#pragma once

#include <QAbstractTableModel>
#include <QDialog>

#include <optional>

namespace sensode::gui {

struct TagCoverage {
  QString tag;
  int passed = 0, failed = 0, skipped = 0;
  int total() const { return passed + failed + skipped; }
};

// Parses the TSV; nullopt with a message naming the line on malformed input.
std::optional<QList<TagCoverage>> parseTagTable(const QByteArray& tsv, QString* errorString);

class TagCoverageModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Tag, Passed, Failed, Skipped, Coverage, ColumnCount };
  static constexpr int kSortRole = Qt::UserRole;

  explicit TagCoverageModel(QList<TagCoverage> rows, QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QList<TagCoverage> rows_;
};

class SbmlSupportDialog : public QDialog {
  Q_OBJECT

 public:
  // Reads `resource` (":/sensode/sbml_support_tags.tsv" by default).
  explicit SbmlSupportDialog(QWidget* parent = nullptr,
                             const QString& resource = QStringLiteral(":/sensode/sbml_support_tags.tsv"));
  TagCoverageModel* model() const { return model_; }
  QString errorString() const { return error_; }

 private:
  TagCoverageModel* model_ = nullptr;
  QString error_;
};

}  // namespace sensode::gui
