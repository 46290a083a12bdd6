// SPDX-License-Identifier: MIT
// The sensitivity task's Heat map and Compare views in the host window, offscreen, with the
// real widgets: the heat map shows exactly the core's scaled sensitivities at the chosen time;
// "Compare methods" runs the checked methods with one click on Run, and its table equals
// compareSensitivities of the same core runs; exports and provenance; a cancel during the
// comparison stops it and leaves the previous results. With SENSODE_SCREENSHOT_DIR set, the
// Heat map and Compare tabs are saved there (for the docs).
#include <QCheckBox>
#include <QComboBox>
#include <QGroupBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <chrono>
#include <cmath>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/sensitivity_comparison.h"
#include "gui/main_window.h"
#include "gui/task_panel.h"
#include "gui_test_helpers.h"
#include "plugin/models/record_table_model.h"
#include "plugin/runner/task_runner.h"
#include "plugin/sensitivities/sensitivities_task.h"
#include "plugin/sensitivities/sensitivity_views.h"
#include "plugin/views/heat_map_widget.h"
#include "plugin/views/key_value_view.h"
#include "plugin/views/time_series_chart_view.h"

using namespace sensode;
using gui::MainWindow;
using gui::TaskPanel;

namespace {

const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");



// The core run the task makes for these settings (times 0..20 step 1, three parameters).
tasks::SensitivityResult coreRun(tasks::SensitivityMethod method) {
  const auto m = model::importSbmlFile(kRepressilator.toStdString());
  tasks::SensitivityProblem problem;
  problem.model = std::make_shared<symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
  for (int i = 0; i <= 20; ++i) problem.times.push_back(20.0 * i / 20);
  problem.parameters = {"alpha", "beta", "n"};
  tasks::SensitivityOptions options;
  options.method = method;
  options.integrator.rtol = 1e-8;
  options.integrator.atol = 1e-12;
  return tasks::runSensitivities(problem, options);
}

QJsonObject settings(QJsonArray compare) {
  return {{"method", "cvodes"}, {"t_end", 20.0},  {"points", 21},     {"rtol", 1e-8},
          {"atol", 1e-12},      {"scaled", false}, {"error_control", true},
          {"parameters", QJsonArray{"alpha", "beta", "n"}}, {"compare", compare}};
}

void screenshot(MainWindow& w, api::TaskResultView* view, const QString& name) {
  const QString dir = qEnvironmentVariable("SENSODE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  w.resize(1280, 800);
  if (auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget())) tabs->setCurrentWidget(view);
  QCoreApplication::processEvents();
  w.grab().save(dir + QLatin1Char('/') + name);
}

}  // namespace

class TestSensitivityViews : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("SensodeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_sensitivity_views"));
    QSettings().clear();
  }

  void heatMapShowsTheCoreScaledSensitivities() {
    QTemporaryDir dir;
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("sensitivities"));
    panel->setupWidget()->setSettings(settings({}));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const tasks::SensitivityResult ref = coreRun(tasks::SensitivityMethod::Cvodes);

    auto* view = dynamic_cast<plugin::sensitivities::HeatMapView*>(panel->resultView(QStringLiteral("Heat map")));
    QVERIFY(view);
    QCOMPARE(view->timeBox()->count(), 21);
    QCOMPARE(view->timeBox()->currentIndex(), 20);  // the last time first
    const auto expected = tasks::scaledSensitivitiesAt(ref, 20, 1e-12);
    QCOMPARE(view->heatMap()->values().size(), std::size_t(6 * 3));
    for (std::size_t k = 0; k < expected.size(); ++k) QVERIFY(view->heatMap()->values()[k] == expected[k]);
    view->timeBox()->setCurrentIndex(5);
    const auto at5 = tasks::scaledSensitivitiesAt(ref, 5, 1e-12);
    for (std::size_t k = 0; k < at5.size(); ++k) QVERIFY(view->heatMap()->values()[k] == at5[k]);
    // The colour scale: 0 is white, the largest magnitude saturates, NaN is grey.
    const double mx = view->heatMap()->scaleMaximum();
    QVERIFY(mx > 0);
    QCOMPARE(view->heatMap()->colorFor(0), QColor(Qt::white));
    QVERIFY(view->heatMap()->colorFor(mx).red() > 150 && view->heatMap()->colorFor(mx).blue() < 80);
    QVERIFY(view->heatMap()->colorFor(-mx).blue() > 150 && view->heatMap()->colorFor(-mx).red() < 80);
    QCOMPARE(view->heatMap()->colorFor(NAN), view->heatMap()->colorFor(std::nan("")));
    QVERIFY(view->heatMap()->colorFor(NAN).saturation() == 0);
    view->timeBox()->setCurrentIndex(20);
    screenshot(w, view, QStringLiteral("sensitivities-heat-map.png"));

    QString why;
    const QString png = dir.filePath(QStringLiteral("h.png")), svg = dir.filePath(QStringLiteral("h.svg"));
    QVERIFY2(panel->exportResult(view, QStringLiteral("png"), png, &why), qPrintable(why));
    QVERIFY2(panel->exportResult(view, QStringLiteral("svg"), svg, &why), qPrintable(why));
    QImage image(png);
    QVERIFY(!image.isNull());
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 4)
      for (int x = 0; x < image.width(); x += 4) colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 10);
    QVERIFY(QSvgRenderer(svg).isValid());
    QVERIFY(QFileInfo::exists(TaskPanel::provenancePath(svg)));
  }

  void compareMethodsWithOneClick() {
    QTemporaryDir dir;
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("sensitivities"));
    panel->setupWidget()->setSettings(settings({}));
    // The user's way: check the group and the methods, click Run once.
    auto* group = panel->setupWidget()->findChild<QGroupBox*>(QStringLiteral("compareMethods"));
    QVERIFY(group);
    group->setChecked(true);
    QVERIFY(panel->setupWidget()->validate().contains(QStringLiteral("Compare methods")));
    for (const char* m : {"compare_odesd", "compare_exp", "compare_fd", "compare_cvodes"})
      panel->setupWidget()->findChild<QCheckBox*>(QLatin1String(m))->setChecked(true);
    // The reference (cvodes) is never compared with itself.
    QCOMPARE(panel->setupWidget()->settings().value("compare").toArray(), (QJsonArray{"odesd", "exp", "fd"}));
    QVERIFY(panel->setupWidget()->validate().isEmpty());
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

    auto* view = dynamic_cast<plugin::sensitivities::CompareView*>(panel->resultView(QStringLiteral("Compare")));
    QVERIFY(view);
    plugin::RecordTableModel* table = view->tableModel();
    QCOMPARE(table->rowCount(), 3);
    const tasks::SensitivityResult ref = coreRun(tasks::SensitivityMethod::Cvodes);
    const tasks::SensitivityMethod methods[] = {tasks::SensitivityMethod::OdeSd,
                                                tasks::SensitivityMethod::Exp,
                                                tasks::SensitivityMethod::FiniteDifferences};
    // Tolerances that fit each method at rtol 1e-8 (docs/benchmarks/sensitivities.md): odeSD
    // direct like CVODES; Exp second order on the state grid; FD at its own tight rtol.
    const double bounds[] = {1e-5, 5e-2, 1e-3};
    for (int row = 0; row < 3; ++row) {
      const tasks::SensitivityResult other = coreRun(methods[row]);
      const auto d = tasks::compareSensitivities(other, ref, 1e-8);  // floor at 1000 × the run's rtol
      const double shownMax = table->data(table->index(row, 2), Qt::UserRole).toDouble();
      const double shownMedian = table->data(table->index(row, 3), Qt::UserRole).toDouble();
      qInfo("%s vs CVODES: max %.3g, median %.3g", tasks::toString(methods[row]), shownMax, shownMedian);
      QVERIFY(shownMax == d.maxRelative);
      QVERIFY(shownMedian == d.medianRelative);
      QVERIFY2(shownMax > 0 && shownMax < bounds[row], tasks::toString(methods[row]));
      QCOMPARE(table->data(table->index(row, 11), Qt::UserRole).toString(), QStringLiteral("ok"));
    }
    QCOMPARE(view->chart()->series()->columns.size(), std::size_t(3));
    QVERIFY(view->chart()->logScale());
    // The main views keep showing the reference method.
    auto* r = dynamic_cast<const plugin::sensitivities::Result*>(panel->shownResult().get());
    QVERIFY(r && r->core()->values == ref.values);
    screenshot(w, view, QStringLiteral("sensitivities-compare.png"));

    const QString csv = dir.filePath(QStringLiteral("c.csv")), png = dir.filePath(QStringLiteral("c.png"));
    QString why;
    QVERIFY2(panel->exportResult(view, QStringLiteral("csv"), csv, &why), qPrintable(why));
    QVERIFY2(panel->exportResult(view, QStringLiteral("png"), png, &why), qPrintable(why));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readLine().startsWith("method,reference,max discrepancy,median discrepancy"));
    QVERIFY(!QImage(png).isNull());
    QFile p(TaskPanel::provenancePath(csv));
    QVERIFY(p.open(QIODevice::ReadOnly));
    const QJsonArray compared = QJsonDocument::fromJson(p.readAll()).object().value("compared_methods").toArray();
    QCOMPARE(compared.size(), 3);
    QCOMPARE(compared[2].toObject().value("method").toString(), QStringLiteral("fd"));
  }

  // Cancel while a compared method runs: within 0.2 s, and the previous results stay.
  // Finite differences in the window: the Statistics table gives each parameter's step, the one
  // the core took, and how it was taken.
  void finiteDifferenceStepsInTheStatistics() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("sensitivities"));
    QJsonObject fd = settings({});
    fd.insert(QStringLiteral("method"), QStringLiteral("fd"));
    panel->setupWidget()->setSettings(fd);
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const tasks::SensitivityResult ref = coreRun(tasks::SensitivityMethod::FiniteDifferences);
    auto* stats = dynamic_cast<plugin::KeyValueView*>(panel->resultView(QStringLiteral("Statistics")));
    QVERIFY(stats);
    QCOMPARE(ref.stats.fdSteps.size(), std::size_t(3));
    for (std::size_t j = 0; j < ref.parameterIds.size(); ++j) {
      const QString id = QString::fromStdString(ref.parameterIds[j]);
      const sensitivity::FiniteDifferenceStep& step = ref.stats.fdSteps[j];
      const QString expected = QStringLiteral("%1 (%2)").arg(
          QString::number(step.delta, 'g', 4), QString::fromStdString(sensitivity::describe(step)));
      QString shown;  // the text in the row labelled with the parameter
      for (int row = 0; row < stats->model()->rowCount(); ++row) {
        if (stats->model()->data(stats->model()->index(row, 0)).toString() ==
            QStringLiteral("FD step, ") + id)
          shown = stats->model()->data(stats->model()->index(row, 1)).toString();
      }
      QCOMPARE(shown, expected);
    }
    screenshot(w, stats, QStringLiteral("sensitivities-fd-statistics.png"));
  }

  void cancelDuringTheComparison() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kRepressilator));
    TaskPanel* panel = w.openTask(QStringLiteral("sensitivities"));
    panel->setupWidget()->setSettings(settings({}));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const auto before = panel->shownResult();
    QJsonObject longRun = settings(QJsonArray{"fd"});
    longRun.insert("t_end", 1000.0);
    longRun.insert("points", 1001);
    longRun.insert("parameters", QJsonArray{});
    panel->setupWidget()->setSettings(longRun);
    QSignalSpy finished(panel, &TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    const auto comparing = [panel] {
      for (QLabel* l : panel->findChildren<QLabel*>())
        if (l->text().contains(QStringLiteral("Run 2 of 2"))) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(comparing(), 60000);
    QVERIFY(panel->isRunning());
    // The bar continues where the reference run ended (half of it), never back to 0.
    QVERIFY2(panel->progressBar()->value() >= plugin::RunContext::kProgressMaximum / 2,
             qPrintable(QString::number(panel->progressBar()->value())));
    SENSODE_VERIFY_CANCEL_WITHIN(panel, finished, 0.2);
    QCOMPARE(panel->shownResult(), before);
  }
};

QTEST_MAIN(TestSensitivityViews)
#include "tst_sensitivity_views.moc"
