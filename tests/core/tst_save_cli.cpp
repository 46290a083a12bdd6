// SPDX-License-Identifier: MIT
// Saving from the command line, driven as a user drives it (QProcess on the built `sensode`):
//  - `simulate --set ... --save-model F.xml`, then `simulate F.xml`: the same time course (same
//    solver settings) to 1e-12 relative;
//  - `estimate --out DIR` writes DIR/problem.yaml (the best fit as nominal values, copies of the
//    other files), and `gradient DIR/problem.yaml --method none` evaluates the best objective to
//    1e-8 relative; the written parameter table keeps the original's columns, names, priors and
//    estimate flags (the decay problem: quoted names, CRLF, priors, a file name with a space);
//  - the one-line errors: an unwritable --save-model path, an --out folder that is the
//    problem's own.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>

#include "core/petab/petab_problem.h"
#include "core/petab/problem_writer.h"
#include "core/petab/tables.h"
#include "support/numeric_compare.h"

namespace {

namespace fs = std::filesystem;

const QString kCli = QStringLiteral(SENSODE_CLI_PATH);

struct CliRun {
  int exitCode = -1;
  QString out, err;
};

CliRun runCli(const QStringList& args) {
  QProcess p;
  p.start(kCli, args);
  CliRun r;
  if (!p.waitForStarted(10000) || !p.waitForFinished(300000)) {
    p.kill();
    p.waitForFinished();
    return r;
  }
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

QList<QStringList> csvRows(const QString& path) {
  QList<QStringList> rows;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return rows;
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine()).trimmed();
    if (!line.isEmpty()) rows << line.split(',');
  }
  return rows;
}

QJsonObject readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace

class TestSaveCli : public QObject {
  Q_OBJECT

 private slots:
  void init() { QVERIFY(dir_.isValid()); }

  void setThenSaveModelReloadsToTheSameTimeCourse() {
    // BIOMD0000000016: a compartment size, a species initial concentration, local parameters.
    const QString model = QStringLiteral(SENSODE_SHARED_DIR "/biomodels/BIOMD0000000016.xml");
    const QString saved = dir_.filePath("edited.xml");
    const QStringList solver = {"--method", "cvodes", "--rtol", "1e-9", "--atol", "1e-15",
                                "--t-end", "48", "--points", "97"};
    // A compartment size, a species initial concentration, two local parameters (ids
    // <reaction>.<local>).
    const QStringList edits = {"--set", "CYTOPLASM=2e-15", "--set", "M=0.2",
                               "--set", "rM.Vs=0.8",       "--set", "rTL.ks=0.5"};
    const CliRun first = runCli(QStringList{"simulate", model} + solver + edits +
                                QStringList{"--out", dir_.filePath("edited_run.csv"),
                                            "--save-model", saved});
    QVERIFY2(first.exitCode == 0, qPrintable(first.err));
    QVERIFY(QFile::exists(saved));
    const CliRun second =
        runCli(QStringList{"simulate", saved} + solver + QStringList{"--out", dir_.filePath("saved_run.csv")});
    QVERIFY2(second.exitCode == 0, qPrintable(second.err));

    const auto expected = csvRows(dir_.filePath("edited_run.csv"));
    const auto actual = csvRows(dir_.filePath("saved_run.csv"));
    QVERIFY(expected.size() == 98);
    QCOMPARE(actual.size(), expected.size());
    QCOMPARE(actual[0], expected[0]);
    for (int r = 1; r < expected.size(); ++r)
      for (int c = 0; c < expected[r].size(); ++c)
        SENSODE_EXPECT_CLOSE(actual[r][c].toDouble(), expected[r][c].toDouble(), 1e-300, 1e-12,
                             expected[0][c].toStdString(), r);
    // And the edits changed the run (the comparison is not of two unedited runs).
    const CliRun plain = runCli(QStringList{"simulate", model} + solver +
                                QStringList{"--out", dir_.filePath("plain.csv")});
    QVERIFY2(plain.exitCode == 0, qPrintable(plain.err));
    QVERIFY(csvRows(dir_.filePath("plain.csv")).last() != expected.last());
  }

  void saveModelToAnUnwritablePathNamesIt() {
    const QString model = QStringLiteral(SENSODE_SHARED_DIR "/biomodels/BIOMD0000000016.xml");
    const QString target = dir_.filePath("missing/folder/x.xml");
    const CliRun r = runCli({"simulate", model, "--save-model", target});
    QCOMPARE(r.exitCode, 1);
    const QStringList lines = r.err.trimmed().split('\n');
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].contains(target) && lines[0].contains("cannot write"), qPrintable(r.err));
  }

  void estimateOutWritesTheFittedProblem_data() {
    QTest::addColumn<QString>("problem");
    QTest::newRow("estimation_decay") << "estimation_decay";
    // Quoted parameter names, CRLF, priors, a fixed parameter, several files, a space in a name.
    QTest::newRow("decay") << "decay";
  }
  void estimateOutWritesTheFittedProblem() {
    QFETCH(QString, problem);
    const QString yaml = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/") + problem + "/problem.yaml";
    const QString out = dir_.filePath("fit_" + problem);
    const CliRun fit = runCli({"estimate", yaml, "--starts", "3", "--threads", "1", "--out", out});
    QVERIFY2(fit.exitCode == 0, qPrintable(fit.err));
    const QString written = out + "/problem.yaml";
    QVERIFY(QFile::exists(written));
    const QJsonObject summary = readJson(out + "/summary.json");
    const double best = summary.value("best_objective").toDouble(NAN);
    QVERIFY(std::isfinite(best));

    // The objective at the written nominal values, at the rtol the best objective has.
    const QString rtol = QString::number(summary.value("best_and_nominal_rtol").toDouble(), 'g', 17);
    const CliRun eval = runCli({"gradient", written, "--method", "none", "--rtol", rtol, "--stats",
                                dir_.filePath("eval.json")});
    QVERIFY2(eval.exitCode == 0, qPrintable(eval.err));
    const double objective = readJson(dir_.filePath("eval.json")).value("objective").toDouble(NAN);
    SENSODE_EXPECT_CLOSE(objective, best, 0, 1e-8, "objective at the written nominal values", 0);

    // The written table is the original one with the nominal values replaced.
    const fs::path original = fs::path(yaml.toStdString()).parent_path() / "parameters.tsv";
    const sensode::petab::Table before = sensode::petab::readTable(original, "parameters");
    const sensode::petab::Table after =
        sensode::petab::readTable(fs::path(out.toStdString()) / "parameters.tsv", "parameters");
    QCOMPARE(after.header, before.header);
    QCOMPARE(after.rows.size(), before.rows.size());
    const auto fitted = csvRows(out + "/parameters.csv");  // parameterId,scale,estimated,value,...
    for (std::size_t r = 0; r < before.rows.size(); ++r)
      for (const std::string& c : before.header) {
        if (c != "nominalValue" || before.cell(r, "estimate") == "0") {
          QCOMPARE(after.cell(r, c), before.cell(r, c));
          continue;
        }
        // nominalValue: the best fit, linear (parameters.csv column value_linear).
        const QString id = QString::fromStdString(before.cell(r, "parameterId"));
        double linear = NAN;
        for (const QStringList& row : fitted)
          if (row[0] == id) linear = row[7].toDouble();
        SENSODE_EXPECT_CLOSE(std::stod(after.cell(r, c)), linear, 0, 1e-12, id.toStdString(), long(r));
      }
    // Self-contained: the problem loads from the copies alone.
    const sensode::petab::Problem loaded = sensode::petab::loadProblem(written.toStdString());
    QCOMPARE(loaded.sbmlFile.parent_path(), fs::path(out.toStdString()));
    for (const auto& f : loaded.measurementFiles) QCOMPARE(f.parent_path(), fs::path(out.toStdString()));
  }

  void estimateOutIntoTheProblemsFolderIsRefused() {
    // A copy of the problem, so that nothing of the repository could be overwritten.
    const QString src = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/estimation_decay");
    const QString copy = dir_.filePath("own");
    QDir().mkpath(copy);
    for (const QString& f : QDir(src).entryList(QDir::Files)) QFile::copy(src + "/" + f, copy + "/" + f);
    const QByteArray before = [&] {
      QFile f(copy + "/parameters.tsv");
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    const CliRun r = runCli({"estimate", copy + "/problem.yaml", "--starts", "1", "--out", copy});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("cannot write") && r.err.contains("choose another folder"),
             qPrintable(r.err));
    QFile f(copy + "/parameters.tsv");
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), before);
  }

 private:
  QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestSaveCli)
#include "tst_save_cli.moc"
