// SPDX-License-Identifier: MIT
// The PEtab objective and gradient task (id ssgradient) in the host window, offscreen, with the
// real widgets and the sensode_tasks plugin (linked statically): open a PEtab problem into the
// browser, run the task by clicking Run for each method and compare its table with
// petab::evaluateObjective for the same settings (bit for bit), evaluate at edited parameter
// values, read the steady-state diagnostics as the view draws them, plot a time-course
// problem's measurements against the simulation per condition, export CSV/PNG/SVG with
// provenance, cancel a long run within 0.2 s with the previous results left on screen, and run
// on a problem chosen while an SBML model is open.
// With SENSODE_SCREENSHOT_DIR set, each result tab is saved there as a PNG (for the docs).
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QChart>
#include <QComboBox>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QLegend>
#include <QLegendMarker>
#include <QXYSeries>
#include <QCryptographicHash>
#include <QJsonDocument>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/common/errors.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"
#include "gui/main_window.h"
#include "gui/model_browser.h"
#include "gui/model_table_model.h"
#include "gui/task_panel.h"
#include "gui_test_helpers.h"
#include "plugin/gradient/gradient_task.h"
#include "plugin/gradient/measurement_chart_view.h"
#include "plugin/models/number_format.h"
#include "plugin/models/record_table_model.h"
#include "plugin/views/bar_chart_view.h"
#include "plugin/views/table_result_view.h"

// sensode_tasks_static is imported by linking it (qt_add_plugin's initializer library).

using namespace sensode;
using gui::MainWindow;
using gui::TaskPanel;

namespace {

const QString kBlasi =
    QStringLiteral(SENSODE_SHARED_DIR "/petab/Blasi_CellSystems2016/Blasi_CellSystems2016.yaml");
const QString kZheng = QStringLiteral(SENSODE_SHARED_DIR "/petab/Zheng_PNAS2012/Zheng_PNAS2012.yaml");
const QString kFujita =
    QStringLiteral(SENSODE_SHARED_DIR "/petab/Fujita_SciSignal2010/Fujita_SciSignal2010.yaml");
const QString kBoehm =
    QStringLiteral(SENSODE_SHARED_DIR "/petab/Boehm_JProteomeRes2014/Boehm_JProteomeRes2014.yaml");
const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");
const QString kTwoGels = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/two_gels/two_gels.yaml");



plugin::RecordTableModel* recordModel(TaskPanel* panel, const QString& title) {
  auto* view = dynamic_cast<plugin::TableResultView*>(panel->resultView(title));
  return view ? qobject_cast<plugin::RecordTableModel*>(view->sourceModel()) : nullptr;
}



// The first steady state's value of a diagnostic (rows are diagnostics, columns steady states).
QString diagnostic(const plugin::RecordTableModel* m, const char* label) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->data(m->index(r, 0), Qt::UserRole).toString() == QLatin1String(label))
      return m->data(m->index(r, 1), Qt::UserRole).toString();
  return QStringLiteral("<no row %1>").arg(QLatin1String(label));
}

// The chart's series of that name (nullptr when absent).
QXYSeries* seriesNamed(QChart* chart, const QString& name) {
  for (QAbstractSeries* s : chart->series())
    if (s->name() == name) return qobject_cast<QXYSeries*>(s);
  return nullptr;
}

// Where the view draws a cell's text (viewport coordinates): its display text, at the cell's
// alignment, inside the cell less the item margins.
QRect shownTextRect(const QTableView* view, const QModelIndex& index) {
  const QString text = index.data(Qt::DisplayRole).toString();
  const QFontMetrics fm(view->font());
  const int margin = view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 1;
  const QRect cell = view->visualRect(index).adjusted(margin, 0, -margin, 0);
  const auto alignment = Qt::Alignment(index.data(Qt::TextAlignmentRole).toInt());
  return QStyle::alignedRect(view->layoutDirection(), alignment,
                             QSize(fm.horizontalAdvance(text), fm.height()), cell);
}

// Saves the window with each result tab in front when SENSODE_SCREENSHOT_DIR is set.
void screenshots(MainWindow& w, TaskPanel* panel, const QString& stem) {
  const QString dir = qEnvironmentVariable("SENSODE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  w.resize(1280, 800);
  for (api::TaskResultView* view : panel->resultViews()) {
    if (view->placement() != api::TaskResultView::Placement::Tab) continue;
    auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget());
    if (tabs) tabs->setCurrentWidget(view);
    QCoreApplication::processEvents();
    const QString name = QStringLiteral("%1/%2-%3.png").arg(dir, stem, view->title().toLower().replace(' ', '-'));
    w.grab().save(name);
  }
}

}  // namespace

class TestGradientTask : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("SensodeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_gradient_task"));
    QSettings().clear();
  }

  void opensThePetabProblemIntoTheBrowser() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kBlasi));
    QCOMPARE(w.session().format, QStringLiteral("petab"));
    gui::ModelBrowser* b = w.modelBrowser();
    const QStringList titles = b->tableTitles();
    QCOMPARE(titles.mid(0, 3), (QStringList{QStringLiteral("PEtab parameters"),
                                            QStringLiteral("Conditions"), QStringLiteral("Observables")}));
    QVERIFY(titles.contains(QStringLiteral("Species")));
    const petab::Problem p = petab::loadProblem(kBlasi.toStdString());
    QCOMPARE(b->tableModel(QStringLiteral("PEtab parameters"))->rowCount(), int(p.parameters.size()));
    QCOMPARE(b->tableModel(QStringLiteral("Observables"))->rowCount(), int(p.observables.size()));
    QAbstractItemModelTester tester(b->tableModel(QStringLiteral("PEtab parameters")),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
  }

  void gradientEqualsTheCore_data() {
    QTest::addColumn<QString>("method");
    QTest::newRow("ssasa") << QStringLiteral("ssasa");
    QTest::newRow("forward") << QStringLiteral("forward");
    QTest::newRow("adjoint") << QStringLiteral("adjoint");
    QTest::newRow("fd") << QStringLiteral("fd");
  }
  void gradientEqualsTheCore() {
    QFETCH(QString, method);
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kBlasi));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    QVERIFY(panel);
    panel->setupWidget()->setSettings({{"method", method}, {"rtol", 1e-10}, {"atol", 1e-12},
                                       {"fd_step", 1e-4}, {"parameters", QJsonObject{}}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

    const petab::Problem p = petab::loadProblem(kBlasi.toStdString());
    petab::ObjectiveOptions o;
    o.integrator.rtol = 1e-10;
    o.integrator.atol = 1e-12;
    o.fdStep = 1e-4;
    const auto m = *petab::gradientMethodFromString(method.toStdString());
    const petab::ObjectiveResult ref =
        petab::evaluateObjective(p, petab::nominalScaledParameters(p), m, o);

    plugin::RecordTableModel* table = recordModel(panel, QStringLiteral("Table"));
    QVERIFY(table);
    QAbstractItemModelTester tester(table, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(table->rowCount(), int(ref.gradient.size()));
    for (int r = 0; r < table->rowCount(); ++r) {
      QCOMPARE(table->data(table->index(r, 0), Qt::UserRole).toString(),
               QString::fromStdString(ref.parameterIds[std::size_t(r)]));
      QVERIFY(table->data(table->index(r, 2), Qt::UserRole).toDouble() == ref.parameters[std::size_t(r)]);
      QVERIFY2(table->data(table->index(r, 4), Qt::UserRole).toDouble() == ref.gradient[std::size_t(r)],
               qPrintable(QString::number(r)));
    }
    // The chart draws the same numbers, in the same order.
    auto* chart = dynamic_cast<plugin::BarChartView*>(panel->resultView(QStringLiteral("Gradient")));
    QVERIFY(chart);
    QCOMPARE(chart->data().values.size(), qsizetype(ref.gradient.size()));
    QVERIFY(chart->data().values.last() == ref.gradient.back());

    // One steady state (Blasi: post-equilibration of its one condition) with its diagnostics.
    plugin::RecordTableModel* steady = recordModel(panel, QStringLiteral("Steady states"));
    QVERIFY(steady);
    QCOMPARE(steady->columnCount(), int(ref.equilibrations.size()) + 1);
    QVERIFY(steady->columnCount() >= 2);
    QVERIFY(steady->headerData(1, Qt::Horizontal).toString().contains(QStringLiteral("steady-state data")));
    QCOMPARE(diagnostic(steady, "found"), QStringLiteral("yes"));
    QCOMPARE(diagnostic(steady, "path"), QString::fromStdString(ref.equilibrations[0].solution.path));
    QVERIFY(diagnostic(steady, "conservation laws").contains('='));
    QCOMPARE(diagnostic(steady, "stability"), QStringLiteral("stable"));
    QVERIFY(diagnostic(steady, "cond(J_r)").toDouble() == ref.equilibrations[0].solution.conditionEstimate);
    if (method == QLatin1String("ssasa")) screenshots(w, panel, QStringLiteral("ssgradient"));
  }

  // What the Steady states tab shows, read off the view as a user sees it: every numeric
  // diagnostic has a text equal to the core's number, drawn inside the visible part of the table
  // in the window size of the screenshots. (The numbers were once right-aligned at the far edge
  // of a column widened by the conservation laws, off screen: blank cells to the eye.)
  void steadyStateDiagnosticsAreShown() {
    MainWindow w(testing::testWindowOptions());
    w.resize(1450, 880);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openModel(kBlasi));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    panel->setupWidget()->setSettings({{"method", "ssasa"}, {"rtol", 1e-10}, {"atol", 1e-12},
                                       {"parameters", QJsonObject{}}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    auto* view = dynamic_cast<plugin::TableResultView*>(panel->resultView(QStringLiteral("Steady states")));
    QVERIFY(view);
    auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget());
    QVERIFY(tabs);
    tabs->setCurrentWidget(view);
    QCoreApplication::processEvents();

    const petab::Problem p = petab::loadProblem(kBlasi.toStdString());
    const petab::ObjectiveResult ref = petab::evaluateObjective(
        p, petab::nominalScaledParameters(p), petab::GradientMethod::Ssasa);
    QCOMPARE(ref.equilibrations.size(), std::size_t(1));
    const steadystate::SteadyStateSolution& s = ref.equilibrations[0].solution;
    const QList<std::pair<QString, QString>> expected = {
        {QStringLiteral("Newton iterations"), QString::number(s.newtonIterations)},
        {QStringLiteral("Newton runs"), QString::number(s.newtonRuns)},
        {QStringLiteral("simulation steps"), QString::number(s.simulationSteps)},
        {QStringLiteral("simulated to t"), plugin::shortNumber(s.simulatedTime)},
        {QStringLiteral("residual ‖f_r(x*)‖_w"), plugin::shortNumber(s.residualNorm)},
        {QStringLiteral("cond(J_r)"), plugin::shortNumber(s.conditionEstimate)},
        {QStringLiteral("max Re λ(J_r)"), plugin::shortNumber(s.maxRealEigenvalue)},
        {QStringLiteral("found"), QStringLiteral("yes")},
        {QStringLiteral("stability"), QStringLiteral("stable")},
    };
    QTableView* table = view->tableView();
    const QAbstractItemModel* shown = table->model();
    const QRect visible = table->viewport()->rect();
    for (const auto& [label, text] : expected) {
      int row = -1;
      for (int r = 0; r < shown->rowCount(); ++r)
        if (shown->index(r, 0).data().toString() == label) row = r;
      QVERIFY2(row >= 0, qPrintable(label));
      const QModelIndex cell = shown->index(row, 1);
      QCOMPARE(cell.data(Qt::DisplayRole).toString(), text);
      QVERIFY2(!text.trimmed().isEmpty(), qPrintable(label));
      const QRect drawn = shownTextRect(table, cell);
      QVERIFY2(visible.contains(drawn),
               qPrintable(QStringLiteral("%1: text '%2' drawn at x %3..%4, visible 0..%5")
                              .arg(label, text).arg(drawn.left()).arg(drawn.right())
                              .arg(visible.right())));
    }
    QVERIFY(s.newtonIterations > 0 || s.simulationSteps > 0);
    QVERIFY(s.conditionEstimate >= 1);
  }

  // A time-course problem (Fujita: 6 conditions x 3 observables x 8 times) runs in the task, and
  // the Observables tab plots, per condition, one measured and one simulated point per
  // measurement row: the problem's values and the core's simulated values, in time order.
  void timeCourseProblemPlotsMeasurementsAndSimulation() {
    QTemporaryDir dir;
    MainWindow w(testing::testWindowOptions());
    w.resize(1450, 880);
    w.show();
    QVERIFY(w.openModel(kFujita));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    QCOMPARE(panel->task().displayName, QStringLiteral("PEtab objective and gradient"));
    panel->setupWidget()->setSettings({{"method", "forward"}, {"rtol", 1e-8}, {"atol", 1e-10},
                                       {"parameters", QJsonObject{}}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

    const petab::Problem p = petab::loadProblem(kFujita.toStdString());
    petab::ObjectiveOptions o;
    o.integrator.rtol = 1e-8;
    o.integrator.atol = 1e-10;
    const petab::ObjectiveResult ref = petab::evaluateObjective(
        p, petab::nominalScaledParameters(p), petab::GradientMethod::Forward, o);
    QCOMPARE(ref.simulated.size(), p.measurements.size());

    auto* view = dynamic_cast<plugin::MeasurementChartView*>(panel->resultView(QStringLiteral("Observables")));
    QVERIFY(view);
    // The conditions the measurement table uses (its condition table defines 16), in order.
    QStringList used;
    for (const petab::Measurement& m : p.measurements) {
      const QString id = QString::fromStdString(p.conditions[std::size_t(m.simulationCondition)].id);
      if (!used.contains(id)) used << id;
    }
    QCOMPARE(used.size(), qsizetype(6));
    QCOMPARE(view->experiments(), used);
    int checkedRows = 0;
    for (int e = 0; e < view->experiments().size(); ++e) {
      view->setExperiment(e);
      const QString condition = view->experiments()[e];
      for (const petab::Observable& obs : p.observables) {
        // The rows of this condition and observable, in time order (stable: table order).
        std::vector<std::size_t> rows;
        for (std::size_t i = 0; i < p.measurements.size(); ++i) {
          const petab::Measurement& m = p.measurements[i];
          if (QString::fromStdString(p.conditions[std::size_t(m.simulationCondition)].id) == condition &&
              p.observables[std::size_t(m.observable)].id == obs.id)
            rows.push_back(i);
        }
        std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
          return p.measurements[a].time < p.measurements[b].time;
        });
        const QString id = QString::fromStdString(obs.id);
        QXYSeries* measured = seriesNamed(view->chart(), id + QStringLiteral(" measured"));
        QXYSeries* simulated = seriesNamed(view->chart(), id + QStringLiteral(" simulated"));
        QVERIFY2(measured && simulated, qPrintable(condition + ' ' + id));
        QCOMPARE(measured->count(), int(rows.size()));
        QCOMPARE(rows.size(), std::size_t(8));
        // The simulated curve: the fine grid (301 times from 0) with the measurement times on
        // it, where it takes the objective's values up to the two runs' integration error (a
        // run at other output times, rtol 1e-8 over t = 0–60 with the step input: measured up to
        // 1.5e-5 relative).
        QVERIFY2(simulated->count() >= 301, qPrintable(QString::number(simulated->count())));
        QCOMPARE(simulated->at(0).x(), 0.0);
        for (int k = 0; k < int(rows.size()); ++k) {
          const std::size_t i = rows[std::size_t(k)];
          QVERIFY(measured->at(k).x() == p.measurements[i].time);
          QVERIFY(measured->at(k).y() == p.measurements[i].value);
          const QList<QPointF> curve = simulated->points();
          const auto at = std::find_if(curve.begin(), curve.end(), [&](const QPointF& q) {
            return q.x() == p.measurements[i].time;
          });
          QVERIFY(at != curve.end());
          QVERIFY2(std::abs(at->y() - ref.simulated[i]) <= 1e-4 * std::abs(ref.simulated[i]) + 1e-9,
                   qPrintable(QStringLiteral("%1 %2 row %3: %4 vs %5").arg(condition, id).arg(i)
                                  .arg(at->y()).arg(ref.simulated[i])));
          ++checkedRows;
        }
      }
      // One σ bar per measurement (Fujita: normal noise on the linear scale): m ± σ.
      const QList<QLineF> bars = view->sigmaBars();
      QCOMPARE(bars.size(), qsizetype(24));
      for (const QLineF& bar : bars) {
        bool matched = false;
        for (std::size_t i = 0; i < p.measurements.size() && !matched; ++i) {
          const petab::Measurement& m = p.measurements[i];
          matched = QString::fromStdString(p.conditions[std::size_t(m.simulationCondition)].id) == condition &&
                    bar.x1() == m.time && bar.y1() == m.value - ref.sigma[i] &&
                    bar.y2() == m.value + ref.sigma[i];
        }
        QVERIFY2(matched, qPrintable(QStringLiteral("%1: bar at t = %2").arg(condition).arg(bar.x1())));
      }
    }
    QCOMPARE(checkedRows, int(p.measurements.size()));

    // A legend entry hides and shows one observable: its measured and simulated series.
    const QString first = QString::fromStdString(p.observables.front().id);
    QXYSeries* measured = seriesNamed(view->chart(), first + QStringLiteral(" measured"));
    QXYSeries* simulated = seriesNamed(view->chart(), first + QStringLiteral(" simulated"));
    const QList<QLegendMarker*> markers = view->chart()->legend()->markers(measured);
    QCOMPARE(markers.size(), 1);
    QCOMPARE(markers.first()->label(), first);
    QVERIFY(!view->chart()->legend()->markers(simulated).first()->isVisible());
    emit markers.first()->clicked();
    QVERIFY(!measured->isVisible() && !simulated->isVisible());
    emit markers.first()->clicked();
    QVERIFY(measured->isVisible() && simulated->isVisible());

    // Exports: the chart as PNG/SVG and every row as CSV, each with its provenance.
    const QString csv = dir.filePath(QStringLiteral("m.csv"));
    const QString png = dir.filePath(QStringLiteral("m.png"));
    const QString svg = dir.filePath(QStringLiteral("m.svg"));
    QString why;
    for (const auto& [format, file] : {std::pair{QStringLiteral("csv"), csv}, std::pair{QStringLiteral("png"), png},
                                       std::pair{QStringLiteral("svg"), svg}}) {
      QVERIFY2(panel->exportResult(view, format, file, &why), qPrintable(why));
      const QJsonObject prov = testing::readJsonFile(TaskPanel::provenancePath(file));
      QCOMPARE(prov.value("task").toObject().value("id").toString(), QStringLiteral("ssgradient"));
      QCOMPARE(prov.value("run").toObject().value("objective").toDouble(), ref.objective);
    }
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first(), QStringLiteral("observableId,preequilibrationConditionId,"
                                           "simulationConditionId,time,measurement,simulation,sigma"));
    QCOMPARE(lines.size(), int(p.measurements.size()) + 1);
    for (std::size_t i = 0; i < p.measurements.size(); ++i) {
      const QStringList cells = lines[int(i) + 1].split(',');
      QVERIFY(cells[4].toDouble() == p.measurements[i].value);
      QVERIFY(cells[5].toDouble() == ref.simulated[i]);
      QVERIFY(cells[6].toDouble() == ref.sigma[i]);
    }
    QImage image(png);
    QVERIFY(!image.isNull() && image.width() >= 800);
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());

    // No steady state in this problem: the Steady states tab says so.
    plugin::RecordTableModel* steady = recordModel(panel, QStringLiteral("Steady states"));
    QCOMPARE(steady->rowCount(), 1);
    QVERIFY(steady->data(steady->index(0, 1)).toString().startsWith(QStringLiteral("none")));
  }

  // Boehm (one condition, three observables, 16 times each): the plot for the docs, and the
  // objective against the benchmark collection's reference log-likelihood.
  void boehmObservablesForTheDocs() {
    MainWindow w(testing::testWindowOptions());
    w.resize(1450, 880);
    w.show();
    QVERIFY(w.openModel(kBoehm));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    panel->setupWidget()->setSettings({{"method", "adjoint"}, {"rtol", 1e-10}, {"atol", 1e-12},
                                       {"parameters", QJsonObject{}}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    auto* view = dynamic_cast<plugin::MeasurementChartView*>(panel->resultView(QStringLiteral("Observables")));
    QVERIFY(view);
    QCOMPARE(view->experiments(), QStringList{QStringLiteral("model1_data1")});
    for (const char* id : {"pSTAT5A_rel", "pSTAT5B_rel", "rSTAT5A_rel"}) {
      QXYSeries* measured = seriesNamed(view->chart(), QLatin1String(id) + QStringLiteral(" measured"));
      QXYSeries* simulated = seriesNamed(view->chart(), QLatin1String(id) + QStringLiteral(" simulated"));
      QVERIFY(measured && simulated);
      QCOMPARE(measured->count(), 16);
      QVERIFY(simulated->count() >= 301);
    }
    // ../shared/petab/README.md: log-likelihood -138.22199693517703 at the nominal parameters.
    const auto* r = dynamic_cast<const plugin::gradient::Result*>(panel->shownResult().get());
    QVERIFY(r);
    QVERIFY2(std::abs(r->core()->objective - 138.22199693517703) < 1e-3,
             qPrintable(QString::number(r->core()->objective, 'g', 17)));
    screenshots(w, panel, QStringLiteral("petab-boehm"));
  }

  // Two gels with their own scale parameters (tests/data/petab/two_gels: x = 2·e^{−0.3·t} read as
  // 1·x and 3·x, their rows interleaved in the table): two simulated curves on the fine grid,
  // each on its closed form, and the measurements split the same way — not one line jumping
  // between the gels at every time.
  void twoScaleParametersDrawTwoCurves() {
    MainWindow w(testing::testWindowOptions());
    w.resize(1280, 800);
    w.show();
    QVERIFY(w.openModel(kTwoGels));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    panel->setupWidget()->setSettings({{"method", "forward"}, {"rtol", 1e-10}, {"atol", 1e-12},
                                       {"parameters", QJsonObject{}}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    auto* view = dynamic_cast<plugin::MeasurementChartView*>(panel->resultView(QStringLiteral("Observables")));
    QVERIFY(view);
    int curves = 0;
    for (QAbstractSeries* s : view->chart()->series())
      curves += s->name().endsWith(QStringLiteral(" simulated")) ? 1 : 0;
    QCOMPARE(curves, 2);
    const double scales[] = {1, 3};
    const char* groups[] = {"scale_gel1", "scale_gel2"};
    for (int g = 0; g < 2; ++g) {
      const QString label = QStringLiteral("obs_x [%1]").arg(QLatin1String(groups[g]));
      QXYSeries* measured = seriesNamed(view->chart(), label + QStringLiteral(" measured"));
      QXYSeries* simulated = seriesNamed(view->chart(), label + QStringLiteral(" simulated"));
      QVERIFY2(measured && simulated, qPrintable(label));
      QCOMPARE(measured->count(), 7);
      QVERIFY(simulated->count() >= 301);
      for (const QPointF& q : simulated->points()) {
        const double exact = scales[g] * 2 * std::exp(-0.3 * q.x());
        QVERIFY2(std::abs(q.y() - exact) <= 1e-7 * exact,
                 qPrintable(QStringLiteral("%1 at t = %2: %3 vs %4").arg(label).arg(q.x()).arg(q.y()).arg(exact)));
      }
      // Monotone: a decay, no sawtooth.
      for (int k = 1; k < simulated->count(); ++k) QVERIFY(simulated->at(k).y() < simulated->at(k - 1).y());
      // Different dashes (and marker shapes) per group within the observable's colour.
      QCOMPARE(simulated->pen().style(), g == 0 ? Qt::SolidLine : Qt::DashLine);
    }
    // One legend entry per group: the measured series' markers shown, the simulated ones hidden.
    // (A marker's visibility is its graphics item's: the tab in front and laid out, which the
    // event loop does in its own time.)
    panel->showResultView(view);
    const auto shownMarkers = [&] {
      int shown = 0;
      for (QLegendMarker* m : view->chart()->legend()->markers()) shown += m->isVisible() ? 1 : 0;
      return shown;
    };
    QTRY_COMPARE_WITH_TIMEOUT(shownMarkers(), 2, 10000);
    for (QLegendMarker* m : view->chart()->legend()->markers())
      QCOMPARE(m->isVisible(), m->series()->name().endsWith(QStringLiteral(" measured")));
  }

  // The symmetric-log axis title is the transform with its constant, short enough to be drawn
  // whole at 1280 px; the quantity is in the chart title.
  void gradientAxisTitleIsNotCut() {
    MainWindow w(testing::testWindowOptions());
    w.resize(1280, 800);
    w.show();
    QVERIFY(w.openModel(kBoehm));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    panel->setupWidget()->setSettings({{"method", "forward"}, {"parameters", QJsonObject{}}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    auto* chart = dynamic_cast<plugin::BarChartView*>(panel->resultView(QStringLiteral("Gradient")));
    QVERIFY(chart);
    if (auto* tabs = qobject_cast<QTabWidget*>(chart->parentWidget()->parentWidget())) tabs->setCurrentWidget(chart);
    // The tab in front and laid out at the window's size.
    w.grab();  // lays the chart out
    QTRY_VERIFY(chart->chart()->plotArea().width() > 250);
    QVERIFY(chart->symlogBox()->isChecked());
    QAbstractAxis* axis = chart->chart()->axes(Qt::Horizontal).first();
    const QString title = axis->titleText();
    double largest = 0;
    for (double v : chart->data().values) largest = std::max(largest, std::abs(v));
    QVERIFY2(title.endsWith(QStringLiteral("c = ") + QString::number(largest / 100, 'g', 3)), qPrintable(title));
    const int needed = QFontMetrics(axis->titleFont()).horizontalAdvance(title);
    QVERIFY2(needed < chart->chart()->plotArea().width(),
             qPrintable(QStringLiteral("%1 px for '%2' in %3 px").arg(needed).arg(title).arg(chart->chart()->plotArea().width())));
    QVERIFY(chart->chart()->title().contains(chart->data().valueTitle));
    // Linear: the quantity itself is the axis title.
    chart->setSymlog(false);
    QCOMPARE(chart->chart()->axes(Qt::Horizontal).first()->titleText(), chart->data().valueTitle);
  }

  // Edited values in the set-up table reach the core; only edited ids go into the settings.
  void editedParameterValues() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kBlasi));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    auto* values = panel->setupWidget()->findChild<QTableWidget*>(QStringLiteral("parameterValues"));
    QVERIFY(values);
    const petab::Problem p = petab::loadProblem(kBlasi.toStdString());
    const std::vector<int> est = petab::estimatedParameters(p);
    QCOMPARE(values->rowCount(), int(est.size()));
    QCOMPARE(values->item(1, 0)->text(), QString::fromStdString(p.parameters[std::size_t(est[1])].id));
    values->item(1, 4)->setText(QStringLiteral("0.05"));
    const QJsonObject edited = panel->setupWidget()->settings().value("parameters").toObject();
    QCOMPARE(edited.size(), 1);
    QCOMPARE(edited.value(values->item(1, 0)->text()).toDouble(), 0.05);
    panel->setupWidget()->setSettings({{"method", "ssasa"}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

    std::vector<double> q = petab::nominalScaledParameters(p);
    q[1] = petab::toScale(p.parameters[std::size_t(est[1])].scale, 0.05);
    const petab::ObjectiveResult ref = petab::evaluateObjective(p, q, petab::GradientMethod::Ssasa);
    plugin::RecordTableModel* table = recordModel(panel, QStringLiteral("Table"));
    QCOMPARE(table->data(table->index(1, 5), Qt::UserRole).toString(), QStringLiteral("edited"));
    QVERIFY(table->data(table->index(1, 3), Qt::UserRole).toDouble() == 0.05);
    for (int r = 0; r < table->rowCount(); ++r)
      QVERIFY(table->data(table->index(r, 4), Qt::UserRole).toDouble() == ref.gradient[std::size_t(r)]);

    // A value a log scale cannot take is named before the run and by the core.
    values->item(1, 4)->setText(QStringLiteral("abc"));
    QVERIFY(panel->setupWidget()->validate().contains(values->item(1, 0)->text()));
    QVERIFY_THROWS_EXCEPTION(InvalidOptions,
                             plugin::gradient::parameterRows(p, {{p.parameters[std::size_t(est[1])].id, -1.0}}, nullptr));
    QVERIFY_THROWS_EXCEPTION(InvalidOptions, plugin::gradient::parameterRows(p, {{"nope", 1.0}}, nullptr));
    // "Nominal values" resets the table.
    QTest::mouseClick(panel->setupWidget()->findChild<QPushButton*>(QStringLiteral("nominalValues")), Qt::LeftButton);
    QVERIFY(panel->setupWidget()->settings().value("parameters").toObject().isEmpty());
  }

  void exportsCarryProvenance() {
    QTemporaryDir dir;
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kBlasi));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    panel->setupWidget()->setSettings({{"method", "ssasa"}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const QString csv = dir.filePath(QStringLiteral("g.csv"));
    const QString png = dir.filePath(QStringLiteral("g.png"));
    const QString svg = dir.filePath(QStringLiteral("g.svg"));
    const QString ss = dir.filePath(QStringLiteral("ss.csv"));
    QString why;
    auto* chart = panel->resultView(QStringLiteral("Gradient"));
    QVERIFY2(panel->exportResult(panel->resultView(QStringLiteral("Table")), QStringLiteral("csv"), csv, &why), qPrintable(why));
    QVERIFY2(panel->exportResult(chart, QStringLiteral("png"), png, &why), qPrintable(why));
    QVERIFY2(panel->exportResult(chart, QStringLiteral("svg"), svg, &why), qPrintable(why));
    QVERIFY2(panel->exportResult(panel->resultView(QStringLiteral("Steady states")), QStringLiteral("csv"), ss, &why), qPrintable(why));

    const petab::Problem p = petab::loadProblem(kBlasi.toStdString());
    const petab::ObjectiveResult ref = petab::evaluateObjective(p, petab::nominalScaledParameters(p),
                                                                petab::GradientMethod::Ssasa);
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first(), QStringLiteral("parameter,scale,value (scale),value (linear),gradient,source"));
    QCOMPARE(lines.size(), int(ref.gradient.size()) + 1);
    for (std::size_t i = 0; i < ref.gradient.size(); ++i)
      QVERIFY(lines[int(i) + 1].split(',')[4].toDouble() == ref.gradient[i]);

    QImage image(png);
    QVERIFY(!image.isNull() && image.width() >= 800);
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 5)
      for (int x = 0; x < image.width(); x += 5) colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 5);
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    QVERIFY(s.readAll().contains(QByteArray::fromStdString(ref.parameterIds.front())));

    for (const QString& file : {csv, png, svg, ss}) {
      const QJsonObject prov = testing::readJsonFile(TaskPanel::provenancePath(file));
      QCOMPARE(prov.value("task").toObject().value("id").toString(), QStringLiteral("ssgradient"));
      QCOMPARE(prov.value("method").toString(), QStringLiteral("ssasa"));
      QCOMPARE(prov.value("model").toObject().value("sha256").toString(), testing::sha256OfFile(kBlasi));
      QCOMPARE(prov.value("model").toObject().value("format").toString(), QStringLiteral("petab"));
      QCOMPARE(prov.value("model").toObject().value("states").toInt(), p.model->nx());
      QCOMPARE(prov.value("petab").toObject().value("sbml_sha256").toString(),
               testing::sha256OfFile(QString::fromStdString(p.sbmlFile.string())));
      QVERIFY(prov.value("tolerances").toObject().contains("ss_rtol"));
      QCOMPARE(prov.value("run").toObject().value("objective").toDouble(), ref.objective);
      QCOMPARE(prov.value("export").toObject().value("sha256").toString(), testing::sha256OfFile(file));
    }
  }

  // Without steady-state data (Fujita_SciSignal2010: time courses only, no pre-equilibration,
  // no t = inf) ssASA computes exactly the standard adjoint, so the method list greys it with
  // the reason and selects "Standard adjoint", also over restored settings; with steady-state
  // data (Blasi) ssASA is offered and the default. The core agrees that the two are one method
  // there: the same gradient. At 1280x800 the panel fits and the window keeps its size.
  void methodOffersSsasaOnlyWithSteadyStates() {
    const QString fujita =
        QStringLiteral(SENSODE_SHARED_DIR "/petab/Fujita_SciSignal2010/Fujita_SciSignal2010.yaml");
    if (!QFileInfo::exists(fujita)) QSKIP("shared PEtab data not found");
    const petab::Problem p = petab::loadProblem(fujita.toStdString());
    for (const petab::Measurement& m : p.measurements)
      QVERIFY(m.preequilibrationCondition < 0 && std::isfinite(m.time));
    const std::vector<double> q = petab::nominalScaledParameters(p);
    const petab::ObjectiveResult ssasa = petab::evaluateObjective(p, q, petab::GradientMethod::Ssasa);
    const petab::ObjectiveResult adjoint = petab::evaluateObjective(p, q, petab::GradientMethod::Adjoint);
    QCOMPARE(ssasa.objective, adjoint.objective);
    for (std::size_t i = 0; i < ssasa.gradient.size(); ++i)
      QVERIFY2(std::abs(ssasa.gradient[i] - adjoint.gradient[i]) <= 1e-12 * (1 + std::abs(adjoint.gradient[i])),
               qPrintable(QStringLiteral("%1 vs %2").arg(ssasa.gradient[i], 0, 'g', 17).arg(adjoint.gradient[i], 0, 'g', 17)));

    MainWindow w(testing::testWindowOptions());
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QSize before = w.size();
    QVERIFY(w.openModel(fujita));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    auto* method = panel->setupWidget()->findChild<QComboBox*>(QStringLiteral("method"));
    QVERIFY(method);
    QCOMPARE(method->currentData().toString(), QStringLiteral("adjoint"));
    QCOMPARE(method->currentText(), QStringLiteral("Standard adjoint"));
    auto* items = qobject_cast<QStandardItemModel*>(method->model());
    QVERIFY(items);
    const QStandardItem* ssasaItem = items->item(method->findData(QStringLiteral("ssasa")));
    QVERIFY(!ssasaItem->isEnabled());
    QVERIFY2(ssasaItem->toolTip().contains(QStringLiteral("no steady-state data")), qPrintable(ssasaItem->toolTip()));
    panel->setupWidget()->setSettings({{"method", "ssasa"}});  // e.g. remembered from Blasi
    QCOMPARE(method->currentData().toString(), QStringLiteral("adjoint"));
    QStringList problems = testing::squeezedSettings(panel);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("standard adjoint")),
             qPrintable(w.statusBar()->currentMessage()));
    problems = testing::panelDoesNotFit(panel, w, before);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));

    QVERIFY(w.openModel(kBlasi));
    QVERIFY(items->item(method->findData(QStringLiteral("ssasa")))->isEnabled());
    panel->setupWidget()->setSettings({{"method", "ssasa"}});
    QCOMPARE(method->currentData().toString(), QStringLiteral("ssasa"));
    MainWindow::Options fresh = testing::testWindowOptions();
    fresh.useSettings = false;
    MainWindow clean(fresh);
    QVERIFY(clean.openModel(kBlasi));
    auto* blasiMethod = clean.openTask(QStringLiteral("ssgradient"))->setupWidget()->findChild<QComboBox*>(QStringLiteral("method"));
    QCOMPARE(blasiMethod->currentData().toString(), QStringLiteral("ssasa"));
  }

  void cancelStopsFastAndKeepsThePreviousResults() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kZheng));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    panel->setupWidget()->setSettings({{"method", "ssasa"}});
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const auto before = panel->shownResult();
    plugin::RecordTableModel* table = recordModel(panel, QStringLiteral("Table"));
    const double g0 = table->data(table->index(0, 4), Qt::UserRole).toDouble();

    // Finite differences at tight tolerances: many objective evaluations.
    panel->setupWidget()->setSettings({{"method", "fd"}, {"rtol", 1e-13}, {"atol", 1e-16}});
    QSignalSpy finished(panel, &TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(panel->isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(panel->progressBar()->value() > 0, 30000);
    QVERIFY2(panel->isRunning(), "the run ended before it could be cancelled");
    SENSODE_VERIFY_CANCEL_WITHIN(panel, finished, 0.2);
    QCOMPARE(panel->shownResult(), before);
    QVERIFY(table->data(table->index(0, 4), Qt::UserRole).toDouble() == g0);
    QVERIFY(w.lastError().isEmpty());
  }

  // With an SBML model open the task asks for a problem, and runs on the one chosen.
  void runsOnAChosenProblem() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("ssgradient"));
    // (Tolerances explicit: the host restores the settings an earlier test ran with.)
    panel->setupWidget()->setSettings({{"problem", QString()}, {"method", "forward"},
                                       {"rtol", 1e-10}, {"atol", 1e-12}});
    QVERIFY(panel->setupWidget()->validate().contains(QStringLiteral("PEtab problem")));
    auto* file = panel->setupWidget()->findChild<QLineEdit*>(QStringLiteral("problemFile"));
    QVERIFY(file);
    panel->setupWidget()->setSettings({{"problem", kZheng}});
    QVERIFY(panel->setupWidget()->validate().isEmpty());
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const petab::Problem p = petab::loadProblem(kZheng.toStdString());
    const petab::ObjectiveResult ref = petab::evaluateObjective(p, petab::nominalScaledParameters(p),
                                                                petab::GradientMethod::Forward);
    plugin::RecordTableModel* table = recordModel(panel, QStringLiteral("Table"));
    QCOMPARE(table->rowCount(), int(ref.gradient.size()));
    QVERIFY(table->data(table->index(2, 4), Qt::UserRole).toDouble() == ref.gradient[2]);
    plugin::RecordTableModel* steady = recordModel(panel, QStringLiteral("Steady states"));
    QVERIFY(steady->headerData(1, Qt::Horizontal).toString().contains(QStringLiteral("pre-equilibration")));
    QCOMPARE(diagnostic(steady, "found"), QStringLiteral("yes"));
    // Pre-equilibrated experiments are named by both conditions.
    auto* observables = dynamic_cast<plugin::MeasurementChartView*>(panel->resultView(QStringLiteral("Observables")));
    QVERIFY(observables);
    QVERIFY(!observables->experiments().isEmpty());
    for (const QString& e : observables->experiments())
      QVERIFY2(e.startsWith(QStringLiteral("preequilibration → ")), qPrintable(e));
    screenshots(w, panel, QStringLiteral("ssgradient-zheng"));
  }
};

QTEST_MAIN(TestGradientTask)
#include "tst_gradient_task.moc"
