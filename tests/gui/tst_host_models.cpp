// SPDX-License-Identifier: MIT
// The host's own table models under QAbstractItemModelTester: the model browser's table (with
// editable values), the plugin list of Help ▸ Plugins, and the SBML support table (and its TSV
// parser's messages).
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QtTest/QtTest>

#include "gui/model_table_model.h"
#include "gui/plugins_dialog.h"
#include "gui/sbml_support_dialog.h"

using namespace sensode;

class TestHostModels : public QObject {
  Q_OBJECT

 private slots:
  void modelTableModel() {
    gui::ModelTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(gui::ModelTableModel::kSortRole);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);

    api::ModelTable table;
    table.title = QStringLiteral("Parameters");
    table.headers = {QStringLiteral("Id"), QStringLiteral("Value")};
    table.valueColumn = 1;
    table.rows = {{{QStringLiteral("k1"), QStringLiteral("0.5")}, QStringLiteral("k1"), 0.5, {}},
                  {{QStringLiteral("k2"), QStringLiteral("(assignment rule)")}, {}, qQNaN(), {}},
                  {{QStringLiteral("k3"), QStringLiteral("10")}, QStringLiteral("k3"), 10, {}}};
    model.setTable(table);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), 2);
    QVERIFY(model.flags(model.index(0, 1)) & Qt::ItemIsEditable);
    QVERIFY(!(model.flags(model.index(1, 1)) & Qt::ItemIsEditable));  // set by a rule
    QVERIFY(!(model.flags(model.index(0, 0)) & Qt::ItemIsEditable));

    QSignalSpy edits(&model, &gui::ModelTableModel::overrideEdited);
    QVERIFY(model.setData(model.index(2, 1), QStringLiteral("1e-3")));
    QCOMPARE(edits.count(), 1);
    QCOMPARE(edits.first().at(0).toString(), QStringLiteral("k3"));
    QCOMPARE(model.data(model.index(2, 1)).toString(), QStringLiteral("0.001"));
    QVERIFY(!model.setData(model.index(2, 1), QStringLiteral("abc")));
    QVERIFY(!model.setData(model.index(2, 1), QStringLiteral("inf")));
    QVERIFY(!model.setData(model.index(1, 1), QStringLiteral("3")));
    QVERIFY(model.setData(model.index(2, 1), QStringLiteral("10")));  // the file's value: no edit
    QCOMPARE(edits.count(), 2);
    QVERIFY(!edits.last().at(1).value<std::optional<double>>().has_value());

    // Sorting by value sorts numbers as numbers.
    model.setData(model.index(2, 1), QStringLiteral("2"));
    proxy.sort(1, Qt::AscendingOrder);
    QStringList order;
    for (int r = 0; r < proxy.rowCount(); ++r) order << proxy.data(proxy.index(r, 0)).toString();
    QVERIFY2(order.indexOf(QStringLiteral("k1")) < order.indexOf(QStringLiteral("k3")),
             qPrintable(order.join(',')));  // 0.5 < 2, though "0.5" > "2" as text
    model.setOverrides({{QStringLiteral("k1"), 100.0}});
    QCOMPARE(model.data(model.index(0, 1)).toString(), QStringLiteral("100"));
    model.setTable({});
    QCOMPARE(model.rowCount(), 0);
  }

  void numberTexts() {
    QCOMPARE(gui::ModelTableModel::formatNumber(0.1), QStringLiteral("0.1"));
    QCOMPARE(gui::ModelTableModel::formatNumber(1e-300), QStringLiteral("1e-300"));
    QCOMPARE(*gui::ModelTableModel::parseNumber(QStringLiteral(" 2.5e3 ")), 2500.0);
    QVERIFY(!gui::ModelTableModel::parseNumber(QStringLiteral("two")));
  }

  void pluginListModel() {
    std::vector<gui::PluginRecord> records(3);
    records[0].name = QStringLiteral("Good");
    records[0].loaded = true;
    records[0].taskIds = {QStringLiteral("a"), QStringLiteral("b")};
    records[1].name = QStringLiteral("Bad");
    records[1].file = QStringLiteral("/x/libbad.so");
    records[1].error = QStringLiteral("not a plugin");
    records[2].name = QStringLiteral("Partly");
    records[2].loaded = true;
    records[2].error = QStringLiteral("refused: task 'a' is already provided by another plugin");
    gui::PluginListModel loaded(records, false);
    gui::PluginListModel failed(records, true);
    QAbstractItemModelTester t1(&loaded, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&failed, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(loaded.rowCount(), 2);
    QCOMPARE(failed.rowCount(), 2);
    QCOMPARE(loaded.data(loaded.index(0, gui::PluginListModel::Detail)).toString(), QStringLiteral("a, b"));
    QCOMPARE(failed.data(failed.index(0, gui::PluginListModel::Status)).toString(), QStringLiteral("failed"));
    QCOMPARE(failed.data(failed.index(1, gui::PluginListModel::Status)).toString(),
             QStringLiteral("loaded, with problems"));
  }

  void tagTable() {
    QString why;
    auto rows = gui::parseTagTable("tag\tpassed\tfailed\tskipped\nA\t1\t2\t3\n\nB\t0\t0\t5\n", &why);
    QVERIFY2(rows, qPrintable(why));
    QCOMPARE(rows->size(), 2);
    QCOMPARE(rows->at(1).skipped, 5);
    gui::TagCoverageModel model(*rows);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.data(model.index(0, gui::TagCoverageModel::Coverage)).toString(), QStringLiteral("17 %"));
    QVERIFY(!gui::parseTagTable("tag\tpassed\tfailed\tskipped\nA\t1\tx\t3\n", &why));
    QCOMPARE(why, QStringLiteral("line 2: counts are not integers"));
    QVERIFY(!gui::parseTagTable("", &why));
    QVERIFY(!gui::parseTagTable("case\tstatus\n", &why));
  }
};

QTEST_MAIN(TestHostModels)
#include "tst_host_models.moc"
