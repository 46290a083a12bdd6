// SPDX-License-Identifier: MIT
// The plugin's table models under QAbstractItemModelTester (empty, filled, reset while
// attached, behind a sorting proxy), their roles (exact value, display text, headers), and the
// table view's copy and CSV text.
#include <QAbstractItemModelTester>
#include <QCategoryAxis>
#include <QStyle>
#include <QJsonArray>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest/QtTest>

#include <memory>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/time_course_task.h"
#include "plugin/common/provenance.h"
#include "plugin/models/key_value_table_model.h"
#include "plugin/models/number_format.h"
#include "plugin/models/sensitivity_table_model.h"
#include "plugin/models/time_series_table_model.h"
#include "plugin/views/axis_range.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/table_text.h"
#include "plugin/views/time_series_chart_view.h"

using namespace sensode;
using sensode::plugin::KeyValueTableModel;
using sensode::plugin::TimeSeriesTableModel;
using sensode::plugin::fallbackNote;
using sensode::plugin::statsEntries;
using sensode::plugin::statsJson;

namespace {

std::shared_ptr<const tasks::TimeCourseResult> repressilatorSeries(int points) {
  const auto m = model::importSbmlFile(SENSODE_RESOURCES_DIR "/models/repressilator.xml");
  tasks::TimeCourseProblem problem;
  problem.model = std::make_shared<symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
  for (int i = 0; i < points; ++i) problem.times.push_back(20.0 * i / (points - 1));
  auto r = std::make_shared<tasks::TimeCourseResult>(tasks::runTimeCourse(problem, {}));
  if (r->termination != tasks::Termination::Success) qFatal("%s", r->message.c_str());
  return r;
}

// A small hand-made series with a column id that needs CSV quoting.
std::shared_ptr<const tasks::TimeCourseResult> tinySeries() {
  auto r = std::make_shared<tasks::TimeCourseResult>();
  r->times = {0, 0.5, 1};
  r->columns = {"A", "odd,id"};
  r->values = {1, -2, 0.1, 0.25, std::numeric_limits<double>::quiet_NaN(), 4};
  return r;
}

}  // namespace

class TestTableModels : public QObject {
  Q_OBJECT

 private slots:
  void timeSeriesModelPassesTester() {
    TimeSeriesTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), 0);
    model.setSeries(repressilatorSeries(51));
    QCOMPARE(model.rowCount(), 51);
    QCOMPARE(model.columnCount(), 7);  // time + 6 species
    model.setSeries(tinySeries());    // reset while the tester watches
    QCOMPARE(model.rowCount(), 3);
    model.setSeries(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void timeSeriesRolesAreExact() {
    TimeSeriesTableModel model;
    const auto series = repressilatorSeries(11);
    model.setSeries(series);
    QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("time"));
    for (std::size_t j = 0; j < series->columns.size(); ++j) {
      QCOMPARE(model.headerData(int(j) + 1, Qt::Horizontal).toString(),
               QString::fromStdString(series->columns[j]));
    }
    for (int r = 0; r < model.rowCount(); ++r) {
      QVERIFY(model.data(model.index(r, 0), TimeSeriesTableModel::kValueRole).toDouble() ==
              series->times[std::size_t(r)]);
      for (int c = 1; c < model.columnCount(); ++c) {
        // The model hands out the core's doubles bit for bit.
        QVERIFY(model.data(model.index(r, c), TimeSeriesTableModel::kValueRole).toDouble() ==
                series->at(std::size_t(r), std::size_t(c - 1)));
      }
    }
    QCOMPARE(model.flags(model.index(0, 0)) & Qt::ItemIsEditable, Qt::ItemFlags());
    QCOMPARE(model.headerData(0, Qt::Vertical).toInt(), 1);
  }

  void proxySortingPassesTester() {
    TimeSeriesTableModel model;
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(TimeSeriesTableModel::kValueRole);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto series = repressilatorSeries(101);
    model.setSeries(series);
    proxy.sort(4, Qt::DescendingOrder);  // p1
    double maxP1 = -1;
    for (std::size_t i = 0; i < series->times.size(); ++i) maxP1 = std::max(maxP1, series->at(i, 3));
    QVERIFY(proxy.data(proxy.index(0, 4), TimeSeriesTableModel::kValueRole).toDouble() == maxP1);
    model.setSeries(tinySeries());
    QCOMPARE(proxy.rowCount(), 3);
  }

  void keyValueModelPassesTester() {
    KeyValueTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setEntries({{QStringLiteral("steps"), QStringLiteral("Steps"), qlonglong(1234), {}},
                      {QStringLiteral("method"), QStringLiteral("Method"), QStringLiteral("cvodes"),
                       QStringLiteral("integrator")},
                      {QStringLiteral("wall"), QStringLiteral("Wall time"), 0.012345, {}}});
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), 2);
    QCOMPARE(model.data(model.index(0, 1)).toString(), QStringLiteral("1234"));
    QCOMPARE(model.data(model.index(2, 1)).toString(), QStringLiteral("0.01235"));
    QCOMPARE(model.value(QStringLiteral("method")).toString(), QStringLiteral("cvodes"));
    QCOMPARE(model.data(model.index(1, 0), Qt::ToolTipRole).toString(), QStringLiteral("integrator"));
    model.setEntries({});
    QCOMPARE(model.rowCount(), 0);
  }

  // What a fallback looks like in the Statistics table, the status line and the provenance's
  // statistics (the CLI's --stats key "fallbacks").
  void fallbacksInStatisticsAndStatusLine() {
    integrators::IntegratorStats stats;
    stats.steps = 12;
    QVERIFY(fallbackNote(stats.fallbacks).isEmpty());
    for (const KeyValueTableModel::Entry& e : statsEntries(stats)) QVERIFY(!e.key.startsWith("fallback"));
    QCOMPARE(statsJson(stats).value("fallbacks").toArray().size(), 0);
    stats.fallbacks = {"odeSD handed t in [0, 0.3] to CVODES: the second derivative is not finite at t = 0",
                       "second sentence"};
    QList<KeyValueTableModel::Entry> rows;
    for (const KeyValueTableModel::Entry& e : statsEntries(stats))
      if (e.label == QLatin1String("Fallback")) rows << e;
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows[0].key, QStringLiteral("fallback_1"));
    QCOMPARE(rows[0].value.toString(), QString::fromStdString(stats.fallbacks[0]));
    QCOMPARE(rows[1].toolTip, QStringLiteral("second sentence"));
    QCOMPARE(fallbackNote(stats.fallbacks),
             QStringLiteral(" — fell back: ") + QString::fromStdString(stats.fallbacks[0]) +
                 QStringLiteral("; second sentence"));
    const QJsonArray json = statsJson(stats).value("fallbacks").toArray();
    QCOMPARE(json.size(), 2);
    QCOMPARE(json[1].toString(), QStringLiteral("second sentence"));
  }

  void sensitivityModelIsTheClisLongFormat() {
    auto r = std::make_shared<tasks::SensitivityResult>();
    r->times = {0, 1};
    r->outputIds = {"A", "B"};
    r->parameterIds = {"k1", "k2", "k3"};
    for (int i = 0; i < 12; ++i) r->values.push_back(0.5 * i);
    auto* model = new plugin::SensitivityTableModel;
    plugin::TableResultView view(QStringLiteral("Table"), model, [](const auto&) {});
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model->setResult(r);
    QCOMPARE(model->rowCount(), 12);
    QCOMPARE(model->columnCount(), 4);
    const QStringList lines = view.toCsv().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13);
    QCOMPARE(lines[0], QStringLiteral("time,variable,parameter,value"));
    QCOMPARE(lines[1], QStringLiteral("0,A,k1,0"));
    QCOMPARE(lines[6], QStringLiteral("0,B,k3,2.5"));  // times outermost, then outputs, parameters
    QCOMPARE(lines[12], QStringLiteral("1,B,k3,5.5"));
    for (int row = 0; row < 12; ++row) {
      QVERIFY(model->data(model->index(row, 3), Qt::UserRole).toDouble() == r->values[std::size_t(row)]);
    }
    model->setResult(nullptr);
    QCOMPARE(model->rowCount(), 0);
  }

  void csvAndCopyTextUseExactNumbers() {
    auto* model = new TimeSeriesTableModel;
    plugin::TableResultView view(QStringLiteral("Table"), model, [](const auto&) {});
    model->setSeries(tinySeries());
    QCOMPARE(view.toCsv(),
             QStringLiteral("time,A,\"odd,id\"\n"
                            "0,1,-2\n"
                            "0.5,0.10000000000000001,0.25\n"
                            "1,NaN,4\n"));
    view.tableView()->selectionModel()->select(
        QItemSelection(view.proxyModel()->index(1, 0), view.proxyModel()->index(2, 1)),
        QItemSelectionModel::Select);
    QCOMPARE(view.selectionAsText(),
             QStringLiteral("time\tA\n0.5\t0.10000000000000001\n1\tNaN\n"));
    // Sorted views copy in the order they show.
    view.tableView()->sortByColumn(0, Qt::DescendingOrder);
    QCOMPARE(view.selectionAsText().section(QLatin1Char('\n'), 1, 1), QStringLiteral("1\tNaN"));
    QCOMPARE(plugin::exactNumber(1.0 / 3.0), QStringLiteral("0.33333333333333331"));
  }

  // The display rule (docs/number-display.md): 8 significant digits with the exponent, no float
  // noise, no "-0"; an editable cell stands for its exact value until the user types.
  void shownNumbersKeepExponentsAndDropNoise() {
    QCOMPARE(plugin::shortNumber(1.0000122e-05), QStringLiteral("1.0000122e-05"));
    QCOMPARE(plugin::shortNumber(1.0000122099e-05), QStringLiteral("1.0000122e-05"));
    QCOMPARE(plugin::shortNumber(99999.9999999908), QStringLiteral("100000"));
    QCOMPARE(plugin::shortNumber(2.0000000000000002e-07), QStringLiteral("2e-07"));
    QCOMPARE(plugin::shortNumber(-0.0), QStringLiteral("0"));
    QCOMPARE(plugin::shortNumber(-5.55112e-17), QStringLiteral("-5.55112e-17"));  // a value, not noise
    QCOMPARE(plugin::shortNumber(1e300), QStringLiteral("1e+300"));
    QVERIFY(plugin::cellValue(QStringLiteral("100000"), 99999.9999999908) == 99999.9999999908);
    QVERIFY(plugin::cellValue(QStringLiteral(" 100000 "), 99999.9999999908) == 99999.9999999908);
    QVERIFY(plugin::cellValue(QStringLiteral("100001"), 99999.9999999908) == 100001.0);
    QVERIFY(!plugin::cellValue(QStringLiteral("abc"), 1.0));
    QVERIFY(!plugin::cellValue(QStringLiteral("inf"), 1.0));
  }

  // A value column narrower than its number, in a real (offscreen) window: one line per cell
  // and mantissa digits dropped, so what the delegate paints still ends in the exponent (word
  // wrap used to break it at the decimal point and cut the rest: "1. 0000122099…").
  void narrowValueColumnKeepsTheExponent() {
    auto r = std::make_shared<tasks::TimeCourseResult>();
    r->times = {0, 1};
    r->columns = {"x"};
    r->values = {1.0000122099e-05, -3.4567891234e+12};
    auto* model = new TimeSeriesTableModel;
    plugin::TableResultView view(QStringLiteral("Table"), model, [](const auto&) {});
    model->setSeries(r);
    view.resize(400, 200);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTableView* table = view.tableView();
    QVERIFY(!table->wordWrap());
    // Room for 10 of the 13 or 14 characters of either number (and the text margins).
    table->setColumnWidth(1, table->fontMetrics().horizontalAdvance(QStringLiteral("1.0000e-05")) + 6);
    auto* delegate = dynamic_cast<plugin::CellTextDelegate*>(table->itemDelegate());
    QVERIFY(delegate);
    for (int row = 0; row < 2; ++row) {
      const QModelIndex index = view.proxyModel()->index(row, 1);
      const QString shown = index.data().toString();
      const QString exponent = shown.mid(shown.indexOf(QLatin1Char('e')));
      QVERIFY2(exponent == QLatin1String("e-05") || exponent == QLatin1String("e+12"), qPrintable(shown));
      QStyleOptionViewItem option;
      option.initFrom(table->viewport());
      option.widget = table;
      option.rect = table->visualRect(index);
      const QString painted = delegate->shownText(option, index);
      const int room = option.rect.width() -
                       2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
      QVERIFY2(painted != shown, "the column is meant to be too narrow for the number");
      QVERIFY2(painted.endsWith(QStringLiteral("…") + exponent), qPrintable(painted));
      QVERIFY2(option.fontMetrics.horizontalAdvance(painted) <= room, qPrintable(painted));
      QVERIFY(shown.startsWith(painted.section(QStringLiteral("…"), 0, 0)));
    }
  }

  // Linear axes: ticks at whole multiples of a 1-2-5 step, the zero tick exactly 0 and labelled
  // "0" (QValueAxis labels min + i·step and printed "-5.55112e-17"), labels without noise.
  void axisTicksAreNiceNumbers() {
    const plugin::NiceTicks t = plugin::niceTicks(-5.55112e-17, 1.0);
    QCOMPARE(t.step, 0.2);
    QCOMPARE(t.lo, 0.0);
    QCOMPARE(t.hi, 1.0);
    QStringList labels;
    for (double v : t.values) labels << plugin::tickLabel(v, t.step);
    QCOMPARE(labels, (QStringList{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
    const plugin::NiceTicks across = plugin::niceTicks(-0.61, 1.0);
    labels.clear();
    for (double v : across.values) labels << plugin::tickLabel(v, across.step);
    QVERIFY2(labels.contains(QStringLiteral("0")), qPrintable(labels.join(' ')));
    for (const QString& l : labels) QVERIFY2(!l.contains(QLatin1Char('e')), qPrintable(l));
    const plugin::NiceTicks tiny = plugin::niceTicks(1.0000001, 1.0000005);
    for (std::size_t i = 1; i < tiny.values.size(); ++i)
      QVERIFY(plugin::tickLabel(tiny.values[i], tiny.step) != plugin::tickLabel(tiny.values[i - 1], tiny.step));
    QCOMPARE(plugin::tickLabel(4e-7, 2e-7), QStringLiteral("4e-07"));
    const plugin::NiceTicks flat = plugin::niceTicks(3, 3);
    QVERIFY(flat.lo < 3 && flat.hi > 3);
  }

  // The same on a drawn chart: a series from -5.55e-17 to 1 gets a y axis labelled "0" at 0.
  void chartAxisShowsZero() {
    auto r = std::make_shared<tasks::TimeCourseResult>();
    r->times = {0, 0.5, 1};
    r->columns = {"x"};
    r->values = {-5.55112e-17, 0.5, 1};
    plugin::TimeSeriesChartView view(QStringLiteral("Chart"), QStringLiteral("value"),
                                     [](const auto&) { return nullptr; });
    view.resize(600, 400);
    view.setSeries(r);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QList<QAbstractAxis*> axes = view.chart()->axes(Qt::Vertical);
    QCOMPARE(axes.size(), qsizetype(1));
    auto* y = qobject_cast<QCategoryAxis*>(axes.first());
    QVERIFY(y);
    const QStringList labels = y->categoriesLabels();
    QVERIFY2(labels.contains(QStringLiteral("0")), qPrintable(labels.join(' ')));
    QCOMPARE(y->endValue(QStringLiteral("0")), 0.0);
    for (const QString& l : labels) QVERIFY2(!l.contains(QStringLiteral("e-")), qPrintable(l));
  }
};

QTEST_MAIN(TestTableModels)
#include "tst_table_models.moc"
