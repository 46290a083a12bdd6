// SPDX-License-Identifier: MIT
// The sensode_tasks plugin linked statically: it loads through Qt's plugin machinery, offers
// the time-course task with all factories, reads models for the browser (and reports the core's
// import errors), parses and validates settings, and its runner gives exactly the core's numbers,
// reports progress and cancels within 0.2 s.
#include <QFutureWatcher>
#include <QJsonArray>
#include <QLineEdit>
#include <QPluginLoader>
#include <QPromise>
#include <QSignalSpy>
#include <QtTest/QtTest>

#include <chrono>
#include <memory>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/time_course_task.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/common/model_cache.h"
#include "plugin/forms/options_form.h"
#include "plugin/gradient/gradient_task.h"
#include "plugin/sensitivities/sensitivities_task.h"
#include "plugin/runner/task_runner.h"
#include "plugin/time_course/time_course_task.h"
#include "support/core_reference.h"

// sensode_tasks_static is imported by linking it (qt_add_plugin's initializer library).

using namespace sensode;

namespace {

const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");

const api::TaskDescription* findTask(const QList<api::TaskDescription>& tasks, const QString& id) {
  for (const api::TaskDescription& t : tasks) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

api::TaskPlugin* staticTaskPlugin() {
  for (QObject* instance : QPluginLoader::staticInstances()) {
    if (auto* p = qobject_cast<api::TaskPlugin*>(instance)) return p;
  }
  return nullptr;
}

// The core's answer for the same settings (the bundled repressilator).
tasks::TimeCourseResult coreReference(const char* method, double tEnd, long points, double rtol,
                                      double atol,
                                      std::vector<std::pair<std::string, double>> overrides = {}) {
  return testing::coreTimeCourse(kRepressilator.toStdString(), method, tEnd, points, rtol, atol,
                                 std::move(overrides));
}

std::shared_ptr<const api::TaskResult> runAndWait(api::TaskRunner& runner,
                                                  const api::ModelSession& session,
                                                  const QJsonObject& settings) {
  QFuture<void> f = runner.start(session, settings);
  f.waitForFinished();
  return runner.takeResult();
}

}  // namespace

class TestTasksPlugin : public QObject {
  Q_OBJECT

 private slots:
  void staticPluginLoadsAndOffersTimeCourse() {
    api::TaskPlugin* plugin = staticTaskPlugin();
    QVERIFY(plugin);
    QString why;
    QVERIFY(plugin->initialize(&why));
    const QList<api::TaskDescription> tasks = plugin->tasks();
    QVERIFY(!tasks.isEmpty());
    const api::TaskDescription& t = tasks.first();
    QCOMPARE(t.id, QStringLiteral("timecourse"));
    QCOMPARE(t.displayName, QStringLiteral("Time course"));
    QVERIFY(t.createSetupWidget && t.createRunner && t.createResultViews);
    QVERIFY(!t.icon.isNull());
    QVERIFY(plugin->modelFormats().contains(QStringLiteral("sbml")));
    // Metadata comes from sensode_tasks.json.
    bool found = false;
    for (const QStaticPlugin& sp : QPluginLoader::staticPlugins()) {
      const QJsonObject meta = sp.metaData();
      if (meta.value(QStringLiteral("IID")).toString() == QStringLiteral(SENSODE_TASK_PLUGIN_IID)) {
        QCOMPARE(meta.value(QStringLiteral("MetaData")).toObject().value(QStringLiteral("name")).toString(),
                 QStringLiteral("Sensode tasks"));
        found = true;
      }
    }
    QVERIFY(found);
  }

  void readsTheModelForTheBrowser() {
    QString why;
    const auto overview = staticTaskPlugin()->readModel(kRepressilator, &why);
    QVERIFY2(overview, qPrintable(why));
    QVERIFY(overview->title.startsWith(QStringLiteral("repressilator")));
    QStringList titles;
    for (const auto& t : overview->tables) titles << t.title;
    QCOMPARE(titles, (QStringList{QStringLiteral("Compartments"), QStringLiteral("Species"),
                                  QStringLiteral("Parameters"), QStringLiteral("Reactions"),
                                  QStringLiteral("Rules")}));
    const api::ModelTable& species = overview->tables[1];
    QCOMPARE(species.rows.size(), 6);
    QCOMPARE(species.rows[3].cells[0], QStringLiteral("p1"));
    QCOMPARE(species.rows[3].cells[species.valueColumn], QStringLiteral("2"));
    QCOMPARE(species.rows[3].overrideId, QStringLiteral("p1"));
    QCOMPARE(species.rows[3].nominal, 2.0);
    const api::ModelTable& params = overview->tables[2];
    QVERIFY(!params.rows.isEmpty());
    for (const auto& row : params.rows) QVERIFY2(!row.overrideId.isEmpty(), qPrintable(row.cells[0]));
    const api::ModelTable& reactions = overview->tables[3];
    QCOMPARE(reactions.rows.size(), 12);
    for (const auto& row : reactions.rows) {
      QVERIFY(!row.cells[3].isEmpty());                     // rate law text
      QVERIFY(!row.cells[3].contains(QStringLiteral("no kinetic law")));
    }
  }

  // The browser lists a model's events (BIOMD0000000056 has four) and what the importer
  // assumed (BIOMD0000000266's global parameters without a value, taken as 1), so that a
  // modeller sees both before trusting a result.
  void readsEventsAndImportNotesForTheBrowser() {
    const QString shared = QStringLiteral(SENSODE_SHARED_DIR "/biomodels/");
    if (!QFileInfo::exists(shared + QStringLiteral("BIOMD0000000056.xml"))) {
      QSKIP("no curated BioModels in the shared folder");
    }
    auto tableTitled = [](const api::ModelOverview& o, const QString& title) {
      for (const auto& t : o.tables) {
        if (t.title == title) return &t;
      }
      return static_cast<const api::ModelTable*>(nullptr);
    };
    QString why;
    const auto withEvents =
        staticTaskPlugin()->readModel(shared + QStringLiteral("BIOMD0000000056.xml"), &why);
    QVERIFY2(withEvents, qPrintable(why));
    const api::ModelTable* events = tableTitled(*withEvents, QStringLiteral("Events"));
    QVERIFY(events);
    QCOMPARE(events->rows.size(), 4);
    for (const auto& row : events->rows) {
      QVERIFY(!row.cells[1].isEmpty());  // trigger
      QVERIFY(!row.cells[4].isEmpty());  // assignments
    }
    QVERIFY2(withEvents->summary.contains(QStringLiteral("4 event(s)")),
             qPrintable(withEvents->summary));
    QVERIFY(!tableTitled(*withEvents, QStringLiteral("Import notes")));

    const auto valueless =
        staticTaskPlugin()->readModel(shared + QStringLiteral("BIOMD0000000266.xml"), &why);
    QVERIFY2(valueless, qPrintable(why));
    const api::ModelTable* notes = tableTitled(*valueless, QStringLiteral("Import notes"));
    QVERIFY(notes);
    bool namesX9 = false;
    for (const auto& row : notes->rows) namesX9 |= row.cells[0].contains(QStringLiteral("'X9'"));
    QVERIFY(namesX9);
    QVERIFY(!tableTitled(*valueless, QStringLiteral("Events")));
  }

  void modelErrorsCarryTheCoreMessage() {
    QString why;
    const QString file = QStringLiteral(SENSODE_TEST_DATA_DIR "/bad_sbml/delay.xml");
    QVERIFY(!staticTaskPlugin()->readModel(file, &why));
    QVERIFY2(why.contains(QStringLiteral("delay.xml")), qPrintable(why));
    QVERIFY2(why.contains(QStringLiteral("delay"), Qt::CaseInsensitive), qPrintable(why));
    QVERIFY(!staticTaskPlugin()->readModel(QStringLiteral("/nonexistent/model.xml"), &why));
    QVERIFY(!why.isEmpty());
  }

  void settingsParseAndValidate() {
    const auto defaults = plugin::timecourse::parseSettings({});
    QCOMPARE(defaults.tEnd, 10.0);  // the CLI's --t-end and --points defaults
    QCOMPARE(defaults.points, 101L);
    QVERIFY(defaults.method == tasks::TimeCourseOptions{}.method);  // the core's default
    QVERIFY(!defaults.options.validate());

    const auto s = plugin::timecourse::parseSettings(
        {{"method", "CVODES"}, {"t_end", 5.0}, {"points", 11}, {"rtol", 1e-9}, {"atol", 1e-14}});
    QCOMPARE(s.points, 11L);
    QCOMPARE(s.options.integrator.rtol, 1e-9);

    const auto message = [](const QJsonObject& o) {
      try {
        plugin::timecourse::parseSettings(o);
      } catch (const InvalidOptions& e) {
        return QString::fromStdString(e.what());
      }
      return QString();
    };
    QVERIFY(message({{"rtol", -1.0}}).contains(QStringLiteral("rtol = -1")));
    QVERIFY(message({{"method", "euler"}}).contains(QStringLiteral("euler")));
    QVERIFY(message({{"points", 1}}).contains(QStringLiteral("points")));
    QVERIFY(message({{"t_end", 0.0}}).contains(QStringLiteral("t_end")));

    // The form built from the same field table.
    plugin::OptionsForm form(plugin::timecourse::fields());
    QVERIFY(form.validate().isEmpty());
    QCOMPARE(form.values().value(QStringLiteral("points")).toInteger(), 101);
    form.setValues({{"rtol", 0.0}});
    QCOMPARE(form.validate(), QStringLiteral("Relative tolerance = 0: must be > 0 and < 1"));
    form.resetToDefaults();
    QVERIFY(form.validate().isEmpty());
    auto* points = qobject_cast<QLineEdit*>(form.editor(QStringLiteral("points")));
    QVERIFY(points);
    points->setText(QStringLiteral("2.5"));
    QCOMPARE(form.validate(), QStringLiteral("Output points = 2.5: must be a whole number"));
    points->setText(QStringLiteral("1e3"));
    QVERIFY(form.validate().isEmpty());
    QCOMPARE(form.values().value(QStringLiteral("points")).toInteger(), 1000);
  }

  // The gradient task: settings, the PEtab reader for the browser, and a clear failure when no
  // PEtab problem is at hand.
  void gradientTaskSettingsAndErrors() {
    api::TaskPlugin* plugin = staticTaskPlugin();
    QVERIFY(plugin->modelFormats().contains(QStringLiteral("petab")));
    const api::TaskDescription* t = findTask(plugin->tasks(), QStringLiteral("ssgradient"));
    QVERIFY(t);
    QVERIFY(t->sessionFormats.contains(QStringLiteral("petab")));

    const auto defaults = plugin::gradient::parseSettings({});
    QVERIFY(defaults.method == petab::GradientMethod::Ssasa);
    QVERIFY(defaults.options.integrator == petab::ObjectiveOptions{}.integrator);
    const auto s = plugin::gradient::parseSettings(
        {{"method", "adjoint"}, {"ss_rtol", 1e-9}, {"parameters", QJsonObject{{"k1", 2.0}}}});
    QVERIFY(s.method == petab::GradientMethod::Adjoint);
    QCOMPARE(s.options.steadyState.rtol, 1e-9);
    QCOMPARE(s.parameters.size(), std::size_t(1));
    const auto message = [](const QJsonObject& o) {
      try {
        plugin::gradient::parseSettings(o);
      } catch (const InvalidOptions& e) {
        return QString::fromStdString(e.what());
      }
      return QString();
    };
    QVERIFY(message({{"method", "newton"}}).contains(QStringLiteral("newton")));
    QVERIFY(message({{"method", "none"}}).contains(QStringLiteral("none")));
    QVERIFY(message({{"fd_step", 0.0}}).contains(QStringLiteral("fd_step")));
    QVERIFY(message({{"rtol", 2.0}}).contains(QStringLiteral("rtol")));
    QVERIFY(message({{"parameters", QJsonObject{{"k1", "x"}}}}).contains(QStringLiteral("k1")));

    // An SBML session and no problem chosen: the runner fails and says why.
    auto runner = t->createRunner();
    const auto r = runAndWait(*runner, {kRepressilator, QStringLiteral("sbml"), {}}, {});
    QCOMPARE(int(r->status()), int(api::TaskStatus::Failed));
    QVERIFY2(r->message().contains(QStringLiteral("PEtab")), qPrintable(r->message()));
    // A broken problem file: the reader's message (file named).
    const auto bad = runAndWait(*runner, {kRepressilator, QStringLiteral("sbml"), {}},
                                {{"problem", QStringLiteral("/nonexistent/problem.yaml")}});
    QCOMPARE(int(bad->status()), int(api::TaskStatus::Failed));
    QVERIFY2(bad->message().contains(QStringLiteral("problem.yaml")), qPrintable(bad->message()));
  }

  void runnerGivesTheCoreResultExactly() {
    const api::TaskDescription t = staticTaskPlugin()->tasks().first();
    auto runner = t.createRunner();
    const api::ModelSession session{kRepressilator, QStringLiteral("sbml"),
                                    {{QStringLiteral("alpha"), 150.0}}};
    const QJsonObject settings{
        {"method", "cvodes"}, {"t_end", 30.0}, {"points", 61}, {"rtol", 1e-8}, {"atol", 1e-12}};
    const auto result = runAndWait(*runner, session, settings);
    QVERIFY(result);
    QCOMPARE(int(result->status()), int(api::TaskStatus::Succeeded));
    const auto* r = dynamic_cast<const plugin::timecourse::Result*>(result.get());
    QVERIFY(r);
    const tasks::TimeCourseResult ref = coreReference("cvodes", 30, 61, 1e-8, 1e-12, {{"alpha", 150.0}});
    QCOMPARE(r->core()->columns, ref.columns);
    QVERIFY(r->core()->times == ref.times);
    QVERIFY(r->core()->values == ref.values);  // same method, same settings: bit for bit
    QVERIFY(r->core()->stats == ref.stats);

    const QJsonObject p = result->provenance();
    QCOMPARE(p.value("method").toString(), QStringLiteral("cvodes"));
    QCOMPARE(p.value("derivative_source").toString(), QStringLiteral("exact symbolic"));
    QCOMPARE(p.value("sensode_version").toString(), QStringLiteral(SENSODE_VERSION));
    QCOMPARE(p.value("model").toObject().value("sha256").toString(),
             plugin::sha256OfFile(kRepressilator));
    QCOMPARE(p.value("parameter_overrides").toObject().value("alpha").toDouble(), 150.0);
    QCOMPARE(p.value("tolerances").toObject().value("rtol").toDouble(), 1e-8);

    // A second run reuses the compiled model and still agrees.
    const auto again = runAndWait(*runner, session, settings);
    const auto* r2 = dynamic_cast<const plugin::timecourse::Result*>(again.get());
    QVERIFY(r2 && r2->core()->values == ref.values);
    QVERIFY(again->provenance().value("run").toObject().value("model_from_cache").toBool());
  }

  void runnerReportsCoreErrors() {
    auto runner = staticTaskPlugin()->tasks().first().createRunner();
    const api::ModelSession session{kRepressilator, QStringLiteral("sbml"),
                                    {{QStringLiteral("no_such_id"), 1.0}}};
    auto result = runAndWait(*runner, session, {});
    QCOMPARE(int(result->status()), int(api::TaskStatus::Failed));
    QVERIFY2(result->message().contains(QStringLiteral("no_such_id")), qPrintable(result->message()));

    const api::ModelSession bad{QStringLiteral(SENSODE_TEST_DATA_DIR "/bad_sbml/delay.xml"),
                                QStringLiteral("sbml"), {}};
    result = runAndWait(*runner, bad, {});
    QCOMPARE(int(result->status()), int(api::TaskStatus::Failed));
    QVERIFY2(result->message().contains(QStringLiteral("delay.xml")), qPrintable(result->message()));

    // Imports, then its Jacobian cannot be formed: the file and the element are still named.
    const QString factorial = QStringLiteral(SENSODE_TEST_DATA_DIR "/bad_sbml/factorial_of_state.xml");
    result = runAndWait(*runner, {factorial, QStringLiteral("sbml"), {}}, {});
    QCOMPARE(int(result->status()), int(api::TaskStatus::Failed));
    QVERIFY2(result->message().contains(factorial + ": element 'x': its rate of change"),
             qPrintable(result->message()));

    result = runAndWait(*runner, {kRepressilator, QStringLiteral("sbml"), {}}, {{"rtol", 2.0}});
    QCOMPARE(int(result->status()), int(api::TaskStatus::Failed));
    QVERIFY2(result->message().contains(QStringLiteral("rtol")), qPrintable(result->message()));
  }

  void runnerReportsProgressAndCancelsFast() {
    auto runner = staticTaskPlugin()->tasks().first().createRunner();
    QFutureWatcher<void> watcher;
    QSignalSpy progress(&watcher, &QFutureWatcher<void>::progressValueChanged);
    QSignalSpy finished(&watcher, &QFutureWatcher<void>::finished);
    watcher.setFuture(runner->start({kRepressilator, QStringLiteral("sbml"), {}},
                                    {{"t_end", 1e6}, {"points", 200001}}));
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 2, 20000);
    QVERIFY(!watcher.isFinished());
    const auto cancelled = std::chrono::steady_clock::now();
    runner->cancel();
    QVERIFY(finished.wait(5000) || finished.count() > 0);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled).count();
    qInfo("cancel() to finished: %.3f s", seconds);
    QVERIFY2(seconds < 0.2, qPrintable(QStringLiteral("cancel took %1 s").arg(seconds)));
    const auto result = runner->takeResult();
    QVERIFY(result);
    QCOMPARE(int(result->status()), int(api::TaskStatus::Cancelled));
    QVERIFY2(result->message().contains(QStringLiteral("cancelled")), qPrintable(result->message()));

    // The next run of the same runner is not affected by the old cancel.
    const auto next = runAndWait(*runner, {kRepressilator, QStringLiteral("sbml"), {}},
                                 {{"t_end", 5.0}, {"points", 6}});
    QCOMPARE(int(next->status()), int(api::TaskStatus::Succeeded));
  }

  // QFuture drops a text whose progress value does not go up: a text that changes while the bar
  // stands still (the estimation's screen counting evaluations at 0 of N starts) must still
  // arrive, and the bar must not run ahead by more than a hair for it.
  void progressTextChangesWhileTheBarStandsStill() {
    QPromise<void> promise;
    QFuture<void> future = promise.future();
    promise.start();
    promise.setProgressRange(-plugin::RunContext::kPhaseSlots, plugin::RunContext::kProgressMaximum);
    plugin::RunContext context(promise, CancelToken());
    context.setProgressText([](const ProgressInfo& info) {
      return QStringLiteral("%1 evaluated").arg(info.steps);
    });
    const ProgressMonitor& monitor = context.monitor();
    monitor.check({0, 10, 0});
    QCOMPARE(future.progressText(), QStringLiteral("0 evaluated"));
    for (long n = 1; n <= 3; ++n) {
      QTest::qWait(300);  // past the text interval
      monitor.check({0, 10, n});
      QCOMPARE(future.progressText(), QStringLiteral("%1 evaluated").arg(n));
    }
    QVERIFY2(future.progressValue() <= 3, qPrintable(QString::number(future.progressValue())));
    // Real progress still shows as such.
    monitor.check({5, 10, 4});
    QCOMPARE(future.progressValue(), plugin::RunContext::kProgressMaximum / 2);
    QCOMPARE(future.progressText(), QStringLiteral("4 evaluated"));
    promise.finish();
  }

  void sensitivitiesRunnerGivesTheCoreResult() {
    const QList<api::TaskDescription> all = staticTaskPlugin()->tasks();
    const api::TaskDescription* t = findTask(all, QStringLiteral("sensitivities"));
    QVERIFY(t);
    auto runner = t->createRunner();
    const QJsonObject settings{{"method", "cvodes"}, {"t_end", 10.0},  {"points", 11},
                               {"rtol", 1e-8},       {"atol", 1e-12},  {"scaled", false},
                               {"parameters", QJsonArray{"alpha", "beta"}}};
    const auto result = runAndWait(*runner, {kRepressilator, QStringLiteral("sbml"), {}}, settings);
    QVERIFY(result);
    QVERIFY2(result->status() == api::TaskStatus::Succeeded, qPrintable(result->message()));
    const auto* r = dynamic_cast<const plugin::sensitivities::Result*>(result.get());
    QVERIFY(r);

    const auto m = model::importSbmlFile(kRepressilator.toStdString());
    tasks::SensitivityProblem problem;
    problem.model = std::make_shared<symbolic::CompiledModel>(symbolic::buildOdeSystem(m));
    for (int i = 0; i < 11; ++i) problem.times.push_back(10.0 * i / 10);
    problem.parameters = {"alpha", "beta"};
    tasks::SensitivityOptions options;
    options.method = tasks::SensitivityMethod::Cvodes;
    options.integrator.rtol = 1e-8;
    options.integrator.atol = 1e-12;
    const tasks::SensitivityResult ref = tasks::runSensitivities(problem, options);
    QVERIFY(ref.termination == tasks::Termination::Success);
    QCOMPARE(r->core()->parameterIds, ref.parameterIds);
    QCOMPARE(r->core()->outputIds, ref.outputIds);
    QVERIFY(r->core()->values == ref.values);  // bit for bit

    const QJsonObject p = result->provenance();
    QCOMPARE(p.value("method").toString(), QStringLiteral("cvodes"));
    QCOMPARE(p.value("derivative_source").toString(), QStringLiteral("exact symbolic"));
    QCOMPARE(p.value("parameters").toArray().size(), 2);

    // The chart's slice for one parameter is that parameter's column of dy/dp.
    const auto slice = plugin::sensitivities::parameterSlice(*r->core(), 1);
    QCOMPARE(slice->columns, ref.outputIds);
    QVERIFY(slice->at(5, 2) == ref.at(5, 2, 1));

    // Finite differences say so in the provenance.
    const auto fd = runAndWait(*runner, {kRepressilator, QStringLiteral("sbml"), {}},
                               {{"method", "fd"}, {"t_end", 2.0}, {"points", 3},
                                {"parameters", QJsonArray{"beta"}}});
    QVERIFY2(fd->status() == api::TaskStatus::Succeeded, qPrintable(fd->message()));
    QVERIFY(fd->provenance().value("derivative_source").toString().contains(QStringLiteral("finite differences")));
    // ... and give the step taken for each parameter.
    const QJsonArray fdSteps = fd->provenance().value("fd_steps").toArray();
    QCOMPARE(fdSteps.size(), 1);
    QCOMPARE(fdSteps[0].toObject().value("parameter").toString(), QStringLiteral("beta"));
    QVERIFY(fdSteps[0].toObject().value("step").toDouble() > 0);
    QVERIFY(fdSteps[0].toObject().value("scheme").toString().startsWith(QStringLiteral("central")));

    // Unknown parameter ids come back as the core's message.
    const auto bad = runAndWait(*runner, {kRepressilator, QStringLiteral("sbml"), {}},
                                {{"parameters", QJsonArray{"nope"}}});
    QCOMPARE(int(bad->status()), int(api::TaskStatus::Failed));
    QVERIFY2(bad->message().contains(QStringLiteral("nope")), qPrintable(bad->message()));
  }

  void destroyingARunningRunnerCancelsIt() {
    auto runner = staticTaskPlugin()->tasks().first().createRunner();
    QFuture<void> f = runner->start({kRepressilator, QStringLiteral("sbml"), {}},
                                    {{"t_end", 1e6}, {"points", 1001}});
    QThread::msleep(100);
    const auto start = std::chrono::steady_clock::now();
    runner.reset();
    QVERIFY(f.isFinished());
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  }
};

QTEST_MAIN(TestTasksPlugin)
#include "tst_tasks_plugin.moc"
