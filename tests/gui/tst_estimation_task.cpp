// SPDX-License-Identifier: MIT
// The Parameter estimation task (id estimation) of the second plugin, sensode_estimation, in the
// host window, offscreen, with the real widgets and both plugins linked statically (the host
// is unchanged: it finds the task as it finds sensode_tasks'): the plugin is listed and its
// task is in the Tasks menu; the set-up table reads the PEtab parameter table and writes only
// what the user changed; a 3-start fit of a two-parameter decay (k, x0 from 12 measurements
// with σ = 0.05, tests/data/petab/estimation_decay) ends at a point where the objective the
// core computes independently is below the nominal one, its gradient vanishes, and the views
// show it: waterfall sorted, parameter table with standard errors and intervals around the
// estimate, a symmetric correlation matrix with unit diagonal, the fit over the measurements,
// a profile with its threshold χ²₁(0.95)/2 above the optimum; every view exports with
// provenance; Cancel stops a long run fast and keeps the previous results; the real
// sensode-gui finds the loadable plugin in build/plugins.
// Cancel after some starts finished shows those starts and says how many it kept (issue 31).
// File ▸ Open Estimation Results shows a folder a run wrote (core/estimation/run_store.h) in the
// same views, with the run's settings in the set-up form; a folder without a run is refused
// naming it.
// With SENSODE_SCREENSHOT_DIR set, each result tab is saved there as a PNG (for the docs).
#include <QAbstractItemModelTester>
#include <QAction>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QProcess>
#include <QProgressBar>
#include <QScrollArea>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QVBoxLayout>
#include <QtTest/QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <Eigen/Core>

#include "core/estimation/run_store.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"
#include "gui/main_window.h"
#include "gui/plugin_loader.h"
#include "gui/task_panel.h"
#include "gui_test_helpers.h"
#include "plugin/estimation/curve_chart_view.h"
#include "plugin/estimation/estimation_task.h"
#include "plugin/estimation/estimation_views.h"
#include "plugin/estimation/setup_widget.h"
#include "plugin/gradient/measurement_chart_view.h"
#include "plugin/models/record_table_model.h"
#include "plugin/views/heat_map_widget.h"
#include "plugin/views/key_value_view.h"
#include "plugin/views/table_result_view.h"

// sensode_tasks_static and sensode_estimation_static are imported by linking them.

using namespace sensode;
using gui::MainWindow;
using gui::TaskPanel;

namespace {

const QString kDecay =
    QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/estimation_decay/problem.yaml");
const QString kBoehm =
    QStringLiteral(SENSODE_SHARED_DIR "/petab/Boehm_JProteomeRes2014/Boehm_JProteomeRes2014.yaml");
const QString kGui = QStringLiteral(SENSODE_GUI_PATH);

plugin::RecordTableModel* recordModel(TaskPanel* panel, const QString& title) {
  auto* view = dynamic_cast<plugin::TableResultView*>(panel->resultView(title));
  return view ? qobject_cast<plugin::RecordTableModel*>(view->sourceModel()) : nullptr;
}

// The column of a record table by header.
int column(const plugin::RecordTableModel* m, const QString& header) {
  return static_cast<int>(m->headers().indexOf(header));
}

double number(const plugin::RecordTableModel* m, int row, const QString& header) {
  const QVariant v = m->data(m->index(row, column(m, header)), Qt::UserRole);
  return v.isValid() ? v.toDouble() : std::nan("");
}

// Saves the window with each result tab in front when SENSODE_SCREENSHOT_DIR is set.
void screenshots(MainWindow& w, TaskPanel* panel, const QString& stem) {
  const QString dir = qEnvironmentVariable("SENSODE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  w.resize(1450, 880);
  for (api::TaskResultView* view : panel->resultViews()) {
    if (view->placement() != api::TaskResultView::Placement::Tab) continue;
    auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget());
    if (tabs) tabs->setCurrentWidget(view);
    QCoreApplication::processEvents();
    w.grab().save(QStringLiteral("%1/%2-%3.png").arg(dir, stem, view->title().toLower()));
  }
}

QJsonObject decaySettings(int starts) {
  return {{"problem", QString()}, {"optimizer", "auto"}, {"starts", starts}, {"seed", 5},
          {"use_start_values", true}, {"gradient", "forward"}, {"max_iterations", 200},
          {"threads", 2}, {"rtol", 1e-8}, {"atol", 1e-10}, {"parameters", QJsonObject{}},
          {"profile", QJsonArray{QStringLiteral("k")}}};
}

// The estimation task on the decay problem in a shown window, with `settings` and no profile.
TaskPanel* decayTask(MainWindow& w, QJsonObject settings) {
  w.show();
  if (!w.openModel(kDecay)) return nullptr;
  TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
  settings.insert("profile", QJsonArray{});
  if (panel) panel->setupWidget()->setSettings(settings);
  return panel;
}

}  // namespace

class TestEstimationTask : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("SensodeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_estimation_task"));
    QSettings().clear();
  }

  void bothPluginsLoadAndTheTaskIsInTheMenu() {
    MainWindow w(testing::testWindowOptions());
    const auto& records = w.plugins().records();
    const auto estimation = std::find_if(records.begin(), records.end(), [](const gui::PluginRecord& r) {
      return r.name == QLatin1String("Sensode parameter estimation");
    });
    QVERIFY(estimation != records.end());
    QVERIFY2(estimation->loaded, qPrintable(estimation->error));
    QCOMPARE(estimation->taskIds, QStringList{QStringLiteral("estimation")});
    QVERIFY(std::any_of(records.begin(), records.end(), [](const gui::PluginRecord& r) {
      return r.loaded && r.taskIds.contains(QStringLiteral("ssgradient"));
    }));
    QStringList menu;
    for (QAction* a : w.tasksMenu()->actions()) menu << a->text().remove(QLatin1Char('&'));
    QVERIFY2(menu.contains(QStringLiteral("Parameter estimation")), qPrintable(menu.join(", ")));
  }

  void setupTableReadsThePetabTable() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kDecay));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    QVERIFY(panel);
    auto* setup = dynamic_cast<plugin::estimation::SetupWidget*>(panel->setupWidget());
    QVERIFY(setup);
    setup->setSettings(decaySettings(3));
    using S = plugin::estimation::SetupWidget;
    QTableWidget* t = setup->parameterTable();
    const petab::Problem p = petab::loadProblem(kDecay.toStdString());
    QCOMPARE(t->rowCount(), 2);
    for (int r = 0; r < 2; ++r) {
      const petab::Parameter& par = p.parameters[std::size_t(r)];
      QCOMPARE(t->item(r, S::Id)->text(), QString::fromStdString(par.id));
      QCOMPARE(t->item(r, S::Scale)->text(), QStringLiteral("log10"));
      QCOMPARE(t->item(r, S::Lower)->text().toDouble(), par.lowerBound);
      QCOMPARE(t->item(r, S::Upper)->text().toDouble(), par.upperBound);
      QCOMPARE(t->item(r, S::Start)->text().toDouble(), par.nominalValue);
      QCOMPARE(t->item(r, S::Estimate)->checkState(), Qt::Checked);
    }
    QCOMPARE(t->item(0, S::Profile)->checkState(), Qt::Checked);  // k, from the settings
    QCOMPARE(t->item(1, S::Profile)->checkState(), Qt::Unchecked);
    QVERIFY(setup->validate().isEmpty());
    // Unchanged rows write nothing; an edited start and a held parameter write just that.
    QVERIFY(setup->settings().value("parameters").toObject().isEmpty());
    t->item(0, S::Start)->setText(QStringLiteral("0.9"));
    t->item(1, S::Estimate)->setCheckState(Qt::Unchecked);
    const QJsonObject choices = setup->settings().value("parameters").toObject();
    QCOMPARE(choices.value("k").toObject(), (QJsonObject{{"start", 0.9}}));
    QCOMPARE(choices.value("x0").toObject(), (QJsonObject{{"estimate", false}}));
    // ... and the run applies them on the parameter scale.
    const auto s = plugin::estimation::parseSettings(setup->settings());
    QVERIFY(s.options.continueStalled);  // the form's default, as the core's
    QVERIFY(setup->settings().contains(QStringLiteral("continue_stalled")));
    QJsonObject off = setup->settings();
    off.insert(QStringLiteral("continue_stalled"), false);
    QVERIFY(!plugin::estimation::parseSettings(off).options.continueStalled);
    const auto fitted = plugin::estimation::fittedParameters(p, s.parameters);
    QCOMPARE(fitted.size(), std::size_t(2));
    QVERIFY(std::abs(fitted[0].start - std::log10(0.9)) < 1e-15);
    QVERIFY(!fitted[1].estimate);
    // Invalid input names the parameter and the field.
    t->item(0, S::Start)->setText(QStringLiteral("20"));
    QVERIFY2(setup->validate().contains(QStringLiteral("k")) &&
                 setup->validate().contains(QStringLiteral("outside the bounds")),
             qPrintable(setup->validate()));
    t->item(0, S::Start)->setText(QStringLiteral("-1"));
    QVERIFY2(setup->validate().contains(QStringLiteral("> 0")), qPrintable(setup->validate()));
    QVERIFY_THROWS_EXCEPTION(InvalidOptions, plugin::estimation::fittedParameters(
                                                 p, {{"nope", std::nullopt, 1.0, std::nullopt, std::nullopt}}));
    // Restored settings survive a round trip through the table.
    setup->setSettings(decaySettings(3));
    QVERIFY(setup->settings().value("parameters").toObject().isEmpty());
    QCOMPARE(setup->settings().value("profile").toArray(), QJsonArray{QStringLiteral("k")});
  }

  void fitsAndShowsEveryResult() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    w.resize(1450, 880);
    QVERIFY(w.openModel(kDecay));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    QVERIFY(panel);
    panel->setupWidget()->setSettings(decaySettings(3));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const auto* result = dynamic_cast<const plugin::estimation::Result*>(panel->shownResult().get());
    QVERIFY(result);
    const estimation::EstimationResult& c = *result->core();
    QCOMPARE(c.starts.size(), std::size_t(3));
    QCOMPARE(c.best.size(), std::size_t(2));

    // The optimum, checked by the core's objective independently of the optimiser: below the
    // nominal objective and every start's, with a vanishing gradient (the bounds are far).
    const petab::Problem p = petab::loadProblem(kDecay.toStdString());
    petab::ObjectiveOptions o;
    o.integrator.rtol = 1e-10;
    o.integrator.atol = 1e-12;
    const petab::ObjectiveResult nominal = petab::evaluateObjective(
        p, petab::nominalScaledParameters(p), petab::GradientMethod::None, o);
    const petab::ObjectiveResult atBest =
        petab::evaluateObjective(p, c.best, petab::GradientMethod::Forward, o);
    qInfo("objective: nominal %.10g, best %.10g (core says %.10g)", nominal.objective,
          atBest.objective, c.bestObjective);
    QVERIFY(atBest.objective < nominal.objective - 1);
    QVERIFY(std::abs(atBest.objective - c.bestObjective) < 1e-6 * (1 + std::abs(atBest.objective)));
    for (const estimation::StartResult& s : c.starts)
      if (std::isfinite(s.startObjective)) QVERIFY(c.bestObjective <= s.startObjective);
    // A vanishing gradient on the objective's own scale: the decrease that a Gauss-Newton step
    // from the best fit promises, ½·gᵀ·FIM⁻¹·g, is below 1e-6. |g| alone has no scale: the
    // starts stop on ftol 1e-8 (|Δf| ≤ 2.4e-7 here), which allows |g| up to about 0.1 with
    // this FIM, and a change of odeSD's rounding alone moved |g| from below 1e-3 to 1.3e-3.
    QVERIFY(c.statistics.available);
    QCOMPARE(c.statistics.covariance.rows(), Eigen::Index(atBest.gradient.size()));
    const Eigen::Map<const Eigen::VectorXd> g(atBest.gradient.data(),
                                              Eigen::Index(atBest.gradient.size()));
    const double promised = 0.5 * g.dot(c.statistics.covariance * g);
    qInfo("gradient at the best fit: max |g| %.3g, promised decrease %.3g", g.cwiseAbs().maxCoeff(),
          promised);
    QVERIFY2(promised < 1e-6, qPrintable(QString::number(promised)));

    // Waterfall: one point per start, sorted, the best at 1 (objective − best + 1).
    auto* waterfall = dynamic_cast<plugin::estimation::CurveChartView*>(panel->resultView(QStringLiteral("Waterfall")));
    QVERIFY(waterfall);
    const auto& page = waterfall->data().pages.at(0);
    QCOMPARE(page.curves.at(0).points.size(), qsizetype(3));
    for (qsizetype i = 1; i < page.curves.at(0).points.size(); ++i)
      QVERIFY(page.curves.at(0).points[i].y() >= page.curves.at(0).points[i - 1].y());
    QCOMPARE(page.curves.at(0).points.first().y(), 1.0);
    QVERIFY(page.horizontal.has_value());  // the nominal objective
    QVERIFY(page.horizontal->value > 1);

    // Parameters: every row filled, the estimate inside its Wald interval, linear = 10^scale.
    plugin::RecordTableModel* params = recordModel(panel, QStringLiteral("Parameters"));
    QVERIFY(params);
    QAbstractItemModelTester tester(params, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(params->rowCount(), 2);
    for (int r = 0; r < 2; ++r) {
      const double scaled = number(params, r, QStringLiteral("value (scale)"));
      const double lin = number(params, r, QStringLiteral("value"));
      const double se = number(params, r, QStringLiteral("standard error (scale)"));
      const double lo = number(params, r, QStringLiteral("Wald CI lower"));
      const double hi = number(params, r, QStringLiteral("Wald CI upper"));
      QVERIFY(scaled == c.best[std::size_t(r)]);
      QVERIFY(std::abs(lin - std::pow(10.0, scaled)) < 1e-12 * lin);
      QVERIFY2(se > 0 && std::isfinite(se), qPrintable(QString::number(se)));
      QVERIFY2(lo < lin && lin < hi, qPrintable(QStringLiteral("%1 < %2 < %3").arg(lo).arg(lin).arg(hi)));
    }
    // The data came from k = 0.7, x0 = 2 with σ = 0.05: the fit is close.
    QVERIFY(std::abs(number(params, 0, QStringLiteral("value")) - 0.7) < 0.05);
    QVERIFY(std::abs(number(params, 1, QStringLiteral("value")) - 2.0) < 0.1);
    // k was profiled: its profile interval is in the table too, around the estimate.
    const double pLo = number(params, 0, QStringLiteral("profile CI lower"));
    const double pHi = number(params, 0, QStringLiteral("profile CI upper"));
    const double k = number(params, 0, QStringLiteral("value"));
    QVERIFY2(pLo < k && k < pHi, qPrintable(QStringLiteral("%1 < %2 < %3").arg(pLo).arg(k).arg(pHi)));

    // Starts: one row per start, in objective order.
    plugin::RecordTableModel* starts = recordModel(panel, QStringLiteral("Starts"));
    QVERIFY(starts);
    QCOMPARE(starts->rowCount(), 3);
    QVERIFY(number(starts, 0, QStringLiteral("objective")) == c.bestObjective);

    // Correlations: symmetric, unit diagonal, |ρ| <= 1.
    auto* corr = dynamic_cast<plugin::estimation::CorrelationView*>(panel->resultView(QStringLiteral("Correlations")));
    QVERIFY(corr);
    const std::vector<double>& m = corr->heatMap()->values();
    QCOMPARE(m.size(), std::size_t(4));
    QVERIFY(std::abs(m[0] - 1) < 1e-12 && std::abs(m[3] - 1) < 1e-12);
    QVERIFY2(std::abs(m[1] - m[2]) <= 1e-12, qPrintable(QStringLiteral("%1 vs %2").arg(m[1], 0, 'g', 17).arg(m[2], 0, 'g', 17)));
    QVERIFY(std::abs(m[1]) <= 1 && std::abs(m[1]) > 0);

    // Fit: both experiments, and the simulated values are the core's at the best point.
    auto* fit = dynamic_cast<plugin::MeasurementChartView*>(panel->resultView(QStringLiteral("Fit")));
    QVERIFY(fit);
    QCOMPARE(fit->experiments().size(), qsizetype(2));
    QCOMPARE(result->fit()->size(), p.measurements.size());
    for (std::size_t i = 0; i < p.measurements.size(); ++i)
      QVERIFY(std::abs((*result->fit())[i].simulated - atBest.simulated[i]) < 1e-6);
    // And the best fit as curves on a fine grid (one per experiment and observable here), each
    // through the simulated values at its measurement times.
    QVERIFY(result->fitCurves() && !result->fitCurves()->empty());
    for (const plugin::SimulatedCurve& curve : *result->fitCurves()) {
      QVERIFY(curve.times.size() >= 301);
      for (std::size_t i = 0; i < p.measurements.size(); ++i) {
        const plugin::MeasurementPoint& point = (*result->fit())[i];
        if (point.observableId != curve.observableId || point.simulationCondition != curve.simulationCondition)
          continue;
        const auto at = std::find(curve.times.begin(), curve.times.end(), point.time);
        QVERIFY(at != curve.times.end());
        const double y = curve.values[std::size_t(at - curve.times.begin())];
        QVERIFY2(std::abs(y - point.simulated) <= 1e-4 * std::abs(point.simulated) + 1e-9,
                 qPrintable(QStringLiteral("%1 at t = %2: %3 vs %4").arg(point.observableId).arg(point.time).arg(y).arg(point.simulated)));
      }
    }

    // Profile of k: around the optimum, with the threshold χ²₁(0.95)/2 = 1.9207 above it.
    auto* profile = dynamic_cast<plugin::estimation::CurveChartView*>(panel->resultView(QStringLiteral("Profiles")));
    QVERIFY(profile);
    QCOMPARE(profile->data().pages.size(), qsizetype(1));
    const auto& pp = profile->data().pages.at(0);
    QCOMPARE(pp.name, QStringLiteral("k"));
    QVERIFY(pp.horizontal.has_value());
    QVERIFY2(std::abs(pp.horizontal->value - (c.bestObjective + 1.920729)) < 1e-4,
             qPrintable(QString::number(pp.horizontal->value - c.bestObjective)));
    double lowest = INFINITY;
    bool below = false, above = false;
    for (const QPointF& pt : pp.curves.at(0).points) {
      lowest = std::min(lowest, pt.y());
      below |= pt.x() < c.best[0];
      above |= pt.x() > c.best[0];
    }
    QVERIFY(below && above);
    QVERIFY(std::abs(lowest - c.bestObjective) < 1e-6 * (1 + std::abs(lowest)));

    // Every view exports every format it offers, with the run's provenance beside it.
    QTemporaryDir dir;
    int exported = 0;
    for (const TaskPanel::ExportTarget& target : panel->exportTargets()) {
      const QString file = dir.filePath(QStringLiteral("%1-%2.%3")
                                            .arg(target.view->title(), target.format.id, target.format.suffix));
      QString why;
      QVERIFY2(panel->exportResult(target.view, target.format.id, file, &why),
               qPrintable(target.view->title() + ": " + why));
      QVERIFY(QFileInfo(file).size() > 0);
      const QJsonObject prov = testing::readJsonFile(TaskPanel::provenancePath(file));
      QCOMPARE(prov.value("task").toObject().value("id").toString(), QStringLiteral("estimation"));
      QCOMPARE(prov.value("model").toObject().value("sha256").toString(), testing::sha256OfFile(kDecay));
      QVERIFY(prov.value("run").toObject().value("best_objective").toDouble() == c.bestObjective);
      QCOMPARE(prov.value("export").toObject().value("sha256").toString(), testing::sha256OfFile(file));
      if (target.format.id == QLatin1String("svg")) QVERIFY(QSvgRenderer(file).isValid());
      if (target.format.id == QLatin1String("png")) QVERIFY(!QImage(file).isNull());
      ++exported;
    }
    // Waterfall, Fit, Correlations, Profiles: PNG + SVG + CSV; Parameters, Starts: CSV.
    QCOMPARE(exported, 4 * 3 + 2);
    QFile csv(dir.filePath(QStringLiteral("Correlations-csv.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(csv.readLine()).trimmed(), QStringLiteral("parameter,k,x0"));

    screenshots(w, panel, QStringLiteral("estimation"));
  }

  // A fit that ends on a bound says so beside the value: k's upper bound moved to 0.5, below
  // the k = 0.7 the data came from, so the optimum sits on it; x0 stays inside, unflagged. At
  // 1280x800 the settings fit (Threads says what 0 means) and the window keeps its size.
  // The form's Integrator choice (odeSD by default, CVODES) reaches the run, and the Statistics
  // tab names the integrator that ran; an unknown one is refused naming the setting.
  void integratorChoiceReachesTheRun() {
    MainWindow w(testing::testWindowOptions());
    w.resize(1450, 880);
    TaskPanel* panel = decayTask(w, decaySettings(2));
    QVERIFY(panel);
    auto* choice = panel->setupWidget()->findChild<QComboBox*>(QStringLiteral("forward_integrator"));
    QVERIFY(choice);
    QCOMPARE(choice->currentData().toString(), QStringLiteral("odesd"));
    const auto integratorRow = [&]() -> QString {
      auto* view = dynamic_cast<plugin::KeyValueView*>(panel->resultView(QStringLiteral("Statistics")));
      if (!view) return QStringLiteral("no Statistics view");
      for (int r = 0; r < view->model()->rowCount(); ++r)
        if (view->model()->data(view->model()->index(r, 0)).toString() == QStringLiteral("Integrator"))
          return view->model()->data(view->model()->index(r, 1)).toString();
      return QStringLiteral("no Integrator row");
    };
    for (const QString& name : {QStringLiteral("odesd"), QStringLiteral("cvodes")}) {
      QJsonObject s = decaySettings(2);
      s.insert("profile", QJsonArray{});
      s.insert("forward_integrator", name);
      panel->setupWidget()->setSettings(s);
      QCOMPARE(choice->currentData().toString(), name);
      const api::TaskStatus status = testing::clickRunAndWait(panel);
      QVERIFY2(status == api::TaskStatus::Succeeded,
               qPrintable(panel->shownResult() ? panel->shownResult()->message()
                                               : QStringLiteral("no result")));
      const auto* result =
          dynamic_cast<const plugin::estimation::Result*>(panel->shownResult().get());
      QVERIFY(result);
      QCOMPARE(QString::fromLatin1(integrators::toString(result->core()->forwardIntegrator)), name);
      QCOMPARE(integratorRow(), name == QStringLiteral("odesd") ? QStringLiteral("odeSD")
                                                                : QStringLiteral("CVODES"));
    }
    if (const QString dir = qEnvironmentVariable("SENSODE_SCREENSHOT_DIR"); !dir.isEmpty()) {
      auto* view = panel->resultView(QStringLiteral("Statistics"));
      if (auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget()))
        tabs->setCurrentWidget(view);
      // The form scrolled to the Integrator choice.
      for (QWidget* p = choice->parentWidget(); p; p = p->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(p)) {
          area->ensureWidgetVisible(choice, 0, 200);
          break;
        }
      QCoreApplication::processEvents();
      w.grab().save(dir + QStringLiteral("/estimation-integrator.png"));
    }
    QJsonObject bad = decaySettings(1);
    bad.insert("profile", QJsonArray{});
    bad.insert("forward_integrator", "euler");
    api::ModelSession session = w.session();
    auto runner = panel->task().createRunner();
    runner->start(session, bad).waitForFinished();
    const auto failed = runner->takeResult();
    QCOMPARE(int(failed->status()), int(api::TaskStatus::Failed));
    QVERIFY2(failed->message().contains(QStringLiteral("forward_integrator")) &&
                 failed->message().contains(QStringLiteral("odesd, cvodes")),
             qPrintable(failed->message()));
  }

  void parameterOnItsBoundIsFlagged() {
    MainWindow w(testing::testWindowOptions());
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QSize before = w.size();
    QVERIFY(w.openModel(kDecay));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    QJsonObject settings = decaySettings(3);
    settings.insert("parameters", QJsonObject{{"k", QJsonObject{{"upper", 0.5}}}});
    settings.insert("profile", QJsonArray{});
    settings.insert("threads", 0);
    panel->setupWidget()->setSettings(settings);
    QStringList units;
    for (const QLabel* l : panel->setupWidget()->findChildren<QLabel*>()) units << l->text();
    QVERIFY2(units.contains(QStringLiteral("0 = automatic (%1 cores)").arg(std::thread::hardware_concurrency())),
             qPrintable(units.join(QStringLiteral(" | "))));
    QStringList problems = testing::squeezedSettings(panel);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));

    plugin::RecordTableModel* params = recordModel(panel, QStringLiteral("Parameters"));
    QVERIFY(params);
    QVERIFY2(std::abs(number(params, 0, QStringLiteral("value")) - 0.5) < 1e-6,
             qPrintable(QString::number(number(params, 0, QStringLiteral("value")), 'g', 17)));
    const int bound = column(params, QStringLiteral("at bound"));
    QCOMPARE(bound, column(params, QStringLiteral("value")) + 1);  // right beside the value
    QCOMPARE(params->data(params->index(0, bound)).toString(), QStringLiteral("⚠ upper bound"));
    const QString why = params->data(params->index(0, bound), Qt::ToolTipRole).toString();
    QVERIFY2(why.contains(QStringLiteral("upper bound 0.5")), qPrintable(why));
    QCOMPARE(params->data(params->index(0, column(params, QStringLiteral("value"))), Qt::ToolTipRole).toString(), why);
    QVERIFY(params->data(params->index(1, bound)).toString().isEmpty());
    problems = testing::panelDoesNotFit(panel, w, before);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));
  }

  // A Wald interval without bounds says why instead of "0 … INF": x0 along the null direction
  // of a rank-1 Fisher information (standard error inf, as core/estimation/fit_statistics.cpp
  // sets it), k with a finite interval. The statistics here are made up; the view is real.
  void unboundedWaldIntervalSaysWhy() {
    auto c = std::make_shared<estimation::EstimationResult>();
    c->parameters = {{"k", petab::Scale::Log10, -2, 1, std::log10(0.5), true},
                     {"x0", petab::Scale::Log10, -1, 1, 0, true}};
    c->best = {std::log10(0.7), 0.2};
    c->bestObjective = 1;
    estimation::FitStatistics& s = c->statistics;
    s.available = true;
    s.parameterIds = {"k", "x0"};
    s.rank = 1;
    s.standardErrors = {0.01, INFINITY};
    s.lower = {c->best[0] - 0.0196, -INFINITY};
    s.upper = {c->best[0] + 0.0196, INFINITY};
    s.lowerLinear = {std::pow(10.0, s.lower[0]), 0};
    s.upperLinear = {std::pow(10.0, s.upper[0]), INFINITY};
    const auto result = std::make_shared<plugin::estimation::Result>(
        c, std::make_shared<plugin::MeasurementPoints>(), 0.1, QJsonObject{});
    QWidget window;
    const QList<api::TaskResultView*> views = plugin::estimation::description().createResultViews(&window);
    plugin::TableResultView* table = nullptr;
    for (api::TaskResultView* v : views)
      if (v->title() == QLatin1String("Parameters")) table = dynamic_cast<plugin::TableResultView*>(v);
    QVERIFY(table);
    auto* layout = new QVBoxLayout(&window);
    layout->addWidget(table);
    window.resize(1200, 300);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    table->showResult(result);
    auto* params = qobject_cast<plugin::RecordTableModel*>(table->sourceModel());
    for (const QString& end : {QStringLiteral("Wald CI lower"), QStringLiteral("Wald CI upper")}) {
      const QModelIndex x0 = params->index(1, column(params, end));
      QCOMPARE(x0.data().toString(), QStringLiteral("not identifiable (FIM singular)"));
      const QString why = x0.data(Qt::ToolTipRole).toString();
      QVERIFY2(why.contains(QStringLiteral("rank 1 of 2")) && why.contains(QStringLiteral("profile")),
               qPrintable(why));
      QVERIFY(std::isfinite(number(params, 0, end)));  // k's interval is a number
      // The explanation is readable in its column (columns fit their text up to 520 px).
      const int shownColumn = column(params, end);
      const int width = table->tableView()->columnWidth(shownColumn);
      const int text = table->tableView()->fontMetrics().horizontalAdvance(x0.data().toString());
      QVERIFY2(width >= text, qPrintable(QStringLiteral("%1 px for %2 px of text").arg(width).arg(text)));
    }
  }

  void cancelStopsFastAndKeepsThePreviousResults() {
    MainWindow w(testing::testWindowOptions());
    TaskPanel* panel = decayTask(w, decaySettings(2));
    QVERIFY(panel);
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const auto before = panel->shownResult();

    // Boehm from many starts with a finite-difference gradient: far longer than the cancel. No
    // global phase: the screen's 25000 points took 30–40 s before the first start reported
    // progress.
    panel->setupWidget()->setSettings({{"problem", kBoehm}, {"starts", 500}, {"optimizer", "qn"},
                                       {"gradient", "fd"}, {"threads", 1}, {"global", "none"},
                                       {"parameters", QJsonObject{}}, {"profile", QJsonArray{}}});
    QVERIFY2(panel->setupWidget()->validate().isEmpty(), qPrintable(panel->setupWidget()->validate()));
    QSignalSpy finished(panel, &TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(panel->isRunning());
    // The progress line counts starts, not integration time.
    auto* progressText = panel->findChild<QLabel*>(QStringLiteral("progressText"));
    QVERIFY(progressText);
    QTRY_VERIFY_WITH_TIMEOUT(progressText->text().contains(QStringLiteral("of 500 starts")), 30000);
    QVERIFY2(progressText->text().contains(QStringLiteral("objective evaluations")),
             qPrintable(progressText->text()));
    QVERIFY2(panel->isRunning(), "the run ended before it could be cancelled");
    const double seconds = testing::clickCancelAndWait(panel, finished);
    qInfo("Cancel to finished: %.3f s", seconds);
    QVERIFY2(seconds >= 0 && seconds < 0.5, qPrintable(QStringLiteral("cancel took %1 s").arg(seconds)));
    // A start that failed at once (L-BFGS with finite differences can) has finished: then the
    // cancel shows the starts it kept and says so (issue 31); otherwise the previous results stay.
    if (finished.first().at(0).value<api::TaskStatus>() == api::TaskStatus::Cancelled) {
      QCOMPARE(panel->shownResult(), before);
    } else {
      const auto* kept = dynamic_cast<const plugin::estimation::Result*>(panel->shownResult().get());
      QVERIFY(kept && kept != before.get());
      QVERIFY2(progressText->text().contains(QStringLiteral("cancelled after %1 of 500 starts")
                                                 .arg(kept->core()->starts.size())),
               qPrintable(progressText->text()));
    }
  }

  // Cancel once starts have finished keeps them: the views show them and the panel says how
  // many of how many it kept.
  void cancelKeepsTheFinishedStarts() {
    MainWindow w(testing::testWindowOptions());
    QJsonObject s = decaySettings(400);
    s.insert("global", "none");
    s.insert("polish", 0);
    s.insert("threads", 1);
    TaskPanel* panel = decayTask(w, s);
    QVERIFY(panel);
    QSignalSpy finished(panel, &TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    auto* progressText = panel->findChild<QLabel*>(QStringLiteral("progressText"));
    QVERIFY(progressText);
    static const QRegularExpression done(QStringLiteral("^([0-9]+) of 400 starts"));
    QTRY_VERIFY_WITH_TIMEOUT(done.match(progressText->text()).hasMatch() &&
                                 done.match(progressText->text()).captured(1).toInt() >= 2,
                             60000);
    QVERIFY2(panel->isRunning(), "the run ended before it could be cancelled");
    panel->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 10000);
    const auto* result = dynamic_cast<const plugin::estimation::Result*>(panel->shownResult().get());
    QVERIFY(result);
    const std::size_t kept = result->core()->starts.size();
    QVERIFY(kept >= 2 && kept < 400);
    for (const auto& start : result->core()->starts)
      QVERIFY(start.status != estimation::StartStatus::Cancelled);
    QVERIFY2(progressText->text().contains(
                 QStringLiteral("cancelled after %1 of 400 starts; the %1 finished are kept").arg(kept)),
             qPrintable(progressText->text()));
    auto* waterfall = dynamic_cast<plugin::estimation::CurveChartView*>(panel->resultView(QStringLiteral("Waterfall")));
    QVERIFY(waterfall);
    QCOMPARE(waterfall->data().pages.at(0).curves.at(0).points.size(), qsizetype(kept));
  }

  // A results folder written by a run elsewhere opens in the same views, with its settings.
  void opensAResultsFolder() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString() + "/decay-results";
    {
      estimation::EstimationOptions o;
      o.starts = 5;
      o.seed = 11;
      o.threads = 1;
      o.screen = 2;
      o.profileParameters = {"k"};
      estimation::RunStore store(dir);
      const auto r = estimation::runEstimation({kDecay.toStdString()}, o, {}, {}, {nullptr, &store});
      QCOMPARE(r.status, estimation::EstimationResult::Status::Success);
    }
    MainWindow w(testing::testWindowOptions());
    w.show();
    w.resize(1450, 880);
    QAction* action = w.findChild<QAction*>(QStringLiteral("actionOpenResults0"));
    QVERIFY(action);
    QCOMPARE(action->text(), QStringLiteral("Open Estimation Results..."));
    QVERIFY2(w.openResultsFolder(QString::fromStdString(dir.string())), qPrintable(w.lastError()));
    TaskPanel* panel = w.taskPanel(QStringLiteral("estimation"));
    QVERIFY(panel);
    const auto* result = dynamic_cast<const plugin::estimation::Result*>(panel->shownResult().get());
    QVERIFY(result);
    QCOMPARE(result->core()->starts.size(), std::size_t(5));
    QCOMPARE(result->core()->profiles.size(), std::size_t(1));
    QVERIFY(result->core()->statistics.available);
    QVERIFY(result->fit() && !result->fit()->empty());
    // The run's settings in the form.
    const QJsonObject settings = panel->setupWidget()->settings();
    QCOMPARE(settings.value("starts").toInt(), 5);
    QCOMPARE(settings.value("seed").toInt(), 11);
    QCOMPARE(settings.value("screen").toInt(), 2);
    auto* progressText = panel->findChild<QLabel*>(QStringLiteral("progressText"));
    QVERIFY2(progressText->text().startsWith(QStringLiteral("Opened decay-results:")),
             qPrintable(progressText->text()));
    plugin::RecordTableModel* starts = recordModel(panel, QStringLiteral("Starts"));
    QVERIFY(starts);
    QCOMPARE(starts->rowCount(), 5);
    auto* profiles = dynamic_cast<plugin::estimation::CurveChartView*>(panel->resultView(QStringLiteral("Profiles")));
    QVERIFY(profiles && !profiles->data().pages.isEmpty());
    const QImage shot = w.grab().toImage();
    QVERIFY(!shot.isNull());
    const QString dirOut = qEnvironmentVariable("SENSODE_SCREENSHOT_DIR");
    if (!dirOut.isEmpty()) shot.save(dirOut + QStringLiteral("/estimation-opened-results.png"));

    // Not a results folder: refused naming it.
    QVERIFY(!w.openResultsFolder(tmp.path()));
    QVERIFY2(w.lastError().contains(tmp.path() + QStringLiteral(": not an estimation results folder")),
             qPrintable(w.lastError()));
  }

  // The docs' screenshot of a folder a (cluster) run wrote: SENSODE_SCREENSHOT_RESULTS names it.
  void openedResultsScreenshot() {
    const QString folder = qEnvironmentVariable("SENSODE_SCREENSHOT_RESULTS");
    const QString out = qEnvironmentVariable("SENSODE_SCREENSHOT_DIR");
    if (folder.isEmpty() || out.isEmpty())
      QSKIP("screenshots for the docs only (set SENSODE_SCREENSHOT_RESULTS and _DIR)");
    MainWindow w(testing::testWindowOptions());
    w.show();
    w.resize(1450, 880);
    QVERIFY2(w.openResultsFolder(folder), qPrintable(w.lastError()));
    TaskPanel* panel = w.taskPanel(QStringLiteral("estimation"));
    QVERIFY(panel);
    screenshots(w, panel, QStringLiteral("estimation-opened"));
  }

  // The start screen says it is screening, and Cancel stops it as fast as it stops the starts.
  void cancelDuringTheScreen() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kDecay));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    panel->setupWidget()->setSettings({{"problem", kBoehm}, {"starts", 500}, {"global", "screen"},
                                       {"screen", 1000},
                                       {"threads", 1}, {"parameters", QJsonObject{}},
                                       {"profile", QJsonArray{}}});
    QVERIFY2(panel->setupWidget()->validate().isEmpty(), qPrintable(panel->setupWidget()->validate()));
    QSignalSpy finished(panel, &TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    auto* progressText = panel->findChild<QLabel*>(QStringLiteral("progressText"));
    QVERIFY(progressText);
    QTRY_VERIFY2_WITH_TIMEOUT(
        progressText->text().contains(QStringLiteral("screening 500000 points")),
        qPrintable(progressText->text()), 10000);
    QTest::qWait(500);  // inside the screen (500000 Boehm simulations: minutes)
    QVERIFY2(panel->isRunning(), "the run ended before it could be cancelled");
    SENSODE_VERIFY_CANCEL_WITHIN(panel, finished, 0.5);
  }

  // The scatter search says so in the phase line, and Cancel stops it as fast as the screen.
  void cancelDuringTheScatterSearch() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kDecay));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    panel->setupWidget()->setSettings({{"problem", kBoehm}, {"starts", 20}, {"global", "ess"},
                                       {"global_evaluations", 1000000}, {"threads", 1},
                                       {"parameters", QJsonObject{}}, {"profile", QJsonArray{}}});
    QVERIFY2(panel->setupWidget()->validate().isEmpty(), qPrintable(panel->setupWidget()->validate()));
    QSignalSpy finished(panel, &TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    auto* progressText = panel->findChild<QLabel*>(QStringLiteral("progressText"));
    QVERIFY(progressText);
    QTRY_VERIFY2_WITH_TIMEOUT(progressText->text().contains(QStringLiteral("scatter search")),
                              qPrintable(progressText->text()), 10000);
    QTest::qWait(500);  // inside the search (1e6 Boehm simulations: many minutes)
    QVERIFY2(panel->isRunning(), "the run ended before it could be cancelled");
    SENSODE_VERIFY_CANCEL_WITHIN(panel, finished, 0.5);
  }

  // Bad settings reach the runner too (restored from QSettings, written by a script): the run
  // fails with a message naming the parameter and the file, and the previous results stay.
  void badSettingsFailWithTheirReason() {
    MainWindow w(testing::testWindowOptions());
    w.show();
    QVERIFY(w.openModel(kDecay));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    QJsonObject s = decaySettings(1);
    s.insert("profile", QJsonArray{});
    panel->setupWidget()->setSettings(s);
    QCOMPARE(int(testing::clickRunAndWait(panel)), int(api::TaskStatus::Succeeded));
    const auto before = panel->shownResult();
    s.insert("parameters", QJsonObject{{"x0", QJsonObject{{"lower", 5.0}, {"upper", 1.0}}}});
    api::ModelSession session = w.session();
    auto runner = panel->task().createRunner();
    runner->start(session, s).waitForFinished();
    const auto failed = runner->takeResult();
    QCOMPARE(int(failed->status()), int(api::TaskStatus::Failed));
    QVERIFY2(failed->message().contains(QStringLiteral("'x0'")) &&
                 failed->message().contains(QStringLiteral("lower bound")),
             qPrintable(failed->message()));
    s.insert("parameters", QJsonObject{{"nope", QJsonObject{{"start", 1.0}}}});
    runner->start(session, s).waitForFinished();
    const auto unknown = runner->takeResult();
    QCOMPARE(int(unknown->status()), int(api::TaskStatus::Failed));
    QVERIFY2(unknown->message().contains(QStringLiteral("'nope'")) &&
                 unknown->message().contains(QStringLiteral("problem.yaml")),
             qPrintable(unknown->message()));
    QCOMPARE(panel->shownResult(), before);
  }

  // The docs' screenshots on a benchmark problem (Boehm: 9 parameters, 48 measurements): only
  // with SENSODE_SCREENSHOT_DIR set, since a fit of the real problem takes a minute.
  void boehmScreenshots() {
    if (qEnvironmentVariable("SENSODE_SCREENSHOT_DIR").isEmpty())
      QSKIP("screenshots for the docs only (set SENSODE_SCREENSHOT_DIR)");
    MainWindow w(testing::testWindowOptions());
    w.show();
    w.resize(1450, 880);
    QVERIFY(w.openModel(kBoehm));
    TaskPanel* panel = w.openTask(QStringLiteral("estimation"));
    panel->setupWidget()->setSettings({{"problem", QString()}, {"optimizer", "auto"}, {"starts", 10},
                                       {"seed", 1}, {"use_start_values", false}, {"gradient", "forward"},
                                       {"max_iterations", 500}, {"rtol", 1e-8}, {"atol", 1e-10},
                                       {"threads", 2}, {"parameters", QJsonObject{}},
                                       // set here: the panel keeps the last run's settings, and
                                       // cancelDuringTheScatterSearch leaves a 1e6-evaluation search
                                       {"global", "screen"}, {"screen", 50}, {"polish", 2}, {"continue_stalled", true},
                                       {"profile", QJsonArray{QStringLiteral("Epo_degradation_BaF3")}}});
    QCOMPARE(int(testing::clickRunAndWait(panel, 900000)), int(api::TaskStatus::Succeeded));
    qInfo("%s", qPrintable(panel->shownResult()->summary()));
    screenshots(w, panel, QStringLiteral("estimation-boehm"));
  }

  // The real executable finds the loadable plugin in build/plugins and runs the task.
  void theExecutableLoadsThePlugin() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("estimation.png"));
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.remove(QStringLiteral("SENSODE_PLUGIN_PATH"));
    gui.setProcessEnvironment(env);
    gui.start(kGui, {QStringLiteral("--fresh"), QStringLiteral("--open"), kDecay, QStringLiteral("--run"),
                     QStringLiteral("estimation"), QStringLiteral("--screenshot"), png});
    QVERIFY(gui.waitForFinished(240000));
    const QString err = QString::fromLocal8Bit(gui.readAllStandardError());
    QVERIFY2(gui.exitStatus() == QProcess::NormalExit && gui.exitCode() == 0, qPrintable(err));
    QImage image(png);
    QVERIFY2(!image.isNull() && image.width() >= 1000, qPrintable(err));
  }
};

QTEST_MAIN(TestEstimationTask)
#include "tst_estimation_task.moc"
