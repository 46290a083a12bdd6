// SPDX-License-Identifier: MIT
// Cancel works in every phase (issue 30, item 5): a run spends its first seconds reading and
// compiling a large model (import, conservation analysis, derivatives, tapes), with no
// integration step to check the monitor. The host, offscreen with the real widgets, runs the time
// course of a generated 2000-species network (about 3 s of loading on an idle machine, far longer
// on a loaded one), and Cancel, clicked while the progress bar still shows the loading phase,
// must end the run within a second with the status Cancelled and the message saying where.
// The window is saved as build/tests/cancel_phases.png to look at.
#include <QLabel>
#include <QProgressBar>
#include <QTemporaryDir>

#include <chrono>
#include <thread>

#include "gui/main_window.h"
#include "gui/task_panel.h"
#include "gui_test_helpers.h"
#include "plugin/common/model_cache.h"
#include "tests/bench/network_generator.h"

using namespace sensode;

class TestCancelPhases : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir tmp_;
  QString model_;

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    model_ = tmp_.filePath(QStringLiteral("network2000.xml"));
    bench::NetworkOptions options;
    options.species = 2000;
    const bench::NetworkSummary summary = bench::writeMassActionNetwork(options, model_.toStdString());
    QCOMPARE(summary.species, 2000);
  }

  void cancelWhileCompiling() {
    plugin::clearModelCache();  // the run must load and compile, not take a cached model
    gui::MainWindow w(testing::testWindowOptions());
    w.resize(1000, 700);
    w.show();
    QVERIFY(w.openModel(model_));
    gui::TaskPanel* panel = w.openTask(QStringLiteral("timecourse"));
    QVERIFY(panel);
    panel->setupWidget()->setSettings({{"method", "cvodes"}, {"t_end", 1.0}, {"points", 11}});
    QSignalSpy finished(panel, &gui::TaskPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(panel->isRunning());
    // Past the import (libSBML's parse is one call Cancel cannot enter), into the derivatives
    // (about 2 s of the 3).
    auto* progressText = panel->findChild<QLabel*>(QStringLiteral("progressText"));
    QVERIFY(progressText);
    QTRY_VERIFY_WITH_TIMEOUT(progressText->text().contains(QStringLiteral("Compiling")), 60000);
    QTest::qWait(200);
    QVERIFY2(panel->isRunning(), "the run ended before it could be cancelled");
    QVERIFY2(panel->progressBar()->value() <= 0,
             qPrintable(QStringLiteral("already integrating (progress %1)").arg(panel->progressBar()->value())));
    const QString shot = QStringLiteral(SENSODE_TEST_OUTPUT_DIR "/cancel_phases.png");
    w.grab().save(shot);
    SENSODE_VERIFY_CANCEL_WITHIN(panel, finished, 1.0);
    const QString message = finished.first().at(1).toString();
    QVERIFY2(message.contains(QStringLiteral("cancelled")), qPrintable(message));
    QVERIFY(panel->runButton()->isEnabled());
    QVERIFY(w.lastError().isEmpty());  // a cancel is not an error

    // The cancelled load left nothing half-built behind: the next run loads afresh and finishes
    // (over a short time span: the 2000-species integration is not what this test is about).
    panel->setupWidget()->setSettings({{"t_end", 1e-6}, {"points", 2}});
    QCOMPARE(int(testing::clickRunAndWait(panel, 300000)), int(api::TaskStatus::Succeeded));
  }
};

QTEST_MAIN(TestCancelPhases)
#include "tst_cancel_phases.moc"
