// SPDX-License-Identifier: MIT
// The model corpus through the CLI, as a user runs it (issue 16): every curated BioModel and every
// SBML model of the PEtab problems simulates with default settings over its natural time span
// (corpus_models.h) and computes sensitivities w.r.t. all parameters with the default method —
//   sensode simulate MODEL --t-end T --out sim.csv --stats sim.json
//   sensode sensitivities MODEL --params all --t-end T --out sens.csv --stats sens.json
// — or is refused with a one-line message naming the unsupported construct ("unsupported SBML
// feature: events"; clearRefusal). A crash, a hang (each run has a time limit), a non-finite
// number in a CSV written with exit status 0 that the run's --stats does not list among its
// "undefined_outputs" (an output whose own formula has no value there, issue 30: exactly those of
// kUndefinedOutputs, no more, no fewer), or any other failure fails the model's row. So does a
// time course that is finite but wrong: it is compared with CVODES at rtol 1e-10, atol 1e-14 on the same output times
// (kReference*), and each quantity's error relative to its range must stay below
// kMaxScaledError, or within kWorseThanCvodes times CVODES's error at the same tolerances. When
// the reference run itself fails, the row says so and is not checked.
//
// Models that fail today are listed in known_failures.tsv beside this file (`model<TAB>reason`,
// '#' comments): their rows are expected failures, and a listed model that passes fails the test
// (XPASS), so the list stays honest — take it off the list. Reasons starting "slow:" (the run
// reached the time limit) only warn when the model passes: an idle machine may finish it in time.
//
// The per-model table (states, parameters, method, fallbacks, steps and wall time of both runs,
// outcome) is written as Markdown to $SENSODE_CORPUS_REPORT, else build/corpus-report.md;
// docs/benchmarks/corpus.md holds a copy with the figures of the last recorded run.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QMap>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
#include <vector>

#include "corpus/corpus_models.h"
#include "corpus/trajectory_compare.h"
#include "support/cli_process.h"

namespace {

using sensode::test::CliRun;
using sensode::test::CorpusModel;

const QString kCli = QStringLiteral(SENSODE_CLI_PATH);
const QString kShared = QStringLiteral(SENSODE_SHARED_DIR);
// A hang, not a slow model: the slowest passing runs, the sensitivities of Lang (124 states × 445
// parameters, t = 0–136472) and of BIOMD0000000497 (280 × 2328, a 3.6 GB CSV), take 40–60 s of
// CPU; the limit leaves room for a shared machine and for ctest running two tests at once.
constexpr int kRunTimeoutMs = 180000;

// The accuracy check. The default run's tolerances are rtol 1e-6, atol 1e-12; its global error
// relative to a quantity's range is below 1e-2 on 88 of the 90 corpus models it simulates (measured
// 2026-11-26, the report's "error" column), while a run that went on along a wrong solution is
// off by the quantity's whole range or more (BIOMD0000000009 with a wrong Newton root: 13.6).
// The two others are as far off with CVODES at the same tolerances (Crauste's blow-up race:
// 0.44 both; BIOMD0000000119's spikes: 0.017 against CVODES's 0.044).
const QStringList kReferenceArgs{"--method", "cvodes", "--rtol", "1e-10", "--atol", "1e-14"};
constexpr double kMaxScaledError = 1e-2;
// Beyond it the default run must still be within this factor of CVODES's own error at the same
// tolerances (below).
constexpr double kWorseThanCvodes = 10;
// Added to each quantity's range: errors of a quantity that stays below ~1e-9 are at the level of
// the default absolute tolerance and say nothing about the solution.
constexpr double kScaleFloor = 1e-9;

// Outputs whose own formula has no value at some output times of the default runs, as "id@t":
// Laske's F_rnp_nuc = 100·RNP_nuc/(RNP_nuc + RNP_cyt) is 0/0 at t = 0, before any virus has
// entered. Both commands must succeed with NaN there and list exactly these.
const QMap<QString, QStringList> kUndefinedOutputs{
    {QStringLiteral("petab/Laske_PLOSComputBiol2019/model_Laske_PLOSComputBiol2019.xml"),
     {QStringLiteral("F_rnp_nuc@0")}},
};

struct RunFigures {
  QString method;
  long steps = -1;
  double seconds = -1;  // the task's own wall time (stats wall_seconds), without model loading
  QStringList fallbacks;
  long states = -1;
  long parameters = -1;
};

struct ReportRow {
  CorpusModel model;
  RunFigures simulate, sensitivities;
  QString outcome;  // "ok", "refused: ...", "FAILED: ...", "FAILED (known): ..."
  QString accuracy;  // the time course's scaled error against the reference, or why there is none
};

QJsonObject readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

RunFigures figuresFrom(const QJsonObject& stats) {
  RunFigures f;
  f.method = stats.value("method").toString();
  f.steps = stats.value("steps").toInteger(-1);
  f.seconds = stats.value("wall_seconds").toDouble(-1);
  for (const QJsonValue& v : stats.value("fallbacks").toArray()) f.fallbacks << v.toString();
  f.states = stats.value("n_states").toInteger(-1);
  f.parameters = stats.value("n_parameters").toInteger(-1);
  return f;
}

// The message of an unsupported-construct refusal without the "sensode: FILE: " prefix ("element
// 'E1': unsupported SBML feature: events"), or empty.
QString clearRefusal(const CliRun& run, const QString& file) {
  if (!sensode::test::isClearError(run, file)) return {};
  const QString& line = run.errLines.front();
  if (!line.contains("unsupported SBML feature: ")) return {};
  return line.mid(QString("sensode: " + file + ": ").size());
}

// Runs one CLI command on `model`; empty when it kept the contract and wrote a finite CSV, else
// what went wrong. `refusal` gets the reason of an unsupported-construct refusal.
QString runAndCheck(const QString& command, const CorpusModel& model, const QStringList& extra,
                    const QDir& dir, QString& refusal, RunFigures& figures, bool keepCsv = false) {
  const QString csv = dir.filePath(command + ".csv");
  const QString json = dir.filePath(command + ".json");
  QFile::remove(csv);
  QFile::remove(json);
  QStringList args{command, model.file, "--t-end", QString::number(model.tEnd, 'g', 17)};
  args << extra << "--out" << csv << "--stats" << json;
  const CliRun run = sensode::test::runProcess(kCli, args, kRunTimeoutMs);
  if (const QString v = sensode::test::contractViolation(run, model.file); !v.isEmpty())
    return command + ": " + v;
  if (run.exitCode != 0) {
    refusal = clearRefusal(run, model.file);
    if (!refusal.isEmpty()) return {};
    return command + ": " + run.errLines.front().mid(QString("sensode: " + model.file + ": ").size());
  }
  figures = figuresFrom(readJson(json));
  if (sensode::test::csvDataRows(csv) <= 0) return command + ": exit status 0 but no CSV rows";
  if (const QString bad = sensode::test::firstUnlistedNonFiniteCell(csv, json); !bad.isEmpty())
    return command + ": non-finite value in the CSV written with exit status 0 (" + bad + ")";
  const QStringList undefined = sensode::test::undefinedOutputsOf(json);
  if (undefined != kUndefinedOutputs.value(model.name))
    return command + ": undefined outputs [" + undefined.join(", ") + "], expected [" +
           kUndefinedOutputs.value(model.name).join(", ") + "]";
  if (!keepCsv) QFile::remove(csv);  // sensitivities CSVs reach tens of MB
  return {};
}

// Runs `sensode simulate` on `model` with `args` into dir/name.csv; empty on success, else the
// first line of the error (or why it did not end).
QString simulateInto(const CorpusModel& model, const QStringList& args, const QDir& dir,
                     const QString& name) {
  QStringList all{"simulate", model.file, "--t-end", QString::number(model.tEnd, 'g', 17)};
  all << args << "--out" << dir.filePath(name + ".csv");
  const CliRun run = sensode::test::runProcess(kCli, all, kRunTimeoutMs);
  if (run.exitCode == 0 && !run.crashed && !run.timedOut) return {};
  if (run.timedOut) return QStringLiteral("time limit");
  return run.errLines.isEmpty() ? QStringLiteral("exit status %1").arg(run.exitCode)
                                : run.errLines.front();
}

QString describe(const sensode::test::TrajectoryDistance& d) {
  return QStringLiteral("%1 (%2, t = %3)")
      .arg(QString::number(d.scaledError, 'g', 2), d.column, QString::number(d.time, 'g', 6));
}

// Compares the default time course (simulate.csv in `dir`) with CVODES at a tight tolerance, and
// CVODES's own run at the default tolerances with the same reference. Empty when the default
// run is within kMaxScaledError, or within kWorseThanCvodes × CVODES's error (a model whose
// solution is so sensitive that the default tolerances cannot resolve it — a blow-up race, a
// spiking neuron — is not the default method's fault), or when the reference cannot be
// computed; `accuracy` gets the figures for the report.
QString checkAccuracy(const CorpusModel& model, const QDir& dir, QString& accuracy) {
  if (const QString why = simulateInto(model, kReferenceArgs, dir, "reference"); !why.isEmpty()) {
    accuracy = "no reference: " + why;
    return {};
  }
  const QString reference = dir.filePath("reference.csv");
  const sensode::test::TrajectoryDistance d =
      sensode::test::compareTrajectories(dir.filePath("simulate.csv"), reference, kScaleFloor);
  if (!d.problem.isEmpty()) return "simulate: cannot compare with the reference: " + d.problem;
  accuracy = describe(d);
  if (d.scaledError <= kMaxScaledError) return {};

  double allowed = kMaxScaledError;
  if (simulateInto(model, {"--method", "cvodes"}, dir, "cvodes").isEmpty()) {
    const sensode::test::TrajectoryDistance c =
        sensode::test::compareTrajectories(dir.filePath("cvodes.csv"), reference, kScaleFloor);
    if (c.problem.isEmpty()) {
      accuracy += "; CVODES at the same tolerances: " + describe(c);
      allowed = std::max(allowed, kWorseThanCvodes * c.scaledError);
    }
  }
  if (d.scaledError <= allowed) return {};
  return QStringLiteral("simulate: the time course is off CVODES at rtol 1e-10 by %1 of '%2''s range "
                        "at t = %3 (limit %4; %5)")
      .arg(QString::number(d.scaledError, 'g', 3), d.column, QString::number(d.time, 'g', 6),
           QString::number(allowed, 'g', 3), accuracy);
}

// The corpus, listed once per run (the PEtab time spans read every measurement table).
const std::vector<CorpusModel>& models() {
  static const std::vector<CorpusModel> list = sensode::test::corpusModels(kShared);
  return list;
}

QMap<QString, QString> knownFailures() {
  QMap<QString, QString> known;
  QFile f(QStringLiteral(SENSODE_CORPUS_DIR "/known_failures.tsv"));
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return known;
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine()).trimmed();
    if (line.isEmpty() || line.startsWith('#') || line.startsWith("model\t")) continue;
    const QStringList cells = line.split('\t');
    known[cells.front()] = cells.size() > 1 ? cells[1] : QString();
  }
  return known;
}

QString seconds(double s) { return s < 0 ? QStringLiteral("–") : QString::number(s, 'g', 3); }
QString count(long n) { return n < 0 ? QStringLiteral("–") : QString::number(n); }

// Markdown-safe cell text.
QString cell(QString text) { return text.replace('|', "\\|").replace('\n', ' '); }

void writeReport(const std::vector<ReportRow>& rows, const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text | QIODevice::Truncate)) {
    qWarning("cannot write the corpus report %s", qPrintable(path));
    return;
  }
  QString md;
  md += "| model | t end | states | parameters | method | time course steps | time course s | "
        "sensitivities steps | sensitivities s | fallbacks | time course error vs CVODES 1e-10 | result |\n";
  md += "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | --- |\n";
  for (const ReportRow& r : rows) {
    QStringList fallbacks = r.simulate.fallbacks;
    for (const QString& s : r.sensitivities.fallbacks)
      fallbacks << "sensitivities: " + s;
    QString method = r.simulate.method;
    if (!r.sensitivities.method.isEmpty() && r.sensitivities.method != method)
      method += " / " + r.sensitivities.method;
    md += QStringLiteral("| `%1` | %2 | %3 | %4 | %5 | %6 | %7 | %8 | %9 | %10 | %11 | %12 |\n")
              .arg(r.model.name, QString::number(r.model.tEnd, 'g', 10), count(r.simulate.states),
                   count(r.sensitivities.parameters >= 0 ? r.sensitivities.parameters : r.simulate.parameters),
                   method.isEmpty() ? "–" : method,
                   count(r.simulate.steps), seconds(r.simulate.seconds), count(r.sensitivities.steps),
                   seconds(r.sensitivities.seconds))
              .arg(fallbacks.isEmpty() ? "–" : cell(fallbacks.join("; ")),
                   r.accuracy.isEmpty() ? "–" : cell(r.accuracy), cell(r.outcome));
  }
  f.write(md.toUtf8());
}

}  // namespace

class TestCorpus : public QObject {
  Q_OBJECT

 private:
  std::vector<ReportRow> rows_;
  QMap<QString, QString> known_;

 private slots:
  void initTestCase() {
    QVERIFY2(QFile::exists(kCli), qPrintable("sensode CLI not built: " + kCli));
    known_ = knownFailures();
    // Every listed model exists: a renamed or removed model must not keep a stale entry.
    QStringList names;
    for (const CorpusModel& m : models()) names << m.name;
    QVERIFY2(names.size() >= 61 + 27, qPrintable(QString("only %1 models under %2").arg(names.size()).arg(kShared)));
    for (const QString& listed : known_.keys())
      QVERIFY2(names.contains(listed), qPrintable("known_failures.tsv names no corpus model: " + listed));
  }

  void model_data() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < static_cast<int>(models().size()); ++i)
      QTest::newRow(qPrintable(models()[static_cast<std::size_t>(i)].name)) << i;
  }

  void model() {
    QFETCH(int, index);
    const CorpusModel m = models()[static_cast<std::size_t>(index)];
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QDir dir(tmp.path());

    ReportRow row{m, {}, {}, {}, {}};
    QString refusal;
    QString failure = runAndCheck("simulate", m, {}, dir, refusal, row.simulate, /*keepCsv=*/true);
    if (failure.isEmpty() && refusal.isEmpty()) failure = checkAccuracy(m, dir, row.accuracy);
    if (failure.isEmpty() && refusal.isEmpty())
      failure = runAndCheck("sensitivities", m, {"--params", "all"}, dir, refusal, row.sensitivities);

    if (!failure.isEmpty())
      row.outcome = (known_.contains(m.name) ? "FAILED (known): " : "FAILED: ") + failure;
    else if (!refusal.isEmpty())
      row.outcome = "refused: " + refusal;
    else
      row.outcome = "ok";
    rows_.push_back(row);

    if (known_.contains(m.name)) {
      // A listed "slow:" model may finish within the limit on an idle machine: then a warning.
      if (failure.isEmpty() && known_[m.name].startsWith("slow:")) {
        qWarning("%s is listed as slow but finished within the limit: take it off known_failures.tsv "
                 "if it stays so", qPrintable(m.name));
        return;
      }
      QEXPECT_FAIL("", qPrintable("known failure: " + known_[m.name]), Abort);
    }
    QVERIFY2(failure.isEmpty(), qPrintable(m.name + ": " + failure));
  }

  void cleanupTestCase() {
    const QString path = qEnvironmentVariableIsSet("SENSODE_CORPUS_REPORT")
                             ? qEnvironmentVariable("SENSODE_CORPUS_REPORT")
                             : QStringLiteral(SENSODE_CORPUS_REPORT);
    writeReport(rows_, path);
    int ok = 0, refused = 0, failed = 0;
    for (const ReportRow& r : rows_) {
      if (r.outcome == "ok") ++ok;
      else if (r.outcome.startsWith("refused")) ++refused;
      else ++failed;
    }
    qInfo("corpus: %d models: %d simulated with sensitivities, %d refused with a clear message, "
          "%d failed (%d listed as known); table: %s",
          static_cast<int>(rows_.size()), ok, refused, failed, static_cast<int>(known_.size()),
          qPrintable(path));
  }
};

QTEST_GUILESS_MAIN(TestCorpus)
#include "tst_corpus.moc"
