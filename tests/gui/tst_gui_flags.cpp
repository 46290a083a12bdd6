// SPDX-License-Identifier: MIT
// sensode-gui as a script runs it: --open FILE --run TASK_ID --screenshot FILE.png under
// QT_QPA_PLATFORM=offscreen saves the window once the results are shown and exits 0; an unknown
// task exits 2 and a broken model exits 1, each with its message on stderr. The executable finds
// its plugin through the build tree's rule (build/gui/sensode-gui → build/plugins).
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

namespace {

const QString kGui = QStringLiteral(SENSODE_GUI_PATH);
const QString kRepressilator = QStringLiteral(SENSODE_RESOURCES_DIR "/models/repressilator.xml");

struct Run {
  int exitCode = -1;
  QString out, err;
};

// pluginPath: SENSODE_PLUGIN_PATH for the run (default: none, the build's own plugins only).
Run runGui(const QStringList& args, const QString& pluginPath = {}) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.remove(QStringLiteral("SENSODE_PLUGIN_PATH"));
  if (!pluginPath.isEmpty()) env.insert(QStringLiteral("SENSODE_PLUGIN_PATH"), pluginPath);
  p.setProcessEnvironment(env);
  p.start(kGui, QStringList{QStringLiteral("--fresh")} + args);
  Run r;
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
    r.err = QStringLiteral("timed out");
    return r;
  }
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
  r.err = QString::fromLocal8Bit(p.readAllStandardError());
  return r;
}

}  // namespace

class TestGuiFlags : public QObject {
  Q_OBJECT

 private slots:
  void screenshotOfATimeCourse() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("timecourse.png"));
    const Run r = runGui({QStringLiteral("--open"), kRepressilator, QStringLiteral("--run"),
                          QStringLiteral("timecourse"), QStringLiteral("--screenshot"), png});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QImage image(png);
    QVERIFY2(!image.isNull(), qPrintable(r.out + r.err));
    QVERIFY(image.width() >= 1000 && image.height() >= 700);
  }

  // A PEtab problem opened from the command line runs the gradient task in the real executable
  // with the loadable plugin.
  void screenshotOfAGradient() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("ssgradient.png"));
    const Run r = runGui({QStringLiteral("--open"),
                          QStringLiteral(SENSODE_SHARED_DIR "/petab/Zheng_PNAS2012/Zheng_PNAS2012.yaml"),
                          QStringLiteral("--run"), QStringLiteral("ssgradient"),
                          QStringLiteral("--screenshot"), png});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(!QImage(png).isNull(), qPrintable(r.out + r.err));
  }

  // A run whose future has finished before the scripted run looks at it (a small model on a
  // loaded machine; here the test plugin's runner finishes inside start()) succeeded: exit 0.
  // The scripted run used to read "not running" as "refused to start" and exit 1 without a word.
  void runThatFinishesAtOnceExitsZero() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("filestats.png"));
    const Run r = runGui({QStringLiteral("--open"), kRepressilator, QStringLiteral("--run"),
                          QStringLiteral("filestats"), QStringLiteral("--settings"),
                          QStringLiteral(R"({"steps": 1, "finishInStart": true})"),
                          QStringLiteral("--screenshot"), png},
                         QStringLiteral(SENSODE_TEST_EXTRA_PLUGIN_DIR));
    QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(r.err)));
    QVERIFY2(!QImage(png).isNull(), qPrintable(r.out + r.err));
  }

  void unknownTaskExitsTwo() {
    QTemporaryDir dir;
    const Run r = runGui({QStringLiteral("--open"), kRepressilator, QStringLiteral("--run"),
                          QStringLiteral("nosuchtask"), QStringLiteral("--screenshot"),
                          dir.filePath(QStringLiteral("x.png"))});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QStringLiteral("nosuchtask")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("timecourse")), qPrintable(r.err));
  }

  // Issue 14/15: a model with algebraic rules (IDAS), fast reactions, delays or events runs in
  // every SBML task of the real executable; exit 0 means the task succeeded (scripted_run.cpp).
  void constructsRunInEveryTask_data() {
    QTest::addColumn<QString>("caseFile");
    QTest::addColumn<QString>("task");
    const QStringList models = {
        QStringLiteral("00549/00549-sbml-l3v2.xml"),  // algebraic rule: IDAS
        QStringLiteral("00870/00870-sbml-l3v1.xml"),  // fast reaction
        QStringLiteral("01568/01568-sbml-l3v1.xml"),  // degenerate fast reaction: stiff surrogate
        QStringLiteral("01414/01414-sbml-l3v2.xml"),  // delay
        QStringLiteral("00349/00349-sbml-l3v2.xml"),  // events
    };
    for (const QString& m : models)
      for (const QString& task : {QStringLiteral("timecourse"), QStringLiteral("sensitivities")})
        QTest::newRow(qPrintable(m.left(5) + QLatin1Char(' ') + task)) << m << task;
  }
  void constructsRunInEveryTask() {
    QFETCH(QString, caseFile);
    QFETCH(QString, task);
    const QString file = QStringLiteral(SENSODE_SHARED_DIR "/sbml-test-suite/cases/") + caseFile;
    if (!QFileInfo::exists(file)) QSKIP("SBML Test Suite not found beside the checkout");
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("run.png"));
    const Run r = runGui({QStringLiteral("--open"), file, QStringLiteral("--run"), task,
                          QStringLiteral("--screenshot"), png});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(!QImage(png).isNull(), qPrintable(r.out + r.err));
  }

  void brokenModelExitsOne() {
    QTemporaryDir dir;
    const Run r = runGui({QStringLiteral("--open"),
                          QStringLiteral(SENSODE_TEST_DATA_DIR "/bad_sbml/fbc_objective.xml"),
                          QStringLiteral("--run"), QStringLiteral("timecourse"),
                          QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("x.png"))});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(QStringLiteral("fbc_objective.xml")), qPrintable(r.err));
  }

  void runNeedsAModel() {
    const Run r = runGui({QStringLiteral("--run"), QStringLiteral("timecourse")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains(QStringLiteral("--open")));
  }
};

QTEST_GUILESS_MAIN(TestGuiFlags)
#include "tst_gui_flags.moc"
