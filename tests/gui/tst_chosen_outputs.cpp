// SPDX-License-Identifier: MIT
// Issue 30 in the window (offscreen, real widgets, the sensode_tasks plugin linked statically):
// the outputs chooser of the Time course and Parameter sensitivities set-up restricts what is
// computed, plotted and exported, and is remembered with the task's settings; a model whose
// rule alpha = A/(A + B) is 0/0 at t = 0 runs, its chart has a gap at t = 0 (no line to 0, a
// finite axis range), the table shows NaN there and the status line names alpha. A screenshot of
// that window goes to $SENSODE_SCREENSHOT_DIR (default: the system's temporary folder) for a look.
#include <QCheckBox>
#include <QComboBox>
#include <QChart>
#include <QDir>
#include <QJsonArray>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QListWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <memory>

#include "core/tasks/time_course_task.h"
#include "gui/main_window.h"
#include "gui/task_panel.h"
#include "gui_test_helpers.h"
#include "plugin/forms/id_picker.h"
#include "plugin/models/sensitivity_table_model.h"
#include "plugin/models/time_series_table_model.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/time_series_chart_view.h"

using namespace sensode;
using gui::MainWindow;
using gui::TaskPanel;

namespace {

const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");
const QString kRatio = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/ratio_at_zero.xml");

// Unchecks "All outputs" and checks `ids` in the picker's list, as a user clicks them.
void chooseOutputs(TaskPanel* panel, const QStringList& ids) {
  auto* all = panel->setupWidget()->findChild<QCheckBox*>(QStringLiteral("outputsAll"));
  auto* list = panel->setupWidget()->findChild<QListWidget*>(QStringLiteral("outputsList"));
  QVERIFY(all && list);
  QVERIFY(list->count() > ids.size());
  all->setChecked(false);
  QVERIFY(list->isEnabled());
  for (int i = 0; i < list->count(); ++i) {
    QListWidgetItem* item = list->item(i);
    if (ids.contains(item->data(Qt::UserRole).toString())) item->setCheckState(Qt::Checked);
  }
}

QStringList tableColumns(const QAbstractItemModel* model) {
  QStringList columns;
  for (int c = 1; c < model->columnCount(); ++c)
    columns << model->headerData(c, Qt::Horizontal).toString();
  return columns;
}

// The chart's lines named `id` (one per piece between gaps).
QList<QLineSeries*> linesOf(plugin::TimeSeriesChartView* chart, const QString& id) {
  QList<QLineSeries*> lines;
  for (QAbstractSeries* s : chart->chart()->series())
    if (s->property("seriesId").toString() == id) lines << static_cast<QLineSeries*>(s);
  return lines;
}

// The series the chart lists (one entry per output, whatever the pieces its line is drawn in),
// by id: the list beside the chart is its legend (docs/charts.md).
QStringList legendLabels(plugin::TimeSeriesChartView* chart) {
  QStringList ids;
  if (auto* list = chart->findChild<QListWidget*>(QStringLiteral("seriesList")))
    for (int i = 0; i < list->count(); ++i) ids << list->item(i)->data(Qt::UserRole).toString();
  return ids;
}

}  // namespace

class TestChosenOutputs : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("SensodeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_chosen_outputs"));
  }

  // Two outputs chosen in the list: the run computes just those (the core result has two
  // columns), the chart and the table show exactly those, the CSV export has them after time,
  // and a new window remembers the choice.
  void chosenOutputsAreComputedPlottedAndExported() {
    QSettings().clear();
    QTemporaryDir dir;
    {
      MainWindow w(testing::testWindowOptions());
      w.show();
      QVERIFY(w.openModel(kRepressilator));
      TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
      QVERIFY(panel);
      panel->setupWidget()->setSettings({{"method", "cvodes"}, {"t_end", 20.0}, {"points", 41}});
      chooseOutputs(panel, {QStringLiteral("p3"), QStringLiteral("m1")});
      // In the list's (the model's) order.
      QCOMPARE(panel->setupWidget()->settings().value("outputs").toArray(), (QJsonArray{"m1", "p3"}));
      QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

      auto* table = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Table")));
      QVERIFY(table);
      QCOMPARE(tableColumns(table->sourceModel()), (QStringList{"m1", "p3"}));
      auto* chart = dynamic_cast<plugin::TimeSeriesChartView*>(panel->resultView(QStringLiteral("Chart")));
      QVERIFY(chart && chart->series());
      QCOMPARE(chart->series()->columns, (std::vector<std::string>{"m1", "p3"}));
      QCOMPARE(chart->chart()->series().size(), 2);
      QTRY_COMPARE(legendLabels(chart), (QStringList{"m1", "p3"}));

      const QString csv = dir.filePath(QStringLiteral("tc.csv"));
      QString why;
      QVERIFY2(panel->exportResult(table, QStringLiteral("csv"), csv, &why), qPrintable(why));
      QFile f(csv);
      QVERIFY(f.open(QIODevice::ReadOnly));
      QCOMPARE(f.readLine().trimmed(), QByteArray("time,m1,p3"));
      const QJsonObject p = testing::readJsonFile(TaskPanel::provenancePath(csv));
      QCOMPARE(p.value("settings").toObject().value("outputs").toArray(), (QJsonArray{"m1", "p3"}));
      w.close();
    }
    MainWindow again(testing::testWindowOptions());
    TaskPanel* panel = again.openTask(QStringLiteral("timecourse"));
    QCOMPARE(panel->setupWidget()->settings().value("outputs").toArray(), (QJsonArray{"m1", "p3"}));
    QVERIFY(again.openModel(kRepressilator));
    QCOMPARE(panel->setupWidget()->settings().value("outputs").toArray(), (QJsonArray{"m1", "p3"}));
    auto* all = panel->setupWidget()->findChild<QCheckBox*>(QStringLiteral("outputsAll"));
    QVERIFY(all && !all->isChecked());
    // Restore defaults: all outputs again; nothing checked is refused, naming the field.
    all->setChecked(true);
    QCOMPARE(panel->setupWidget()->settings().value("outputs").toArray(), QJsonArray{});
    all->setChecked(false);
    auto* list = panel->setupWidget()->findChild<QListWidget*>(QStringLiteral("outputsList"));
    for (int i = 0; i < list->count(); ++i) list->item(i)->setCheckState(Qt::Unchecked);
    QVERIFY2(panel->setupWidget()->validate().startsWith(QStringLiteral("Outputs: none checked")),
             qPrintable(panel->setupWidget()->validate()));
  }

  // The sensitivities task: two outputs chosen, only their rows.
  void sensitivitiesOfChosenOutputs() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("sensitivities"));
    QVERIFY(panel);
    panel->setupWidget()->setSettings({{"method", "cvodes"}, {"t_end", 10.0}, {"points", 11},
                                       {"parameters", QJsonArray{"alpha"}}});
    chooseOutputs(panel, {QStringLiteral("p1"), QStringLiteral("m2")});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    auto* table = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Table")));
    auto* model = qobject_cast<plugin::SensitivityTableModel*>(table->sourceModel());
    QVERIFY(model);
    QCOMPARE(model->rowCount(), 11 * 2);
    QStringList variables;
    for (int row = 0; row < 2; ++row) variables << model->data(model->index(row, 1)).toString();
    QCOMPARE(variables, (QStringList{"m2", "p1"}));
    auto* chart = panel->resultView(QStringLiteral("Chart"))->findChild<plugin::TimeSeriesChartView*>();
    QVERIFY(chart);
    QTRY_COMPARE(legendLabels(chart), (QStringList{"m2", "p1"}));
  }

  // alpha = A/(A + B) is 0/0 at t = 0: the run succeeds, the table shows NaN there and
  // k1/(k1 + k2·t/2) later, the chart's alpha line starts at the first output time after 0 (a
  // gap, not a line to 0), the y axis stays finite, and the status line names alpha.
  void undefinedOutputLeavesAGapAndIsNamed() {
    MainWindow w(testing::testWindowOptions());
    w.resize(1100, 700);
    w.show();
    QVERIFY(w.openModel(kRatio));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    // (The outputs remembered from the repressilator above are none of this model's: all.)
    panel->setupWidget()->setSettings({{"method", "odesd"}, {"t_end", 4.0}, {"points", 41}});
    QCOMPARE(panel->setupWidget()->settings().value("outputs").toArray(), QJsonArray{});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

    const QString status = w.statusBar()->currentMessage();
    qInfo("status line: %s", qPrintable(status));
    QVERIFY2(status.contains(QStringLiteral("'alpha' at t = 0")), qPrintable(status));

    auto* table = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Table")));
    const QAbstractItemModel* model = table->sourceModel();
    const int alphaColumn = tableColumns(model).indexOf(QStringLiteral("alpha")) + 1;
    QVERIFY(alphaColumn > 0);
    QVERIFY(std::isnan(model->data(model->index(0, alphaColumn), Qt::UserRole).toDouble()));
    QCOMPARE(model->data(model->index(0, alphaColumn)).toString(), QStringLiteral("NaN"));
    const double t1 = model->data(model->index(1, 0), Qt::UserRole).toDouble();
    QCOMPARE(t1, 0.1);
    QVERIFY(std::abs(model->data(model->index(1, alphaColumn), Qt::UserRole).toDouble() -
                     2 / (2 + 3 * t1 / 2)) < 1e-6);

    auto* chart = dynamic_cast<plugin::TimeSeriesChartView*>(panel->resultView(QStringLiteral("Chart")));
    QVERIFY(chart);
    const QList<QLineSeries*> alpha = linesOf(chart, QStringLiteral("alpha"));
    QCOMPARE(alpha.size(), 1);
    QCOMPARE(alpha.front()->count(), 40);
    QCOMPARE(alpha.front()->at(0).x(), t1);
    auto* y = qobject_cast<QValueAxis*>(chart->chart()->axes(Qt::Vertical).first());
    QVERIFY(y && std::isfinite(y->min()) && std::isfinite(y->max()) && y->max() > y->min());
    QVERIFY(chart->findChild<QLabel*>() != nullptr);
    bool captioned = false;
    for (QLabel* label : chart->findChildren<QLabel*>())
      captioned = captioned || label->text().contains(QStringLiteral("'alpha' has no value at 1 output time"));
    QVERIFY(captioned);

    // A screenshot of the window with the chart, to look at.
    const QString folder = qEnvironmentVariableIsSet("SENSODE_SCREENSHOT_DIR")
                               ? qEnvironmentVariable("SENSODE_SCREENSHOT_DIR")
                               : QDir::tempPath();
    const QString png = QDir(folder).filePath(QStringLiteral("undefined-output-gap.png"));
    QTest::qWait(50);
    QVERIFY(w.grab().save(png));
    qInfo("screenshot: %s", qPrintable(png));
    // alpha alone over [0, 1] (docs/screenshots/undefined-output-gap.png): the gap from t = 0.
    panel->setupWidget()->setSettings({{"t_end", 1.0}, {"points", 21}, {"outputs", QJsonArray{"alpha"}}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    QCOMPARE(chart->chart()->series().size(), 1);
    QCOMPARE(linesOf(chart, QStringLiteral("alpha")).front()->at(0).x(), 0.05);
    QTest::qWait(50);
    const QString alone = QDir(folder).filePath(QStringLiteral("undefined-output-gap-alpha.png"));
    QVERIFY(w.grab().save(alone));
    qInfo("screenshot: %s", qPrintable(alone));

    // The sensitivities task on the same model: alpha's sensitivities are NaN at t = 0, and the
    // status line names it.
    TaskPanel* sens = w.openTask(QStringLiteral("sensitivities"));
    sens->setupWidget()->setSettings({{"method", "odesd"}, {"t_end", 4.0}, {"points", 41},
                                      {"parameters", QJsonArray{"k1", "k2"}},
                                      {"outputs", QJsonArray{"alpha"}}});
    QCOMPARE(int(testing::clickRunAndWait(sens)), int(api::TaskStatus::Succeeded));
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("'alpha' at t = 0")),
             qPrintable(w.statusBar()->currentMessage()));
    auto* sensTable = dynamic_cast<plugin::TableResultView*>(sens->resultView(QStringLiteral("Table")));
    const QAbstractItemModel* rows = sensTable->sourceModel();
    QCOMPARE(rows->rowCount(), 41 * 2);
    QVERIFY(std::isnan(rows->data(rows->index(0, 3), Qt::UserRole).toDouble()));
    QVERIFY(std::isfinite(rows->data(rows->index(2, 3), Qt::UserRole).toDouble()));
    // The heat map at t = 0 greys alpha's row and says why.
    api::TaskResultView* heat = sens->resultView(QStringLiteral("Heat map"));
    QVERIFY(heat);
    auto* time = heat->findChild<QComboBox*>(QStringLiteral("heatMapTime"));
    QVERIFY(time);
    time->setCurrentIndex(0);
    bool said = false;
    for (QLabel* label : heat->findChildren<QLabel*>())
      said = said || label->text().contains(QStringLiteral("Grey rows: alpha without a value at this time"));
    QVERIFY(said);
  }

  // A value with no number inside a series splits its line into pieces under one legend entry
  // that hides and shows them together.
  void aGapInsideASeriesSplitsTheLine() {
    auto series = std::make_shared<tasks::TimeCourseResult>();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    series->times = {0, 1, 2, 3, 4, 5};
    series->columns = {"x", "y"};
    series->values = {1, 0, 2, 1, nan, 2, nan, 3, 5, 4, 6, 5};
    plugin::TimeSeriesChartView view(QStringLiteral("Chart"), QStringLiteral("value"), {});
    view.resize(600, 400);
    view.show();
    view.setSeries(series);
    const QList<QLineSeries*> x = linesOf(&view, QStringLiteral("x"));
    QCOMPARE(x.size(), 2);
    QCOMPARE(x[0]->points(), (QList<QPointF>{{0, 1}, {1, 2}}));
    QCOMPARE(x[1]->points(), (QList<QPointF>{{4, 5}, {5, 6}}));
    QCOMPARE(linesOf(&view, QStringLiteral("y")).size(), 1);
    QTRY_COMPARE(legendLabels(&view), (QStringList{"x", "y"}));
    view.setSeriesVisible(QStringLiteral("x"), false);
    QVERIFY(!x[0]->isVisible() && !x[1]->isVisible());
    view.setSeriesVisible(QStringLiteral("x"), true);
    QVERIFY(x[0]->isVisible() && x[1]->isVisible());
  }
};

QTEST_MAIN(TestChosenOutputs)
#include "tst_chosen_outputs.moc"
