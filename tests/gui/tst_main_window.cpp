// SPDX-License-Identifier: MIT
// The host driven offscreen with the real widgets and the sensode_tasks plugin (linked
// statically): open the bundled repressilator, browse and edit it, run the time course by
// clicking Run, compare the table with the core's runTimeCourse for the same settings (bit for
// bit), export and re-read CSV/PNG/SVG and their provenance JSON, cancel a long run within
// 0.2 s with the previous results left on screen, and see the core's error messages reported.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QChart>
#include <QCryptographicHash>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QListWidget>
#include <QLogValueAxis>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QRegularExpression>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QSvgRenderer>
#include <QTableView>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QtTest/QtTest>

#include <chrono>
#include <memory>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/sensitivity_comparison.h"
#include "core/tasks/time_course_task.h"
#include "gui/main_window.h"
#include "gui/model_browser.h"
#include "gui/model_table_model.h"
#include "gui/plugin_loader.h"
#include "gui/sbml_support_dialog.h"
#include "gui/task_panel.h"
#include "gui_test_helpers.h"
#include "plugin/models/sensitivity_table_model.h"
#include "plugin/models/time_series_table_model.h"
#include "plugin/views/key_value_view.h"
#include "plugin/views/table_result_view.h"
#include "plugin/views/time_series_chart_view.h"
#include "support/core_reference.h"
#include "support/numeric_compare.h"

// sensode_tasks_static is imported by linking it (qt_add_plugin's initializer library).

using namespace sensode;
using gui::MainWindow;
using gui::TaskPanel;

namespace {

const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");

// The core's answer for the same settings (the bundled repressilator).
tasks::TimeCourseResult coreReference(const char* method, double tEnd, long points, double rtol,
                                      double atol,
                                      std::vector<std::pair<std::string, double>> overrides = {}) {
  return testing::coreTimeCourse(kRepressilator.toStdString(), method, tEnd, points, rtol, atol,
                                 std::move(overrides));
}



plugin::TimeSeriesTableModel* tableModelOf(TaskPanel* panel) {
  auto* view = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Table")));
  return view ? qobject_cast<plugin::TimeSeriesTableModel*>(view->sourceModel()) : nullptr;
}

// Exact comparison of the GUI's table with a core result.
void compareTable(const plugin::TimeSeriesTableModel* model, const tasks::TimeCourseResult& ref) {
  QCOMPARE(model->rowCount(), int(ref.times.size()));
  QCOMPARE(model->columnCount(), int(ref.columns.size()) + 1);
  for (int c = 1; c < model->columnCount(); ++c) {
    QCOMPARE(model->headerData(c, Qt::Horizontal).toString(),
             QString::fromStdString(ref.columns[std::size_t(c - 1)]));
  }
  for (int r = 0; r < model->rowCount(); ++r) {
    QVERIFY(model->data(model->index(r, 0), Qt::UserRole).toDouble() == ref.times[std::size_t(r)]);
    for (int c = 1; c < model->columnCount(); ++c) {
      const double shown = model->data(model->index(r, c), Qt::UserRole).toDouble();
      const double expected = ref.at(std::size_t(r), std::size_t(c - 1));
      QVERIFY2(shown == expected, qPrintable(QStringLiteral("row %1 column %2: %3 vs %4")
                                                 .arg(r).arg(c).arg(shown, 0, 'g', 17)
                                                 .arg(expected, 0, 'g', 17)));
    }
  }
}



}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("SensodeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_main_window"));
    QSettings().clear();
  }

  void opensTheModelIntoTheBrowser() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    QCOMPARE(w.session().filePath, QFileInfo(kRepressilator).absoluteFilePath());
    QCOMPARE(w.session().format, QStringLiteral("sbml"));
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("repressilator.xml")));
    gui::ModelBrowser* b = w.modelBrowser();
    QCOMPARE(b->tableTitles(), (QStringList{QStringLiteral("Compartments"), QStringLiteral("Species"),
                                            QStringLiteral("Parameters"), QStringLiteral("Reactions"),
                                            QStringLiteral("Rules")}));
    QCOMPARE(b->tableModel(QStringLiteral("Species"))->rowCount(), 6);
    gui::ModelTableModel* reactions = b->tableModel(QStringLiteral("Reactions"));
    QCOMPARE(reactions->rowCount(), 12);
    for (int r = 0; r < reactions->rowCount(); ++r) {
      QVERIFY(!reactions->data(reactions->index(r, 3)).toString().isEmpty());
    }
    for (const QString& title : b->tableTitles()) {
      QAbstractItemModelTester tester(b->tableModel(title),
                                      QAbstractItemModelTester::FailureReportingMode::QtTest);
    }
    QVERIFY(w.recentFiles().contains(w.session().filePath));
  }

  void tasksMenuComesFromThePlugins() {
    MainWindow w(testing::testWindowOptions());
    QAction* action = w.tasksMenu()->findChild<QAction*>(QStringLiteral("task_timecourse"));
    QVERIFY(action);
    QCOMPARE(action->text(), QStringLiteral("Time course"));
    QVERIFY(!action->icon().isNull());
    action->trigger();
    QVERIFY(w.taskPanel(QStringLiteral("timecourse")));
    QCOMPARE(w.currentTaskPanel(), w.taskPanel(QStringLiteral("timecourse")));
  }

  void timeCourseTableEqualsTheCore_data() {
    QTest::addColumn<QString>("method");
    QTest::newRow("cvodes") << QStringLiteral("cvodes");
    QTest::newRow("odesd") << QStringLiteral("odesd");
  }

  void timeCourseTableEqualsTheCore() {
    QFETCH(QString, method);
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    QVERIFY(panel);
    panel->setupWidget()->setSettings(
        {{"method", method}, {"t_end", 50.0}, {"points", 201}, {"rtol", 1e-10}, {"atol", 1e-12}});
    const tasks::TimeCourseResult ref =
        coreReference(qPrintable(method), 50, 201, 1e-10, 1e-12);
    const api::TaskStatus status = testing::clickRunAndWait(panel);
    if (ref.termination != tasks::Termination::Success) {
      // The core cannot run this method (yet): the GUI says exactly what the core says.
      QCOMPARE(int(status), int(api::TaskStatus::Failed));
      QVERIFY2(w.lastError().contains(QString::fromStdString(ref.message)), qPrintable(w.lastError()));
      QSKIP(qPrintable(QStringLiteral("%1: %2").arg(method, QString::fromStdString(ref.message))));
    }
    QCOMPARE(int(status), int(api::TaskStatus::Succeeded));
    QVERIFY(panel->shownResult());
    QCOMPARE(panel->progressBar()->value(), panel->progressBar()->maximum());

    plugin::TimeSeriesTableModel* model = tableModelOf(panel);
    QVERIFY(model);
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    compareTable(model, ref);

    // And against the reference state at t = 50 in the model file (NUMERICS.md §11).
    const double expected[] = {1.2301285264, 38.342340321, 13.435302032,
                               1.3422117400, 31.147354469, 16.616318254};
    const int last = model->rowCount() - 1;
    for (int c = 0; c < 6; ++c) {
      SENSODE_EXPECT_CLOSE(model->data(model->index(last, c + 1), Qt::UserRole).toDouble(),
                           expected[c], 1e-7, 1e-7, "x(50)", c);
    }

    // The statistics beside the chart are the core's.
    auto* stats = dynamic_cast<plugin::KeyValueView*>(panel->resultView(QStringLiteral("Statistics")));
    QVERIFY(stats);
    QAbstractItemModelTester statsTester(stats->model(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(stats->model()->value(QStringLiteral("steps")).toLongLong(), qlonglong(ref.stats.steps));
    QCOMPARE(stats->model()->value(QStringLiteral("method")).toString(), method);

    // The chart has one line per output, a series list that toggles them, and a log axis.
    auto* chart = dynamic_cast<plugin::TimeSeriesChartView*>(panel->resultView(QStringLiteral("Chart")));
    QVERIFY(chart);
    QCOMPARE(chart->chart()->series().size(), 6);
    QCOMPARE(chart->seriesList()->count(), 6);
    QListWidgetItem* item = chart->seriesList()->item(0);
    const QString first = item->data(Qt::UserRole).toString();
    QAbstractSeries* line = chart->chart()->series().first();
    QVERIFY(line->isVisible());
    item->setCheckState(Qt::Unchecked);
    QVERIFY(!line->isVisible());
    QCOMPARE(chart->hiddenSeries(), QStringList{first});
    QVERIFY(chart->seriesNote()->text().contains(QStringLiteral("Hidden: ") + first));
    item->setCheckState(Qt::Checked);
    QVERIFY(line->isVisible());
    QVERIFY(chart->hiddenSeries().isEmpty());
    chart->logScaleBox()->setChecked(true);
    QCOMPARE(chart->chart()->axes(Qt::Vertical).first()->type(), QAbstractAxis::AxisTypeLogValue);
    chart->logScaleBox()->setChecked(false);
    // Linear (a QCategoryAxis labelled at its ticks, plugin/views/axis_range.h), not logarithmic.
    QVERIFY(qobject_cast<QValueAxis*>(chart->chart()->axes(Qt::Vertical).first()));

    // Sorting happens in the view only; the model keeps the core's order.
    auto* table = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Table")));
    table->tableView()->sortByColumn(1, Qt::DescendingOrder);
    compareTable(model, ref);
    table->tableView()->selectRow(0);
    const QString copied = table->selectionAsText();
    QVERIFY(copied.startsWith(QStringLiteral("time\tm1\t")));
  }

  void editedParametersReachTheTask() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    gui::ModelTableModel* params = w.modelBrowser()->tableModel(QStringLiteral("Parameters"));
    QVERIFY(params);
    int alphaRow = -1;
    for (int r = 0; r < params->rowCount(); ++r) {
      if (params->data(params->index(r, 0)).toString() == QStringLiteral("alpha")) alphaRow = r;
    }
    QVERIFY(alphaRow >= 0);
    const int valueColumn = params->table().valueColumn;
    const QModelIndex cell = params->index(alphaRow, valueColumn);
    QVERIFY(params->flags(cell) & Qt::ItemIsEditable);
    QVERIFY(!params->setData(cell, QStringLiteral("not a number")));
    QVERIFY(params->setData(cell, QStringLiteral("150")));
    QCOMPARE(w.session().overrides.value(QStringLiteral("alpha")), 150.0);
    QCOMPARE(params->data(cell).toString(), QStringLiteral("150"));
    QVERIFY(params->data(cell, Qt::FontRole).value<QFont>().bold());

    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    panel->setupWidget()->setSettings(
        {{"method", "cvodes"}, {"t_end", 20.0}, {"points", 41}, {"rtol", 1e-8}, {"atol", 1e-12}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    compareTable(tableModelOf(panel),
                 coreReference("cvodes", 20, 41, 1e-8, 1e-12, {{"alpha", 150.0}}));
    QCOMPARE(panel->shownResult()->provenance().value("parameter_overrides").toObject()
                 .value("alpha").toDouble(), 150.0);

    // Clearing the cell goes back to the file's value.
    QVERIFY(params->setData(cell, QString()));
    QVERIFY(w.session().overrides.isEmpty());
  }

  void exportsCarryProvenance() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    const QJsonObject settings{
        {"method", "cvodes"}, {"t_end", 40.0}, {"points", 81}, {"rtol", 1e-9}, {"atol", 1e-12}};
    panel->setupWidget()->setSettings(settings);
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const tasks::TimeCourseResult ref = coreReference("cvodes", 40, 81, 1e-9, 1e-12);

    QStringList formats;
    for (const auto& t : panel->exportTargets()) formats << t.format.id;
    QCOMPARE(formats, (QStringList{QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("csv")}));

    auto* table = panel->resultView(QStringLiteral("Table"));
    auto* chart = panel->resultView(QStringLiteral("Chart"));
    const QString csv = dir.filePath(QStringLiteral("tc.csv"));
    const QString png = dir.filePath(QStringLiteral("tc.png"));
    const QString svg = dir.filePath(QStringLiteral("tc.svg"));
    QString why;
    QVERIFY2(panel->exportResult(table, QStringLiteral("csv"), csv, &why), qPrintable(why));
    QVERIFY2(panel->exportResult(chart, QStringLiteral("png"), png, &why), qPrintable(why));
    QVERIFY2(panel->exportResult(chart, QStringLiteral("svg"), svg, &why), qPrintable(why));

    // CSV: the CLI's format, numbers that read back to the core's doubles.
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 82);
    QCOMPARE(lines.first(), QStringLiteral("time,m1,m2,m3,p1,p2,p3"));
    for (int r = 0; r < 81; ++r) {
      const QStringList fields = lines[r + 1].split(QLatin1Char(','));
      QCOMPARE(fields.size(), 7);
      QVERIFY(fields[0].toDouble() == ref.times[std::size_t(r)]);
      for (int c = 0; c < 6; ++c) {
        QVERIFY2(fields[c + 1].toDouble() == ref.at(std::size_t(r), std::size_t(c)),
                 qPrintable(lines[r + 1]));
      }
    }

    // PNG: an image of the chart at twice the on-screen resolution.
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 400 && image.height() >= 300);
    // Not blank: the lines put many colours in.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7) {
      for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    }
    QVERIFY(colours.size() > 10);

    // SVG: valid, and it names the series in the legend.
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray svgText = s.readAll();
    QVERIFY(svgText.contains("<svg"));
    QVERIFY(svgText.contains(">p3<") || svgText.contains("p3"));

    // Provenance beside every export.
    for (const QString& file : {csv, png, svg}) {
      const QString jsonPath = TaskPanel::provenancePath(file);
      QVERIFY2(QFileInfo::exists(jsonPath), qPrintable(jsonPath));
      const QJsonObject p = testing::readJsonFile(jsonPath);
      QCOMPARE(p.value("sensode_version").toString(), QStringLiteral(SENSODE_VERSION));
      QCOMPARE(p.value("task").toObject().value("id").toString(), QStringLiteral("timecourse"));
      const QJsonObject model = p.value("model").toObject();
      QCOMPARE(model.value("file").toString(), QFileInfo(kRepressilator).absoluteFilePath());
      QCOMPARE(model.value("sha256").toString(), testing::sha256OfFile(kRepressilator));
      QCOMPARE(p.value("method").toString(), QStringLiteral("cvodes"));
      QCOMPARE(p.value("tolerances").toObject().value("rtol").toDouble(), 1e-9);
      QCOMPARE(p.value("tolerances").toObject().value("atol").toDouble(), 1e-12);
      QCOMPARE(p.value("derivative_source").toString(), QStringLiteral("exact symbolic"));
      QCOMPARE(p.value("settings").toObject().value("t_end").toDouble(), 40.0);
      QCOMPARE(p.value("settings").toObject().value("points").toInt(), 81);
      const QJsonObject exported = p.value("export").toObject();
      QCOMPARE(exported.value("file").toString(), QFileInfo(file).fileName());
      QCOMPARE(exported.value("sha256").toString(), testing::sha256OfFile(file));
      QCOMPARE(p.value("statistics").toObject().value("steps").toDouble(), double(ref.stats.steps));
    }
  }

  void cancelStopsFastAndKeepsThePreviousResults() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    panel->setupWidget()->setSettings({{"method", "cvodes"}, {"t_end", 30.0}, {"points", 31}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const auto before = panel->shownResult();
    plugin::TimeSeriesTableModel* model = tableModelOf(panel);
    const double lastBefore = model->data(model->index(30, 1), Qt::UserRole).toDouble();

    panel->setupWidget()->setSettings({{"t_end", 1e6}, {"points", 200001}});
    QSignalSpy finished(panel, &TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(panel->isRunning());
    QVERIFY(!panel->runButton()->isEnabled());
    QVERIFY(panel->cancelButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(panel->progressBar()->value() > 0, 20000);  // integrating
    QVERIFY(panel->isRunning());
    SENSODE_VERIFY_CANCEL_WITHIN(panel, finished, 0.2);

    // The previous results are untouched.
    QCOMPARE(panel->shownResult(), before);
    QCOMPARE(model->rowCount(), 31);
    QVERIFY(model->data(model->index(30, 1), Qt::UserRole).toDouble() == lastBefore);
    QVERIFY(panel->runButton()->isEnabled());
    QVERIFY(w.lastError().isEmpty());  // a cancel is not an error
  }

  // A run no method can finish (dx/dt = 1/x from x = 0: the rate is infinite at t = 0): the
  // panel and the message box give the core's headline, in a modeller's words; the technical
  // detail behind it (evaluator entry, solver flag, attempts) goes to the box's expandable part
  // and the label's tool tip, never into the headline.
  void failureHeadlineAndDetails_data() {
    QTest::addColumn<QString>("method");
    QTest::newRow("odesd") << QStringLiteral("odesd");
    QTest::newRow("cvodes") << QStringLiteral("cvodes");
  }
  void failureHeadlineAndDetails() {
    QFETCH(QString, method);
    const QString model = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/reciprocal.xml");
    const tasks::TimeCourseResult ref =
        testing::coreTimeCourse(model.toStdString(), qPrintable(method), 10, 11, 1e-6, 1e-12);
    QVERIFY2(ref.termination != tasks::Termination::Success, "the model was meant to fail");
    const QString headline = QString::fromStdString(ref.message);
    const QString details = QString::fromStdString(ref.details);

    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(model));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    panel->setupWidget()->setSettings({{"method", method}, {"t_end", 10.0}, {"points", 11},
                                       {"rtol", 1e-6}, {"atol", 1e-12}, {"max_steps", 100000}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Failed));
    auto* label = panel->findChild<QLabel*>(QStringLiteral("progressText"));
    QVERIFY(label);
    QCOMPARE(label->text(), QStringLiteral("Failed: ") + headline);
    QCOMPARE(label->toolTip(), details);
    auto* box = w.findChild<QMessageBox*>(QStringLiteral("errorBox"));
    QVERIFY(box);
    QCOMPARE(box->text(), headline);
    QCOMPARE(box->detailedText(), details);
    QVERIFY(w.lastError().endsWith(headline));
    if (details.isEmpty())
      QSKIP(qPrintable(QStringLiteral("the core gives no details for this failure: ") + headline));
    // Jargon: evaluator entries (f[..], d a[..] / d ..), Jacobian entries, SUNDIALS flags.
    static const QRegularExpression jargon(
        QStringLiteral(R"(\b[A-Za-z_]\[|Jacobian entry|\bd [a-z]\[|CV_[A-Z_]+|\bJ_J\b)"));
    QVERIFY2(!jargon.match(headline).hasMatch(), qPrintable(headline));
    QVERIFY2(!headline.contains(details), qPrintable(headline));
  }

  // When the default method falls back (odeSD on x^1.5 from x = 0, whose second derivative is
  // infinite at t = 0), the status line and the Statistics table say so, with the core's
  // sentences; a run that did not fall back shows no Fallback row.
  void fallbacksAreShown() {
    const QString model = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/hill_at_zero.xml");
    const tasks::TimeCourseResult ref =
        testing::coreTimeCourse(model.toStdString(), "odesd", 10, 11, 1e-6, 1e-12);
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(model));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    panel->setupWidget()->setSettings({{"method", "odesd"}, {"t_end", 10.0}, {"points", 11},
                                       {"rtol", 1e-6}, {"atol", 1e-12}, {"max_steps", 100000}});
    const api::TaskStatus status = testing::clickRunAndWait(panel);
    if (ref.termination != tasks::Termination::Success) {
      QCOMPARE(int(status), int(api::TaskStatus::Failed));
      QSKIP(qPrintable(QStringLiteral("odeSD fails on x^1.5 at x = 0 without a fallback (core): ") +
                       QString::fromStdString(ref.message)));
    }
    QCOMPARE(int(status), int(api::TaskStatus::Succeeded));
    auto* stats = dynamic_cast<plugin::KeyValueView*>(panel->resultView(QStringLiteral("Statistics")));
    QVERIFY(stats);
    QStringList shown;
    for (int r = 0; r < stats->model()->rowCount(); ++r) {
      if (stats->model()->data(stats->model()->index(r, 0)).toString() == QLatin1String("Fallback"))
        shown << stats->model()->data(stats->model()->index(r, 1)).toString();
    }
    QStringList expected;
    for (const std::string& f : ref.stats.fallbacks) expected << QString::fromStdString(f);
    QCOMPARE(shown, expected);
    for (const QString& f : expected) {
      QVERIFY2(w.statusBar()->currentMessage().contains(f), qPrintable(w.statusBar()->currentMessage()));
      QVERIFY(panel->findChild<QLabel*>(QStringLiteral("progressText"))->text().contains(f));
    }
    if (expected.isEmpty()) QSKIP("odeSD ran on x^1.5 at x = 0 without falling back");
  }

  // The same for the sensitivities w.r.t. the Hill exponent n with the default method (issue 16:
  // x^n·ln x at x = 0 and the infinite second derivative): a failure shows the core's headline
  // and details; a success shows every fallback the task and its integrator took, task first.
  void sensitivityFallbacksAreShown() {
    const QString file = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/hill_at_zero.xml");
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(file));
    TaskPanel* panel = w.openTask(QStringLiteral("sensitivities"));
    const tasks::SensitivityOptions defaults;
    panel->setupWidget()->setSettings(
        {{"method", QString::fromLatin1(tasks::toString(defaults.method))}, {"t_end", 10.0},
         {"points", 11}, {"rtol", 1e-6}, {"atol", 1e-12}, {"scaled", false},
         {"parameters", QJsonArray{"n"}}, {"compare", QJsonArray{}}});
    const api::TaskStatus status = testing::clickRunAndWait(panel);

    tasks::SensitivityProblem problem;
    problem.model = std::make_shared<symbolic::CompiledModel>(
        symbolic::buildOdeSystem(model::importSbmlFile(file.toStdString())));
    for (int i = 0; i <= 10; ++i) problem.times.push_back(i);
    problem.parameters = {"n"};
    tasks::SensitivityOptions options;
    options.integrator.rtol = 1e-6;
    options.integrator.atol = 1e-12;
    options.scaled = false;
    const tasks::SensitivityResult ref = tasks::runSensitivities(problem, options);
    if (ref.termination != tasks::Termination::Success) {
      QCOMPARE(int(status), int(api::TaskStatus::Failed));
      auto* box = w.findChild<QMessageBox*>(QStringLiteral("errorBox"));
      QVERIFY(box);
      QCOMPARE(box->text(), QString::fromStdString(ref.message));
      QCOMPARE(box->detailedText(), QString::fromStdString(ref.details));
      QSKIP(qPrintable(QStringLiteral("the default method fails on dy/dn at x = 0 (core): ") +
                       QString::fromStdString(ref.message)));
    }
    QCOMPARE(int(status), int(api::TaskStatus::Succeeded));
    QStringList expected;
    for (const std::string& f : ref.stats.fallbacks) expected << QString::fromStdString(f);
    for (const std::string& f : ref.stats.integrator.fallbacks) expected << QString::fromStdString(f);
    auto* stats = dynamic_cast<plugin::KeyValueView*>(panel->resultView(QStringLiteral("Statistics")));
    QVERIFY(stats);
    QStringList shown;
    for (int r = 0; r < stats->model()->rowCount(); ++r) {
      if (stats->model()->data(stats->model()->index(r, 0)).toString() == QLatin1String("Fallback"))
        shown << stats->model()->data(stats->model()->index(r, 1)).toString();
    }
    QCOMPARE(shown, expected);
    for (const QString& f : expected)
      QVERIFY2(w.statusBar()->currentMessage().contains(f), qPrintable(w.statusBar()->currentMessage()));
    if (expected.isEmpty()) QSKIP("the default method ran without falling back");
  }

  // Crauste's time course to t = 100 with the default method (odeSD): the pathogen blows up at
  // t ≈ 10.2, where odeSD and CVODES both stop, and the task computes the run again with CVODES
  // BDF from t = 0 (tst_fallbacks::crausteTimeCourseWithDefaults). The status line names that
  // fallback, and its tool tip has the whole text when the line is cut.
  void statusLineNamesTheFallback() {
    const QString file = QStringLiteral(
        SENSODE_SHARED_DIR "/petab/Crauste_CellSystems2017/model_Crauste_CellSystems2017.xml");
    if (!QFileInfo::exists(file)) QSKIP("shared PEtab data not found");
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(file));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    panel->setupWidget()->setSettings({{"t_end", 100.0}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const QString line = w.statusBar()->currentMessage();
    QVERIFY2(line.contains(QStringLiteral("fell back")), qPrintable(line));
    QVERIFY2(line.contains(QStringLiteral("computed again from t = 0 with CVODES BDF")), qPrintable(line));
    QCOMPARE(w.statusBar()->toolTip(), line);
  }

  // The centre's text with no task open says what to do next for the session as it is: how to
  // open a file (SBML or PEtab) before, the open file and the Tasks menu after — never "Open an
  // SBML model" with one open.
  void idleTextFollowsTheSession() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    auto* welcome = w.findChild<QLabel*>(QStringLiteral("welcome"));
    QVERIFY(welcome);
    QVERIFY2(welcome->text().contains(QStringLiteral("PEtab")), qPrintable(welcome->text()));
    auto* summary = w.modelBrowser()->findChild<QLabel*>(QStringLiteral("modelSummary"));
    QVERIFY(summary && summary->text().contains(QStringLiteral("PEtab")));
    QVERIFY(w.openModel(kRepressilator));
    QVERIFY2(!welcome->text().contains(QStringLiteral("Open an SBML")), qPrintable(welcome->text()));
    QVERIFY2(welcome->text().contains(QStringLiteral("repressilator.xml")), qPrintable(welcome->text()));
    QVERIFY(welcome->text().contains(QStringLiteral("Tasks")));
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    QVERIFY(panel);
  }

  // The settings column at the default window size and at 1280x800, before a run, after a
  // failure (its long message wraps under the buttons) and after a success: every field and
  // button as wide as its text, none cut off at the column's edge, and the window keeps its size
  // (the sensitivity task's result views used to widen it by their one-line captions).
  void panelsFitTheWindow_data() {
    QTest::addColumn<QString>("task");
    QTest::addColumn<QSize>("size");
    for (const char* task : {"timecourse", "sensitivities"}) {
      QTest::newRow(qPrintable(QStringLiteral("%1 default").arg(task))) << task << QSize();
      QTest::newRow(qPrintable(QStringLiteral("%1 1280x800").arg(task))) << task << QSize(1280, 800);
    }
  }
  void panelsFitTheWindow() {
    QFETCH(QString, task);
    QFETCH(QSize, size);
    // A curated BioModels model the other tests do not use: 26 species, 54 parameters.
    const QString file = QStringLiteral(SENSODE_SHARED_DIR "/biomodels/BIOMD0000000009.xml");
    if (!QFileInfo::exists(file)) QSKIP("shared BioModels data not found");
    MainWindow w(testing::testWindowOptions());
    if (size.isValid()) w.resize(size);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QSize before = w.size();
    QVERIFY(w.openModel(file));
    TaskPanel* panel = w.openTask(task);
    QCoreApplication::processEvents();
    QStringList problems = testing::squeezedSettings(panel);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));

    // A failure (x' = 1/x from x = 0: f is not finite at t = 0), its headline under the buttons.
    QVERIFY(w.openModel(QStringLiteral(SENSODE_TEST_DATA_DIR "/models/reciprocal.xml")));
    panel->setupWidget()->setSettings({{"method", "cvodes"}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Failed));
    QCoreApplication::processEvents();
    problems = testing::squeezedSettings(panel);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
    QVERIFY2(testing::grewFrom(before, w).isEmpty(), qPrintable(testing::grewFrom(before, w)));

    QVERIFY(w.openModel(file));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    problems = testing::panelDoesNotFit(panel, w, before);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
  }

  // The species table shows each species' initial value beside its id at the dock's width
  // (the value used to be the fourth column, off to the right behind names and compartments).
  void speciesValuesAreInView() {
    const QString file = QStringLiteral(SENSODE_SHARED_DIR "/biomodels/BIOMD0000000009.xml");
    if (!QFileInfo::exists(file)) QSKIP("shared BioModels data not found");
    MainWindow w(testing::testWindowOptions());
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openModel(file));
    QCoreApplication::processEvents();
    QTableView* species = w.modelBrowser()->tableView(QStringLiteral("Species"));
    QVERIFY(species && species->isVisible());
    const int value = w.modelBrowser()->tableModel(QStringLiteral("Species"))->table().valueColumn;
    QCOMPARE(species->horizontalHeader()->visualIndex(value), 1);
    const QModelIndex first = species->model()->index(0, value);
    const QRect cell = species->visualRect(first);
    QVERIFY2(cell.left() >= 0 && cell.right() <= species->viewport()->width(),
             qPrintable(QStringLiteral("value column at %1..%2 of %3 px")
                            .arg(cell.left()).arg(cell.right()).arg(species->viewport()->width())));
    const QString shown = first.data().toString();
    QVERIFY2(species->fontMetrics().horizontalAdvance(shown) <= cell.width(), qPrintable(shown));
  }

  // The time course and the sensitivities start from the CLI's output times: `sensode simulate`
  // without --t-end and --points reports the same times as the GUI's defaults.
  void endTimeDefaultsAreTheClis() {
    QTemporaryDir dir;
    const QString csv = dir.filePath(QStringLiteral("cli.csv"));
    QProcess cli;
    cli.start(QStringLiteral(SENSODE_CLI_PATH),
              {QStringLiteral("simulate"), kRepressilator, QStringLiteral("--out"), csv});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QList<double> cliTimes;
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    for (qsizetype i = 1; i < lines.size(); ++i) cliTimes << lines[i].section(',', 0, 0).toDouble();

    MainWindow::Options fresh = testing::testWindowOptions();
    fresh.useSettings = false;
    MainWindow w(fresh);
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    for (const char* task : {"timecourse", "sensitivities"}) {
      TaskPanel* panel = w.openTask(QString::fromLatin1(task));
      const QJsonObject s = panel->setupWidget()->settings();
      QCOMPARE(s.value("t_end").toDouble(), cliTimes.last());
      QCOMPARE(s.value("points").toInteger(), qint64(cliTimes.size()));
    }
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    auto* table = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Table")));
    QVERIFY(table);
    QCOMPARE(table->sourceModel()->rowCount(), int(cliTimes.size()));
    for (int r = 0; r < cliTimes.size(); ++r)
      QVERIFY(table->sourceModel()->data(table->sourceModel()->index(r, 0), Qt::UserRole).toDouble() ==
              cliTimes[r]);
  }

  void coreErrorsAreReported() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QSignalSpy errors(&w, &MainWindow::errorReported);

    // An unsupported model: the importer's message, and the open model stays.
    QVERIFY(w.openModel(kRepressilator));
    QVERIFY(!w.openModel(QStringLiteral(SENSODE_TEST_DATA_DIR "/bad_sbml/delay.xml")));
    QCOMPARE(errors.count(), 1);
    QVERIFY2(w.lastError().contains(QStringLiteral("delay.xml")), qPrintable(w.lastError()));
    QCOMPARE(QFileInfo(w.session().filePath).fileName(), QStringLiteral("repressilator.xml"));
    QVERIFY(w.findChild<QMessageBox*>(QStringLiteral("errorBox")));
    QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("delay.xml")));

    // Invalid settings are refused before running, naming the field.
    TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    panel->setupWidget()->setSettings({{"rtol", -1.0}});
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(!panel->isRunning());
    QVERIFY2(w.lastError().contains(QStringLiteral("Relative tolerance")), qPrintable(w.lastError()));

    // A failure inside the core (too much work): its message, unchanged, and no new results.
    panel->setupWidget()->setSettings(
        {{"rtol", 1e-6}, {"method", "cvodes"}, {"t_end", 50.0}, {"points", 2}, {"max_steps", 10}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Failed));
    const auto ref = coreReference("cvodes", 50, 2, 1e-6, 1e-12, {});
    QVERIFY(ref.termination == tasks::Termination::Success);  // (with the default max steps)
    QVERIFY2(w.lastError().contains(QStringLiteral("too much work")), qPrintable(w.lastError()));
    QVERIFY(!panel->shownResult());

    // Unknown task ids name the known ones.
    QVERIFY(!w.openTask(QStringLiteral("no-such-task")));
    QVERIFY(w.lastError().contains(QStringLiteral("timecourse")));
  }

  void settingsAreRemembered() {
    QSettings().clear();
    const QJsonObject settings{{"method", "cvodes"}, {"t_end", 12.0}, {"points", 13},
                               {"rtol", 1e-7}, {"atol", 1e-11}, {"max_steps", 5000},
                               {"outputs", QJsonArray{}}};
    {
      MainWindow w(testing::testWindowOptions());
      w.show();
      QVERIFY(w.openModel(kRepressilator));
      TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
      panel->setupWidget()->setSettings(settings);
      QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
      w.close();
    }
    MainWindow again(testing::testWindowOptions());
    QCOMPARE(again.recentFiles().value(0), QFileInfo(kRepressilator).absoluteFilePath());
    TaskPanel* panel = again.openTask(QStringLiteral("timecourse"));
    QCOMPARE(panel->setupWidget()->settings(), settings);

    MainWindow::Options fresh = testing::testWindowOptions();
    fresh.useSettings = false;
    MainWindow clean(fresh);
    QVERIFY(clean.recentFiles().isEmpty());
    QCOMPARE(clean.openTask(QStringLiteral("timecourse"))->setupWidget()->settings()
                 .value("t_end").toDouble(), 10.0);
  }

  // Settings ▸ Use the compiled-model cache: off, a model's run writes nothing to the cache
  // folder; on again (remembered), the next model's first run leaves its entry there.
  void nativeCachePreferenceReachesTheCore() {
    QSettings().clear();
    QTemporaryDir cacheDir;
    const QByteArray previous = qgetenv("SENSODE_CACHE_DIR");
    qputenv("SENSODE_CACHE_DIR", cacheDir.path().toLocal8Bit());
    const QString model = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/michaelis_menten.xml");
    {
      MainWindow w(testing::testWindowOptions());
      w.show();
      auto* action = w.findChild<QAction*>(QStringLiteral("actionUseNativeCache"));
      QVERIFY(action);
      QVERIFY(action->isCheckable());
      QVERIFY(action->isChecked());  // on by default
      QMenu* menu = w.findChild<QMenu*>(QStringLiteral("settingsMenu"));
      QVERIFY(menu);
      menu->popup(w.mapToGlobal(QPoint(200, 30)));
      QVERIFY(QTest::qWaitForWindowExposed(menu));
      menu->grab().save(QDir::temp().filePath(QStringLiteral("sensode-settings-menu.png")));
      menu->close();
      action->setChecked(false);
      QVERIFY(w.openModel(kRepressilator));
      TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
      QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
      QTest::qWait(300);  // the background thread's tcc, had it used the cache
      QVERIFY(QDir(cacheDir.path()).entryList(QDir::Files).isEmpty());
    }
    MainWindow again(testing::testWindowOptions());
    auto* action = again.findChild<QAction*>(QStringLiteral("actionUseNativeCache"));
    QVERIFY(!action->isChecked());  // remembered
    action->setChecked(true);
    QVERIFY(again.openModel(model));
    TaskPanel* panel = again.openTask(QStringLiteral("timecourse"));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    QTRY_COMPARE_WITH_TIMEOUT(
        QDir(cacheDir.path()).entryList({QStringLiteral("*.entry")}, QDir::Files).size(), 1, 20000);
    qputenv("SENSODE_CACHE_DIR", previous);
  }

  void sensitivitiesTaskInTheWindow() {
    QTemporaryDir dir;
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    QVERIFY(w.tasksMenu()->findChild<QAction*>(QStringLiteral("task_sensitivities")));
    TaskPanel* panel = w.openTask(QStringLiteral("sensitivities"));
    QVERIFY(panel);
    panel->setupWidget()->setSettings({{"method", "cvodes"}, {"t_end", 20.0}, {"points", 21},
                                       {"rtol", 1e-8}, {"atol", 1e-12}, {"scaled", true},
                                       {"parameters", QJsonArray{"alpha", "n"}}});
    QCOMPARE(panel->setupWidget()->settings().value("parameters").toArray(), (QJsonArray{"alpha", "n"}));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

    const auto m = model::importSbmlFile(kRepressilator.toStdString());
    tasks::SensitivityProblem problem;
    problem.model = std::make_shared<symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
    for (int i = 0; i < 21; ++i) problem.times.push_back(20.0 * i / 20);
    problem.parameters = {"alpha", "n"};
    tasks::SensitivityOptions options;
    options.method = tasks::SensitivityMethod::Cvodes;
    options.integrator.rtol = 1e-8;
    options.integrator.atol = 1e-12;
    options.scaled = true;
    const tasks::SensitivityResult ref = tasks::runSensitivities(problem, options);

    auto* table = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Table")));
    QVERIFY(table);
    auto* model = qobject_cast<plugin::SensitivityTableModel*>(table->sourceModel());
    QVERIFY(model);
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model->rowCount(), int(ref.values.size()));
    for (int row = 0; row < model->rowCount(); ++row) {
      QVERIFY(model->data(model->index(row, 3), Qt::UserRole).toDouble() == ref.values[std::size_t(row)]);
    }
    const QString csv = dir.filePath(QStringLiteral("s.csv"));
    QString why;
    QVERIFY2(panel->exportResult(table, QStringLiteral("csv"), csv, &why), qPrintable(why));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readLine().trimmed(), QByteArray("time,variable,parameter,value"));
    const QJsonObject p = testing::readJsonFile(TaskPanel::provenancePath(csv));
    QVERIFY(p.value("scaled").toBool());
    QCOMPARE(p.value("task").toObject().value("id").toString(), QStringLiteral("sensitivities"));

    // The chart plots one parameter at a time, opening on the one with the largest effect.
    auto* chartTab = panel->resultView(QStringLiteral("Chart"));
    auto* chooser = chartTab->findChild<QComboBox*>(QStringLiteral("sensitivityParameter"));
    QVERIFY(chooser);
    QCOMPARE(chooser->count(), 2);
    const int largest = int(tasks::mostInfluentialParameter(ref, 1e-12));
    QCOMPARE(chooser->currentIndex(), largest);
    auto* chart = chartTab->findChild<plugin::TimeSeriesChartView*>();
    QVERIFY(chart && chart->series());
    QVERIFY(chart->series()->at(10, 0) == ref.at(10, 0, std::size_t(largest)));
    chooser->setCurrentIndex(1 - largest);
    QVERIFY(chart->series()->at(10, 0) == ref.at(10, 0, std::size_t(1 - largest)));
    QVERIFY2(panel->exportResult(chartTab, QStringLiteral("svg"), dir.filePath(QStringLiteral("s.svg")), &why),
             qPrintable(why));
  }

  void sbmlSupportTableIsShipped() {
    gui::SbmlSupportDialog dialog;
    QVERIFY2(dialog.errorString().isEmpty(), qPrintable(dialog.errorString()));
    QAbstractItemModelTester tester(dialog.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(dialog.model()->rowCount() > 20);
    bool species = false;
    for (int r = 0; r < dialog.model()->rowCount(); ++r) {
      if (dialog.model()->data(dialog.model()->index(r, 0)).toString() == QStringLiteral("Species")) {
        species = true;
        QVERIFY(dialog.model()->data(dialog.model()->index(r, 1)).toInt() > 0);
      }
    }
    QVERIFY(species);

    MainWindow w(testing::testWindowOptions());
    QAction* action = w.findChild<QAction*>(QStringLiteral("actionSbmlSupport"));
    QVERIFY(action);
    action->trigger();
    QTRY_VERIFY(w.findChild<gui::SbmlSupportDialog*>());
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
