// SPDX-License-Identifier: MIT
// Plugin loading as a user meets it: SENSODE_PLUGIN_PATH adds a second plugin whose fourth task
// appears in the Tasks menu and runs — without any change to the host — while a file that is no
// library and a Qt plugin of another interface show up in Help ▸ Plugins' failure list with
// their reasons, and a task id offered twice is refused and listed.
#include <QAbstractItemModelTester>
#include <QLabel>
#include <QMenu>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest/QtTest>

#include "gui/main_window.h"
#include "gui/plugin_loader.h"
#include "gui/plugins_dialog.h"
#include "gui/task_panel.h"

// sensode_tasks_static is imported by linking it (qt_add_plugin's initializer library).

using namespace sensode;

namespace {

const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");
const QString kExtraDir = QStringLiteral(SENSODE_TEST_EXTRA_PLUGIN_DIR);
const QString kBrokenDir = QStringLiteral(SENSODE_TEST_BROKEN_PLUGIN_DIR);

const gui::PluginRecord* recordFor(const gui::PluginLoader& loader, const QString& fileName) {
  for (const gui::PluginRecord& r : loader.records()) {
    if (QFileInfo(r.file).fileName().contains(fileName)) return &r;
  }
  return nullptr;
}

}  // namespace

class TestPluginLoader : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("SensodeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_plugin_loader"));
    QVERIFY2(QDir(kExtraDir).exists(), qPrintable(kExtraDir));
    QVERIFY2(QDir(kBrokenDir).exists(), qPrintable(kBrokenDir));
    qputenv("SENSODE_PLUGIN_PATH", (kExtraDir + QDir::listSeparator() + kBrokenDir).toLocal8Bit());
  }

  void searchPathsFollowTheRule() {
    const QStringList paths = gui::PluginLoader::defaultSearchPaths();
    QVERIFY(paths.size() >= 2);
    QCOMPARE(paths[0], QFileInfo(kExtraDir).canonicalFilePath());
    QCOMPARE(paths[1], QFileInfo(kBrokenDir).canonicalFilePath());
  }

  void aFourthTaskJoinsWithoutTouchingTheHost() {
    gui::MainWindow::Options options;
    options.useSettings = false;
    gui::MainWindow w(options);  // default search paths: SENSODE_PLUGIN_PATH first
    w.show();
    const gui::PluginLoader& loader = w.plugins();
    QVERIFY(loader.task(QStringLiteral("timecourse")));  // the static sensode_tasks
    const api::TaskDescription* extra = loader.task(QStringLiteral("filestats"));
    QVERIFY(extra);
    QCOMPARE(extra->displayName, QStringLiteral("File statistics"));

    // Its menu entry sits where its menu path says: Tasks ▸ Examples ▸ File statistics.
    QMenu* examples = nullptr;
    for (QAction* a : w.tasksMenu()->actions()) {
      if (a->menu() && a->menu()->title() == QStringLiteral("Examples")) examples = a->menu();
    }
    QVERIFY(examples);
    QAction* action = examples->findChild<QAction*>(QStringLiteral("task_filestats"));
    QVERIFY(action);

    QVERIFY(w.openModel(kRepressilator));
    action->trigger();
    gui::TaskPanel* panel = w.taskPanel(QStringLiteral("filestats"));
    QVERIFY(panel);
    QSignalSpy finished(panel, &gui::TaskPanel::runFinished);
    panel->run();
    QVERIFY(finished.wait(10000));
    QCOMPARE(int(finished.first().at(0).value<api::TaskStatus>()), int(api::TaskStatus::Succeeded));
    auto* label = panel->findChild<QLabel*>(QStringLiteral("fileStatsLabel"));
    QVERIFY(label);
    QFile model(kRepressilator);
    QVERIFY(model.open(QIODevice::ReadOnly));
    QVERIFY2(label->text().startsWith(QString::number(model.size()) + QStringLiteral(" bytes")),
             qPrintable(label->text()));

    // Its export gets a provenance file from the host like any other.
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("stats.txt"));
    QString why;
    QVERIFY2(panel->exportResult(panel->resultViews().first(), QStringLiteral("txt"), out, &why),
             qPrintable(why));
    QVERIFY(QFileInfo::exists(gui::TaskPanel::provenancePath(out)));
  }

  void failuresAreListedWithTheirReasons() {
    gui::PluginLoader loader;
    loader.loadAll(gui::PluginLoader::defaultSearchPaths());
    const gui::PluginRecord* garbage = recordFor(loader, QStringLiteral("libsensode_truncated_plugin.so"));
    QVERIFY(garbage);
    QVERIFY(!garbage->loaded);
    QVERIFY(!garbage->error.isEmpty());
    const gui::PluginRecord* other = recordFor(loader, QStringLiteral("sensode_test_not_a_task"));
    QVERIFY(other);
    QVERIFY(!other->loaded);
    QVERIFY2(other->error.contains(QStringLiteral("does not implement org.sensode.TaskPlugin/2")),
             qPrintable(other->error));
    QVERIFY2(other->error.contains(QStringLiteral("org.example.SomethingElse/1")), qPrintable(other->error));
    QCOMPARE(loader.failureCount(), 2);
  }

  void helpPluginsShowsLoadedAndFailed() {
    gui::MainWindow::Options options;
    options.useSettings = false;
    gui::MainWindow w(options);
    QAction* action = w.findChild<QAction*>(QStringLiteral("actionPlugins"));
    QVERIFY(action);
    action->trigger();
    gui::PluginsDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = w.findChild<gui::PluginsDialog*>()) != nullptr);
    QAbstractItemModelTester loadedTester(dialog->loadedModel(),
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester failureTester(dialog->failureModel(),
                                           QAbstractItemModelTester::FailureReportingMode::QtTest);
    QStringList loaded, failed, reasons;
    for (int r = 0; r < dialog->loadedModel()->rowCount(); ++r) {
      loaded << dialog->loadedModel()->data(dialog->loadedModel()->index(r, gui::PluginListModel::Name)).toString();
    }
    for (int r = 0; r < dialog->failureModel()->rowCount(); ++r) {
      failed << dialog->failureModel()->data(dialog->failureModel()->index(r, gui::PluginListModel::File)).toString();
      reasons << dialog->failureModel()->data(dialog->failureModel()->index(r, gui::PluginListModel::Detail)).toString();
    }
    QVERIFY2(loaded.contains(QStringLiteral("Sensode tasks")), qPrintable(loaded.join(',')));
    QVERIFY2(loaded.contains(QStringLiteral("Sensode test: extra task")), qPrintable(loaded.join(',')));
    QCOMPARE(failed.size(), 2);
    QVERIFY(failed.join(' ').contains(QStringLiteral("libsensode_truncated_plugin.so")));
    for (const QString& reason : reasons) QVERIFY(!reason.isEmpty());
    QVERIFY(dialog->failureModel()->data(dialog->failureModel()->index(0, gui::PluginListModel::Status))
                .toString() == QStringLiteral("failed"));
  }

  void aTaskOfferedTwiceIsRefused() {
    // The loadable sensode_tasks offers "timecourse" again: the static one came first.
    const QString built = QStringLiteral(SENSODE_PLUGIN_BUILD_DIR);
    if (!QDir(built).exists()) QSKIP("build/plugins has not been built");
    gui::PluginLoader loader;
    loader.loadAll({built});
    const gui::PluginRecord* dynamic = recordFor(loader, QStringLiteral("libsensode_tasks"));
    QVERIFY(dynamic);
    QVERIFY(dynamic->loaded);
    QVERIFY2(dynamic->error.contains(QStringLiteral("already provided")), qPrintable(dynamic->error));
    QVERIFY(dynamic->taskIds.isEmpty());
    // timecourse, sensitivities, ssgradient: the static one's; plus estimation from the second
    // loadable plugin (sensode_estimation) when it was built, which refuses nothing.
    const gui::PluginRecord* second = recordFor(loader, QStringLiteral("libsensode_estimation"));
    QCOMPARE(loader.tasks().size(), second ? 4 : 3);
    if (second) {
      QVERIFY2(second->loaded && second->error.isEmpty(), qPrintable(second->error));
      QCOMPARE(second->taskIds, QStringList{QStringLiteral("estimation")});
    }
  }
};

QTEST_MAIN(TestPluginLoader)
#include "tst_plugin_loader.moc"
