// SPDX-License-Identifier: MIT
// The `sensode` command-line tool, driven as a user drives it (QProcess on the built binary):
// simulate a suite case and compare with the suite's results at the suite's tolerances, the
// --stats JSON keys of the command-line contract, --set, the one-line error messages, and a short
// test-suite run with its report and tag table.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QRegularExpression>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>
#include <cmath>

#include "support/numeric_compare.h"

namespace {

const QString kCli = QStringLiteral(SENSODE_CLI_PATH);
const QString kCases = QStringLiteral(SENSODE_SHARED_DIR "/sbml-test-suite/cases");

struct CliRun {
  int exitCode = -1;
  bool crashed = false;
  QString out;
  QStringList errLines;  // non-empty stderr lines
};

CliRun runCli(const QStringList& args, int timeoutMs = 300000) {
  QProcess p;
  p.start(kCli, args);
  CliRun r;
  if (!p.waitForStarted(10000) || !p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    r.crashed = true;
    return r;
  }
  r.crashed = p.exitStatus() != QProcess::NormalExit;
  r.exitCode = p.exitCode();
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  const QString err = QString::fromUtf8(p.readAllStandardError());
  for (const QString& line : err.split('\n'))
    if (!line.trimmed().isEmpty()) r.errLines << line;
  return r;
}

// A CSV file as header + numeric rows (NaN / INF spelled the suite's way, any case).
struct Csv {
  QStringList header;
  QList<QList<double>> rows;
};

bool parseCell(const QString& text, double& v) {
  const QString t = text.trimmed().toLower();
  if (t == "nan")
    v = std::nan("");
  else if (t == "inf")
    v = INFINITY;
  else if (t == "-inf")
    v = -INFINITY;
  else {
    bool ok = false;
    v = t.toDouble(&ok);
    return ok;
  }
  return true;
}

Csv readCsv(const QString& path) {
  Csv csv;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return csv;
  bool first = true;
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine()).trimmed();
    if (line.isEmpty()) continue;
    const QStringList cells = line.split(',');
    if (first) {
      first = false;
      csv.header = cells;
      continue;
    }
    QList<double> row;
    for (const QString& c : cells) {
      double v = 0;
      if (!parseCell(c, v)) return {};
      row << v;
    }
    csv.rows << row;
  }
  return csv;
}

// key: value lines of NNNNN-settings.txt.
QMap<QString, QString> readSettings(const QString& path) {
  QMap<QString, QString> s;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return s;
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine());
    const int colon = line.indexOf(':');
    if (colon > 0) s[line.left(colon).trimmed()] = line.mid(colon + 1).trimmed();
  }
  return s;
}

QString readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly | QIODevice::Text) ? QString::fromUtf8(f.readAll()) : QString();
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void helpAndVersion();
  void simulateMatchesSuiteCase();
  void statsJsonHasContractKeys();
  void setOverridesParameter();
  void explicitTimes();
  void badInputs_data();
  void badInputs();
  void malformedSbml();
  void testSuiteSmallRange();

 private:
  QTemporaryDir tmp_;
  QString case1_;
};

void TestCli::initTestCase() {
  QVERIFY2(QFileInfo::exists(kCli), qPrintable("no sensode binary at " + kCli));
  QVERIFY(tmp_.isValid());
  case1_ = kCases + "/00001/00001-sbml-l3v2.xml";
  QVERIFY2(QFileInfo::exists(case1_), qPrintable("missing " + case1_));
}

void TestCli::helpAndVersion() {
  const CliRun help = runCli({"--help"});
  QCOMPARE(help.exitCode, 0);
  QVERIFY(help.out.contains("simulate"));
  QVERIFY(help.out.contains("test-suite"));
  const CliRun version = runCli({"--version"});
  QCOMPARE(version.exitCode, 0);
  QVERIFY(version.out.startsWith("sensode " SENSODE_VERSION));
  const CliRun simHelp = runCli({"simulate", "--help"});
  QCOMPARE(simHelp.exitCode, 0);
  QVERIFY(simHelp.out.contains("--t-end"));
}

// Case 00001 (S1 → S2, k1 = 1, compartment size 1, so amounts = concentrations) at the suite's
// own output times and tolerances.
void TestCli::simulateMatchesSuiteCase() {
  const QMap<QString, QString> settings = readSettings(kCases + "/00001/00001-settings.txt");
  const double duration = settings.value("duration").toDouble();
  const int steps = settings.value("steps").toInt();
  const double atol = settings.value("absolute").toDouble();
  const double rtol = settings.value("relative").toDouble();
  QVERIFY(duration > 0 && steps > 0 && atol > 0 && rtol > 0);

  const QString out = tmp_.filePath("case1.csv");
  const CliRun r = runCli({"simulate", case1_, "--t-end", QString::number(duration), "--points",
                           QString::number(steps + 1), "--out", out, "--rtol", "1e-8"});
  QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.errLines.join('\n')));
  QVERIFY(r.errLines.isEmpty());
  QVERIFY(r.out.contains("case00001"));

  const Csv actual = readCsv(out);
  const Csv expected = readCsv(kCases + "/00001/00001-results.csv");
  QCOMPARE(actual.header.value(0), QString("time"));
  QCOMPARE(actual.rows.size(), steps + 1);
  QCOMPARE(expected.rows.size(), steps + 1);
  for (int j = 1; j < expected.header.size(); ++j) {
    const int col = actual.header.indexOf(expected.header[j]);
    QVERIFY2(col > 0,
             qPrintable("no column " + expected.header[j] + " in " + actual.header.join(',')));
    for (int i = 0; i < expected.rows.size(); ++i) {
      SENSODE_EXPECT_CLOSE(actual.rows[i][0], expected.rows[i][0], 1e-12, 1e-12, "time", i);
      SENSODE_EXPECT_CLOSE(actual.rows[i][col], expected.rows[i][j], atol, rtol,
                           expected.header[j].toStdString(), i);
    }
  }
}

void TestCli::statsJsonHasContractKeys() {
  const QString stats = tmp_.filePath("case1.json");
  const CliRun r = runCli({"simulate", case1_, "--stats", stats});
  QVERIFY2(r.exitCode == 0, qPrintable(r.errLines.join('\n')));
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(readAll(stats).toUtf8(), &error);
  QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
  QVERIFY(doc.isObject());
  const QJsonObject o = doc.object();
  for (const char* key : {"method", "wall_seconds", "steps", "rhs_evals", "jac_evals",
                          "lu_factorizations", "newton_iterations", "error_test_failures",
                          "newton_failures", "n_states", "n_parameters", "termination", "message"})
    QVERIFY2(o.contains(key), key);
  QCOMPARE(o["method"].toString(), QString("odesd"));  // the default method
  QVERIFY(o["wall_seconds"].isDouble() && o["wall_seconds"].toDouble() >= 0);
  QVERIFY(o["steps"].toDouble() > 0);
  QVERIFY(o["rhs_evals"].toDouble() >= o["steps"].toDouble());
  QCOMPARE(o["n_states"].toInt(), 2);
  QVERIFY(o["n_parameters"].toInt() >= 1);
  QCOMPARE(o["message"].toString(), QString());
  QVERIFY(!o.contains("repeat_wall_seconds"));  // benchmarks only (SENSODE_BENCH_REPEAT)

  // SENSODE_BENCH_REPEAT=N: the same run N more times, their wall times listed.
  qputenv("SENSODE_BENCH_REPEAT", "2");
  const CliRun repeated = runCli({"simulate", case1_, "--stats", stats});
  qunsetenv("SENSODE_BENCH_REPEAT");
  QVERIFY2(repeated.exitCode == 0, qPrintable(repeated.errLines.join('\n')));
  const QJsonObject r2 = QJsonDocument::fromJson(readAll(stats).toUtf8()).object();
  const QJsonArray walls = r2["repeat_wall_seconds"].toArray();
  QCOMPARE(walls.size(), 2);
  for (const auto& w : walls) QVERIFY(w.isDouble() && w.toDouble() > 0);
  QCOMPARE(r2["steps"].toDouble(), o["steps"].toDouble());  // the measured run is unchanged
}

// S1(t) = 1.5e-4·exp(−k1·t): doubling k1 must give exp(−2t).
void TestCli::setOverridesParameter() {
  const QString out = tmp_.filePath("k1.csv");
  const CliRun r = runCli({"simulate", case1_, "--t-end", "5", "--points", "11", "--set", "k1=2",
                           "--rtol", "1e-9", "--out", out});
  QVERIFY2(r.exitCode == 0, qPrintable(r.errLines.join('\n')));
  const Csv csv = readCsv(out);
  const int s1 = csv.header.indexOf("S1");
  const int s2 = csv.header.indexOf("S2");
  QVERIFY(s1 > 0 && s2 > 0);
  QCOMPARE(csv.rows.size(), 11);
  for (int i = 0; i < csv.rows.size(); ++i) {
    const double t = csv.rows[i][0];
    SENSODE_EXPECT_CLOSE(t, 0.5 * i, 1e-12, 1e-12, "time", i);
    SENSODE_EXPECT_CLOSE(csv.rows[i][s1], 1.5e-4 * std::exp(-2 * t), 1e-10, 1e-6, "S1", i);
    SENSODE_EXPECT_CLOSE(csv.rows[i][s2], 1.5e-4 * (1 - std::exp(-2 * t)), 1e-10, 1e-6, "S2", i);
  }
  // A repeated --set: the species initial value as well.
  const QString out2 = tmp_.filePath("k1s1.csv");
  const CliRun r2 = runCli({"simulate", case1_, "--t-end", "1", "--points", "2", "--set", "k1=2",
                            "--set", "S1=3e-4", "--out", out2});
  QVERIFY2(r2.exitCode == 0, qPrintable(r2.errLines.join('\n')));
  const Csv csv2 = readCsv(out2);
  QCOMPARE(csv2.rows.size(), 2);
  SENSODE_EXPECT_CLOSE(csv2.rows[1][csv2.header.indexOf("S1")], 3e-4 * std::exp(-2.0), 1e-10, 1e-5,
                       "S1", 1);
}

void TestCli::explicitTimes() {
  const QString out = tmp_.filePath("times.csv");
  const CliRun r = runCli({"simulate", case1_, "--times", "0,0.25,1,3", "--out", out});
  QVERIFY2(r.exitCode == 0, qPrintable(r.errLines.join('\n')));
  const Csv csv = readCsv(out);
  QCOMPARE(csv.rows.size(), 4);
  const QList<double> times = {0, 0.25, 1, 3};
  for (int i = 0; i < 4; ++i) SENSODE_EXPECT_CLOSE(csv.rows[i][0], times[i], 0, 0, "time", i);
}

// Every mistake: non-zero exit and exactly one stderr line that names the problem.
void TestCli::badInputs_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("mentions");
  QTest::addColumn<int>("exitCode");  // 0 = any non-zero
  const QString model = kCases + "/00001/00001-sbml-l3v2.xml";
  QTest::newRow("missing file") << QStringList{"simulate", "/nonexistent/model.xml"}
                                << "/nonexistent/model.xml" << 1;
  QTest::newRow("unknown --set id")
      << QStringList{"simulate", model, "--set", "kNope=1"} << "kNope" << 1;
  QTest::newRow("--set without =") << QStringList{"simulate", model, "--set", "k1"} << "k1" << 2;
  QTest::newRow("bad --set value")
      << QStringList{"simulate", model, "--set", "k1=abc"} << "abc" << 2;
  QTest::newRow("bad number for --rtol")
      << QStringList{"simulate", model, "--rtol", "abc"} << "--rtol" << 2;
  QTest::newRow("negative --rtol") << QStringList{"simulate", model, "--rtol", "-1"} << "rtol" << 2;
  QTest::newRow("missing value") << QStringList{"simulate", model, "--t-end"} << "--t-end" << 2;
  QTest::newRow("bad --points") << QStringList{"simulate", model, "--points", "1.5"} << "--points"
                                << 2;
  QTest::newRow("unknown flag") << QStringList{"simulate", model, "--frobnicate"} << "--frobnicate"
                                << 2;
  QTest::newRow("unknown method") << QStringList{"simulate", model, "--method", "euler"} << "euler"
                                  << 2;
  QTest::newRow("no model") << QStringList{"simulate"} << "MODEL.xml" << 2;
  QTest::newRow("unknown subcommand") << QStringList{"frobnicate"} << "frobnicate" << 2;
  QTest::newRow("sensitivities: unknown method")
      << QStringList{"sensitivities", model, "--method", "adjoint"} << "adjoint" << 2;
  QTest::newRow("bad --cases") << QStringList{"test-suite", kCases, "--cases", "5-x"} << "5-x" << 2;
  QTest::newRow("missing cases dir")
      << QStringList{"test-suite", "/nonexistent/cases"} << "/nonexistent/cases" << 1;
  // Imports, then cannot be compiled: the message still names the file and the element.
  const QString factorial =
      QStringLiteral(SENSODE_TEST_DATA_DIR) + "/bad_sbml/factorial_of_state.xml";
  for (const char* command : {"simulate", "sensitivities"}) {
    QTest::newRow(qPrintable(QString("%1: factorial of a state").arg(command)))
        << QStringList{command, factorial, "--t-end", "1"}
        << factorial + ": element 'x': its rate of change: cannot differentiate factorial((1 + x))"
        << 1;
  }
  QTest::newRow("unwritable --out")
      << QStringList{"simulate", model, "--out", "/nonexistent/dir/out.csv"}
      << "/nonexistent/dir/out.csv" << 1;
}

void TestCli::badInputs() {
  QFETCH(QStringList, args);
  QFETCH(QString, mentions);
  QFETCH(int, exitCode);
  const CliRun r = runCli(args);
  QVERIFY(!r.crashed);
  QVERIFY2(r.exitCode != 0, "exit status 0");
  if (exitCode != 0) QCOMPARE(r.exitCode, exitCode);
  QVERIFY2(r.errLines.size() == 1,
           qPrintable(
               QString("%1 stderr lines:\n%2").arg(r.errLines.size()).arg(r.errLines.join('\n'))));
  QVERIFY2(r.errLines.front().startsWith("sensode: "), qPrintable(r.errLines.front()));
  QVERIFY2(r.errLines.front().contains(mentions), qPrintable(r.errLines.front()));
}

void TestCli::malformedSbml() {
  const QString path = tmp_.filePath("broken.xml");
  {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Text));
    f.write(
        "<?xml version=\"1.0\"?>\n<sbml xmlns=\"http://www.sbml.org/sbml/level3/version2/core\""
        " level=\"3\" version=\"2\"><model id=\"m\"><listOfSpecies>\n");
  }
  const CliRun r = runCli({"simulate", path});
  QVERIFY(!r.crashed);
  QVERIFY(r.exitCode != 0);
  QCOMPARE(r.errLines.size(), 1);
  QVERIFY2(r.errLines.front().contains("broken.xml"), qPrintable(r.errLines.front()));
}

void TestCli::testSuiteSmallRange() {
  const QString report = tmp_.filePath("suite.tsv");
  const CliRun r = runCli({"test-suite", kCases, "--cases", "1-20", "--report", report});
  QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.errLines.join('\n')));
  QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
  QVERIFY(!lines.isEmpty());
  const QRegularExpression closing(R"(^(\d+) passed, (\d+) failed, (\d+) skipped$)");
  const auto m = closing.match(lines.last());
  QVERIFY2(m.hasMatch(), qPrintable(lines.last()));
  QCOMPARE(m.captured(1).toInt() + m.captured(2).toInt() + m.captured(3).toInt(), 20);
  lines.removeLast();
  QCOMPARE(lines.size(), 20);
  const QRegularExpression caseLine(R"(^(\d{5}) (passed|failed \S.*|skipped \S.*)$)");
  for (int i = 0; i < lines.size(); ++i) {
    const auto c = caseLine.match(lines[i]);
    QVERIFY2(c.hasMatch(), qPrintable(lines[i]));
    QCOMPARE(c.captured(1).toInt(), i + 1);  // in case order
  }

  QStringList rows = readAll(report).split('\n', Qt::SkipEmptyParts);
  QCOMPARE(rows.value(0), QString("case\tstatus\treason"));
  QCOMPARE(rows.size(), 21);
  QCOMPARE(rows[1].section('\t', 0, 0), QString("00001"));

  const QString tags = tmp_.filePath("suite.tags.tsv");
  QVERIFY2(QFileInfo::exists(tags), qPrintable(tags));
  const QStringList tagRows = readAll(tags).split('\n', Qt::SkipEmptyParts);
  QCOMPARE(tagRows.value(0), QString("tag\tpassed\tfailed\tskipped"));
  bool sawSpecies = false;
  for (const QString& row : tagRows.mid(1)) {
    const QStringList cells = row.split('\t');
    QCOMPARE(cells.size(), 4);
    if (cells[0] == "Species") {
      sawSpecies = true;
      QCOMPARE(cells[1].toInt() + cells[2].toInt() + cells[3].toInt(), 20);
    }
  }
  QVERIFY(sawSpecies);
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
