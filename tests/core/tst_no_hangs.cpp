// SPDX-License-Identifier: MIT
// No input hangs (issue 30, item 5): SBML Test Suite case 01431 with the stoichiometry of B set
// to 1e308 (dB/dt = 1 − 1e308 as a reactant, 1e308 − 1 as a product) made `simulate` and
// `sensitivities` spin for minutes with odeSD and CVODES: CVODES's initial step size underflowed
// to 0 (|f|/|x| overflows), the next step's coefficients were 0/0, and SUNDIALS' Newton solver
// retried a NaN step size without end. Through the CLI as a user runs it, every method and task
// must end within kLimitMs with exit status 1 and one line naming B and a time, or with a finite
// result; the 1e300 model (B(t) = 1 + (1 − 1e300)·t, finite up to t = 10) must still simulate to
// its analytic solution.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QRegularExpression>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>

#include "support/cli_process.h"

namespace {

const QString kCli = QStringLiteral(SENSODE_CLI_PATH);
const QString kCase =
    QStringLiteral(SENSODE_SHARED_DIR "/sbml-test-suite/cases/01431/01431-sbml-l3v2.xml");
// Both tasks take 40 ms on the unmutated model; 20 s is the fuzz tests' hang limit.
constexpr int kLimitMs = 20000;

// Case 01431 with B's reactant (first) or product (second) stoichiometry set to `value`.
QByteArray mutant(const QByteArray& value, bool product) {
  QFile f(kCase);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QByteArray text = f.readAll();
  const QByteArray from = "<speciesReference species=\"B\" stoichiometry=\"1\"";
  const qsizetype at = product ? text.lastIndexOf(from) : text.indexOf(from);
  if (at < 0) return {};
  return text.replace(at, from.size(),
                      "<speciesReference species=\"B\" stoichiometry=\"" + value + '"');
}

// A→B, B→A with stoichiometries of ±1e308 and a third species D made and used by both.
const QByteArray kMoieties1e308 =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<sbml xmlns=\"http://www.sbml.org/sbml/level3/version2/core\" level=\"3\" version=\"2\">\n"
    "  <model id=\"cons\">\n"
    "    <listOfCompartments><compartment id=\"C\" spatialDimensions=\"3\" size=\"1\" constant=\"true\"/></listOfCompartments>\n"
    "    <listOfSpecies>\n"
    "      <species id=\"A\" compartment=\"C\" initialConcentration=\"1\" hasOnlySubstanceUnits=\"false\" boundaryCondition=\"false\" constant=\"false\"/>\n"
    "      <species id=\"B\" compartment=\"C\" initialConcentration=\"1\" hasOnlySubstanceUnits=\"false\" boundaryCondition=\"false\" constant=\"false\"/>\n"
    "      <species id=\"D\" compartment=\"C\" initialConcentration=\"1\" hasOnlySubstanceUnits=\"false\" boundaryCondition=\"false\" constant=\"false\"/>\n"
    "    </listOfSpecies>\n"
    "    <listOfParameters><parameter id=\"k\" value=\"1e-300\" constant=\"true\"/></listOfParameters>\n"
    "    <listOfReactions>\n"
    "      <reaction id=\"R1\" reversible=\"false\">\n"
    "        <listOfReactants><speciesReference species=\"A\" stoichiometry=\"1e308\" constant=\"true\"/></listOfReactants>\n"
    "        <listOfProducts><speciesReference species=\"B\" stoichiometry=\"1e308\" constant=\"true\"/><speciesReference species=\"D\" stoichiometry=\"-1e308\" constant=\"true\"/></listOfProducts>\n"
    "        <kineticLaw><math xmlns=\"http://www.w3.org/1998/Math/MathML\"><apply><times/><ci>k</ci><ci>A</ci></apply></math></kineticLaw>\n"
    "      </reaction>\n"
    "      <reaction id=\"R2\" reversible=\"false\">\n"
    "        <listOfReactants><speciesReference species=\"B\" stoichiometry=\"1e308\" constant=\"true\"/></listOfReactants>\n"
    "        <listOfProducts><speciesReference species=\"A\" stoichiometry=\"1e308\" constant=\"true\"/><speciesReference species=\"D\" stoichiometry=\"1e308\" constant=\"true\"/></listOfProducts>\n"
    "        <kineticLaw><math xmlns=\"http://www.w3.org/1998/Math/MathML\"><apply><times/><ci>k</ci><ci>B</ci></apply></math></kineticLaw>\n"
    "      </reaction>\n"
    "    </listOfReactions>\n"
    "  </model>\n"
    "</sbml>\n";

}  // namespace

class TestNoHangs : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir tmp_;

  QString write(const QString& name, const QByteArray& text) {
    const QString path = tmp_.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) return {};
    return path;
  }

 private slots:
  void overflowingRateEnds_data() {
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("method");
    QTest::addColumn<bool>("product");
    for (const char* task : {"simulate", "sensitivities"})
      for (const char* method : {"odesd", "cvodes"})
        for (const bool product : {false, true})
          QTest::addRow("%s %s B %s", task, method, product ? "product" : "reactant")
              << task << method << product;
  }

  void overflowingRateEnds() {
    QFETCH(QString, task);
    QFETCH(QString, method);
    QFETCH(bool, product);
    QVERIFY(tmp_.isValid());
    const QString model = write(QStringLiteral("01431-1e308-%1.xml").arg(product), mutant("1e308", product));
    QVERIFY2(!model.isEmpty(), qPrintable("cannot write the mutant of " + kCase));
    const QString csv = tmp_.filePath(QStringLiteral("out-%1-%2-%3.csv").arg(task, method).arg(product));
    QStringList args{task, model, "--method", method, "--t-end", "10", "--points", "11", "--out", csv};
    if (task == "sensitivities") args << "--params" << "all";
    const auto run = sensode::test::runProcess(kCli, args, kLimitMs);
    const QString stderrText = run.errLines.join(" | ");
    QVERIFY2(!run.timedOut, qPrintable(QString("still running after %1 s").arg(kLimitMs / 1000)));
    QVERIFY2(sensode::test::contractViolation(run, model).isEmpty(),
             qPrintable(sensode::test::contractViolation(run, model)));
    if (run.exitCode == 0) {
      const QString bad = sensode::test::firstNonFiniteCell(csv);
      QVERIFY2(bad.isEmpty(), qPrintable("exit status 0 with " + bad));
      return;
    }
    // "... state 'B' became non-finite (-inf) at t = 1.79769 ..." or "the rate of change of 'B'
    // is -1e+308 ... at t = 0": the state and a time.
    QVERIFY2(stderrText.contains("'B'"), qPrintable("the message names no state B: " + stderrText));
    QVERIFY2(stderrText.contains(QRegularExpression(QStringLiteral("t = [-0-9.e+]+"))),
             qPrintable("the message names no time: " + stderrText));
    qInfo().noquote() << QStringLiteral("%1 s: ").arg(run.wallSeconds, 0, 'f', 2) + stderrText;
  }

  // Just inside the doubles: B(t) = 1 + (1 − 1e300)·t reaches −1e301 at t = 10.
  void largeFiniteRateStillSimulates_data() {
    QTest::addColumn<QString>("method");
    QTest::newRow("odesd") << "odesd";
    QTest::newRow("cvodes") << "cvodes";
  }

  void largeFiniteRateStillSimulates() {
    QFETCH(QString, method);
    QVERIFY(tmp_.isValid());
    const QString model = write(QStringLiteral("01431-1e300.xml"), mutant("1e300", false));
    QVERIFY(!model.isEmpty());
    const QString csv = tmp_.filePath("1e300-" + method + ".csv");
    const auto run = sensode::test::runProcess(
        kCli, {"simulate", model, "--method", method, "--t-end", "10", "--points", "11", "--out", csv},
        kLimitMs);
    QVERIFY2(run.exitCode == 0 && !run.timedOut && !run.crashed, qPrintable(run.errLines.join(" | ")));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList header = QString::fromUtf8(f.readLine()).trimmed().split(',');
    const qsizetype columnB = header.indexOf("B");
    QVERIFY2(columnB > 0, qPrintable(header.join(',')));
    int rows = 0;
    while (!f.atEnd()) {
      const QStringList cells = QString::fromUtf8(f.readLine()).trimmed().split(',');
      if (cells.size() <= columnB) continue;
      const double t = cells[0].toDouble();
      const double b = cells[columnB].toDouble();
      const double exact = 1 + (1 - 1e300) * t;
      // |b − exact| ≤ 1e-4·|exact| + 1e-4: the suite's tolerances for this case.
      QVERIFY2(std::abs(b - exact) <= 1e-4 * std::abs(exact) + 1e-4,
               qPrintable(QString("B(%1) = %2, exact %3").arg(t).arg(b).arg(exact)));
      ++rows;
    }
    QCOMPARE(rows, 11);
  }

  // The same model run on to t = 1e9: B = 1 + (1 − 1e300)·t passes −1.8e308 at t = 1.8e8. The
  // run must stop there naming B as a state that became −inf (a finite CSV would be wrong).
  void stateOverflowIsNamed_data() { largeFiniteRateStillSimulates_data(); }

  void stateOverflowIsNamed() {
    QFETCH(QString, method);
    QVERIFY(tmp_.isValid());
    const QString model = write(QStringLiteral("01431-1e300-long.xml"), mutant("1e300", false));
    QVERIFY(!model.isEmpty());
    const auto run = sensode::test::runProcess(
        kCli, {"simulate", model, "--method", method, "--t-end", "1e9", "--points", "11", "--out",
               tmp_.filePath("long-" + method + ".csv")},
        kLimitMs);
    QVERIFY2(sensode::test::isClearError(run, model),
             qPrintable(sensode::test::contractViolation(run, model) + " | " + run.errLines.join(" | ")));
    QVERIFY2(run.errLines.front().contains(QStringLiteral("state 'B' became non-finite (-inf)")),
             qPrintable(run.errLines.front()));
  }

  // Stoichiometries of ±1e308 in two coupled reactions: the conservation-law analysis's residual
  // check overflows (|Γ|·|N| = inf) and fails. That analysis only describes the moieties in
  // simulate's summary, so the run must still succeed with a finite CSV and say "not determined".
  void overflowingConservationAnalysisDoesNotFailTheRun() {
    QVERIFY(tmp_.isValid());
    const QString model = write(QStringLiteral("moieties-1e308.xml"), kMoieties1e308);
    const QString csv = tmp_.filePath(QStringLiteral("moieties.csv"));
    const QString json = tmp_.filePath(QStringLiteral("moieties.json"));
    const auto run = sensode::test::runProcess(kCli, {"simulate", model, "--out", csv, "--stats", json}, kLimitMs);
    QVERIFY2(run.exitCode == 0 && !run.timedOut && !run.crashed, qPrintable(run.errLines.join(" | ")));
    QVERIFY2(sensode::test::firstNonFiniteCell(csv).isEmpty(), qPrintable(sensode::test::firstNonFiniteCell(csv)));
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("\"conservation_laws\": \"not determined (conservation laws: "));
  }

  // Brannmark with one measurement time of 1e308 (once fuzz petab mutant-0094): at its steady
  // state CVODES's step stops growing near 3e8, so 1e308 is out of reach; the forward-sensitivity
  // gradient spent all 1e6 steps (27 s of CPU) on that. It must say "too much work" well within
  // the limit.
  void unreachableMeasurementTimeEndsEarly() {
    QVERIFY(tmp_.isValid());
    const QDir source(QStringLiteral(SENSODE_SHARED_DIR "/petab/Brannmark_JBC2010"));
    const QDir target(tmp_.filePath(QStringLiteral("brannmark")));
    QVERIFY(QDir().mkpath(target.path()));
    for (const QString& f : source.entryList({"*.tsv", "*.yaml", "*.xml"}, QDir::Files))
      QVERIFY(QFile::copy(source.filePath(f), target.filePath(f)));
    const QString table = target.filePath(QStringLiteral("measurementData_Brannmark_JBC2010.tsv"));
    QFile f(table);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QList<QByteArray> lines = f.readAll().split('\n');
    f.close();
    const qsizetype timeColumn = lines[0].split('\t').indexOf("time");
    QVERIFY(timeColumn >= 0);
    // The first measurement at t = 30 of the time-course experiment (the fuzz mutant's row).
    qsizetype row = 1;
    while (row < lines.size() && lines[row].split('\t').value(timeColumn) != "30") ++row;
    QVERIFY(row < lines.size());
    QList<QByteArray> cells = lines[row].split('\t');
    cells[timeColumn] = "1e308";
    lines[row] = cells.join('\t');
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(lines.join('\n'));
    f.close();
    const QString yaml = target.filePath(QStringLiteral("Brannmark_JBC2010.yaml"));
    const auto run = sensode::test::runProcess(
        kCli, {"gradient", yaml, "--out", target.filePath(QStringLiteral("g.csv"))}, kLimitMs);
    QVERIFY2(sensode::test::isClearError(run, yaml),
             qPrintable(sensode::test::contractViolation(run, yaml) + " | " + run.errLines.join(" | ")));
    QVERIFY2(run.errLines.front().contains(QStringLiteral("too much work")), qPrintable(run.errLines.front()));
    qInfo("%.2f s", run.wallSeconds);
  }
};

QTEST_GUILESS_MAIN(TestNoHangs)
#include "tst_no_hangs.moc"
