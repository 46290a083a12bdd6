// SPDX-License-Identifier: MIT
// Undefined output values are data, not errors (issue 30): an output whose own formula has no
// value at some output times while everything it reads (and the right-hand side) is finite —
// alpha = A/(A + B) with A(0) = B(0) = 0 — is NaN there, exact elsewhere, listed in the result
// (one CLI warning naming the id, the times and the formula; "undefined_outputs" in --stats), and
// its sensitivities are NaN there. The same 0/0 in a rate still stops the run. And `--outputs`
// chooses the columns of `simulate` and `sensitivities`.
//
// Model: tests/data/models/ratio_at_zero.xml, A = k1·t, B = k2·t²/2 (k1 = 2, k2 = 3), so
//   alpha = k1/(k1 + k2·t/2),  dalpha/dk1 = (k2·t/2)/(k1 + k2·t/2)²,
//   dalpha/dk2 = −(k1·t/2)/(k1 + k2·t/2)²   for t > 0.
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/time_course_task.h"
#include "support/cli_process.h"
#include "support/hand_built_models.h"
#include "support/numeric_compare.h"

using namespace sensode;
using namespace sensode::testing;
using sensode::symbolic::Expr;

namespace {

const QString kCli = QStringLiteral(SENSODE_CLI_PATH);
const QString kRatio = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/ratio_at_zero.xml");
const QString kRatioInRate = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/ratio_at_zero_in_rate.xml");
constexpr int kTimeoutMs = 60000;
constexpr double k1 = 2, k2 = 3;

double alpha(double t) { return k1 / (k1 + k2 * t / 2); }
double dAlphaDk1(double t) { return (k2 * t / 2) / std::pow(k1 + k2 * t / 2, 2); }
double dAlphaDk2(double t) { return -(k1 * t / 2) / std::pow(k1 + k2 * t / 2, 2); }

// The CSV's rows, each split at commas (the header first).
QList<QStringList> readCsv(const QString& path) {
  QList<QStringList> rows;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return rows;
  for (const QString& line : QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts))
    rows << line.split(',');
  return rows;
}

QJsonObject readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

// "NaN" or a number (the CSV writer's spellings).
double cellValue(const QString& cell) {
  if (cell == QLatin1String("NaN")) return std::numeric_limits<double>::quiet_NaN();
  bool ok = false;
  const double v = cell.toDouble(&ok);
  return ok ? v : -12345;
}

// r = 100·a/(a + b) with a' = k (k = 1), b' = 3 from a(0) = b(0) = 0: 100·k/(k + 3) = 25 for
// t > 0 (dr/dk = 300/(k + 3)² = 18.75), no value at t = 0 (Laske's F_rnp_nuc in small);
// `withBig`: a parameter `big` the model sets to INF itself, reported as an output too.
std::shared_ptr<const symbolic::CompiledModel> handBuiltRatio(bool withBig) {
  SystemBuilder b;
  auto& e = b.e();
  const Expr k = b.param("k", 1.0);
  const Expr a = b.state("a", 0.0), bb = b.state("b", 0.0);
  b.rhs(a, k);
  b.rhs(bb, b.c(3));
  const Expr r = e.div(e.mul(b.c(100), a), e.add(a, bb));
  b.output({"r", symbolic::OutputKind::Parameter, r, r, r});
  b.output({"a", symbolic::OutputKind::Parameter, a, a, a});
  if (withBig) {
    const Expr big = b.param("big", std::numeric_limits<double>::infinity());
    b.output({"big", symbolic::OutputKind::Parameter, big, big, big});
  }
  return b.compile();
}

}  // namespace

class TestUndefinedOutputs : public QObject {
  Q_OBJECT

 private slots:
  // ---- the tasks ----

  void timeCourseWritesNaNWhereTheFormulaHasNoValue() {
    tasks::TimeCourseProblem course;
    course.model = handBuiltRatio(true);
    course.times = {0, 0.5, 1};
    course.outputs = {"r", "big", "a"};
    for (const auto method : {integrators::Method::OdeSd, integrators::Method::Cvodes}) {
      tasks::TimeCourseOptions options;
      options.method = method;
      const tasks::TimeCourseResult r = tasks::runTimeCourse(course, options);
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      QVERIFY(std::isnan(r.at(0, 0)));
      for (std::size_t i = 1; i < 3; ++i) SENSODE_EXPECT_CLOSE(r.at(i, 0), 25, 0, 1e-12, "r", i);
      // The model's own INF is written as it is and not listed.
      QVERIFY(std::isinf(r.at(0, 1)) && r.at(0, 2) == 0);
      QCOMPARE(r.undefinedOutputs.size(), std::size_t{1});
      const tasks::UndefinedOutput& u = r.undefinedOutputs.front();
      QCOMPARE(u.id, std::string("r"));
      QCOMPARE(u.times, std::vector<double>{0});
      QCOMPARE(u.reads, std::string("a = 0, b = 0"));
      QCOMPARE(u.gives, std::string("NaN"));
      const std::string line = tasks::describe(u);
      qInfo("%s", line.c_str());
      for (const char* part : {"'r' has no value at t = 0", "a = 0, b = 0", "0/0", "Formula: ",
                               "NaN is written there"})
        QVERIFY2(line.find(part) != std::string::npos, part);
      QVERIFY2(line.find(u.formula) != std::string::npos && u.formula.find('a') != std::string::npos,
               u.formula.c_str());
    }
    // Output times after 0 have nothing to list.
    course.times = {0.5, 1};
    const tasks::TimeCourseResult later = tasks::runTimeCourse(course, {});
    QVERIFY2(later.termination == tasks::Termination::Success, later.message.c_str());
    QVERIFY(later.undefinedOutputs.empty());
  }

  // Every sensitivity method: NaN value and NaN dr/dk at t = 0 (scaled too), the analytic
  // dr/dk = 18.75 later (scaled: k/r · 18.75 = 0.75).
  void sensitivitiesAreNaNWhereTheOutputHasNoValue() {
    for (const auto method :
         {tasks::SensitivityMethod::OdeSd, tasks::SensitivityMethod::Cvodes,
          tasks::SensitivityMethod::Pbsr, tasks::SensitivityMethod::Exp,
          tasks::SensitivityMethod::FiniteDifferences}) {
      for (const bool scaled : {false, true}) {
        tasks::SensitivityProblem problem;
        problem.model = handBuiltRatio(false);
        problem.times = {0, 0.5, 1};
        problem.outputs = {"r", "a"};
        tasks::SensitivityOptions options;
        options.method = method;
        options.scaled = scaled;
        const tasks::SensitivityResult r = tasks::runSensitivities(problem, options);
        const char* name = tasks::toString(method);
        QVERIFY2(r.termination == tasks::Termination::Success, (name + (": " + r.message)).c_str());
        QCOMPARE(r.undefinedOutputs.size(), std::size_t{1});
        QCOMPARE(r.undefinedOutputs.front().id, std::string("r"));
        QCOMPARE(r.undefinedOutputs.front().times, std::vector<double>{0});
        QVERIFY(std::isnan(r.outputAt(0, 0)));
        for (std::size_t ip = 0; ip < r.parameterIds.size(); ++ip) {
          QVERIFY2(std::isnan(r.at(0, 0, ip)), name);
          for (std::size_t it = 1; it < 3; ++it)
            SENSODE_EXPECT_CLOSE(r.at(it, 0, ip), scaled ? 0.75 : 18.75, 1e-9, 1e-5, name, it);
        }
        QCOMPARE(r.guardedCount, scaled ? 1L : 0L);  // a(0) = 0: guarded, not undefined
      }
    }
  }

  // ---- the CLI ----

  // simulate with the defaults: NaN at t = 0, k1/(k1 + k2·t/2) later, one warning naming alpha,
  // the time and the formula, the same in --stats.
  void simulateWritesNaNWarnsAndListsIt() {
    QTemporaryDir dir;
    const QString csv = dir.filePath("s.csv"), json = dir.filePath("s.json");
    const auto run = test::runProcess(
        kCli, {"simulate", kRatio, "--t-end", "4", "--points", "9", "--out", csv, "--stats", json},
        kTimeoutMs);
    QVERIFY2(run.exitCode == 0, qPrintable(run.errLines.join('\n')));
    QCOMPARE(run.errLines.size(), 1);
    const QString& warning = run.errLines.front();
    qInfo("%s", qPrintable(warning));
    QVERIFY2(warning.startsWith("sensode: warning: " + kRatio + ": 'alpha' has no value at t = 0: "),
             qPrintable(warning));
    for (const char* part : {"A = 0, B = 0, cell = 1", "e.g. 0/0", "Formula: ", "NaN is written there"})
      QVERIFY2(warning.contains(part), part);
    QVERIFY2(warning.contains(QRegularExpression("Formula: .*A.*B")), qPrintable(warning));

    const QList<QStringList> rows = readCsv(csv);
    QCOMPARE(rows.size(), 10);
    QCOMPARE(rows[0], (QStringList{"time", "A", "B", "alpha"}));
    QCOMPARE(rows[1][3], QString("NaN"));
    for (int i = 2; i < rows.size(); ++i) {
      const double t = cellValue(rows[i][0]);
      SENSODE_EXPECT_CLOSE(cellValue(rows[i][3]), alpha(t), 1e-10, 1e-5, "alpha", i);
      SENSODE_EXPECT_CLOSE(cellValue(rows[i][1]), k1 * t, 1e-10, 1e-6, "A", i);
    }

    const QJsonArray undefined = readJson(json).value("undefined_outputs").toArray();
    QCOMPARE(undefined.size(), 1);
    const QJsonObject u = undefined.first().toObject();
    QCOMPARE(u.value("id").toString(), QString("alpha"));
    QCOMPARE(u.value("times").toArray(), QJsonArray{0});
    QVERIFY(warning.endsWith("Formula: " + u.value("formula").toString()));
    QCOMPARE(u.value("reads").toString(), QString("A = 0, B = 0, cell = 1"));
    QCOMPARE(u.value("value").toString(), QString("NaN"));
    QCOMPARE(test::firstUnlistedNonFiniteCell(csv, json), QString());
    QVERIFY(!test::firstNonFiniteCell(csv).isEmpty());

    // Nothing undefined, nothing said: an empty list, no warning.
    const auto later = test::runProcess(
        kCli, {"simulate", kRatio, "--times", "1,2", "--out", csv, "--stats", json}, kTimeoutMs);
    QVERIFY2(later.exitCode == 0 && later.errLines.isEmpty(), qPrintable(later.errLines.join('\n')));
    QCOMPARE(readJson(json).value("undefined_outputs").toArray(), QJsonArray{});
  }

  // sensitivities: alpha's rows are NaN at t = 0 and the analytic derivatives later, by every
  // method; one warning, the same list in --stats.
  void sensitivitiesOfAnUndefinedOutputAreNaNThere() {
    QTemporaryDir dir;
    const QString csv = dir.filePath("s.csv"), json = dir.filePath("s.json");
    for (const char* method : {"odesd", "cvodes", "pbsr", "exp", "fd"}) {
      const auto run = test::runProcess(
          kCli, {"sensitivities", kRatio, "--method", method, "--times", "0,0.5,1,3", "--params",
                 "k1,k2", "--outputs", "alpha", "--out", csv, "--stats", json},
          kTimeoutMs);
      QVERIFY2(run.exitCode == 0, qPrintable(run.errLines.join('\n')));
      QCOMPARE(run.errLines.size(), 1);
      QVERIFY2(run.errLines.front().contains("'alpha' has no value at t = 0: "),
               qPrintable(run.errLines.front()));
      const QList<QStringList> rows = readCsv(csv);
      QCOMPARE(rows.size(), 1 + 4 * 2);
      QCOMPARE(rows[0], (QStringList{"time", "variable", "parameter", "value"}));
      for (int i = 1; i < rows.size(); ++i) {
        const double t = cellValue(rows[i][0]);
        QCOMPARE(rows[i][1], QString("alpha"));
        const double expected = rows[i][2] == "k1" ? dAlphaDk1(t) : dAlphaDk2(t);
        if (t == 0) {
          QVERIFY2(rows[i][3] == "NaN", qPrintable(rows[i].join(',')));
        } else {
          SENSODE_EXPECT_CLOSE(cellValue(rows[i][3]), expected, 1e-8, 1e-4, method, i);
        }
      }
      QCOMPARE(test::undefinedOutputsOf(json), QStringList{"alpha@0"});
      QCOMPARE(test::firstUnlistedNonFiniteCell(csv, json), QString());
    }
  }

  // The same 0/0 in a rate law (C' = −kc·alpha·C) reaches the right-hand side: no run can start,
  // and the run stops with one line naming the state whose rate is not finite — and alpha where
  // the time course meets it as an output at t = 0 before the first step.
  void zeroOverZeroInTheRightHandSideStopsTheRun() {
    for (const QStringList& extra : {QStringList{}, QStringList{"--outputs", "C"}}) {
      for (const char* command : {"simulate", "sensitivities"}) {
        QStringList args{command, kRatioInRate, "--t-end", "1", "--points", "3"};
        const auto run = test::runProcess(kCli, args + extra, kTimeoutMs);
        qInfo("%s %s: %s", command, qPrintable(extra.join(' ')), qPrintable(run.errLines.join(" | ")));
        QVERIFY2(test::isClearError(run, kRatioInRate), qPrintable(run.errLines.join(" | ")));
        const QString& line = run.errLines.front();
        if (extra.isEmpty() && QString(command) == "simulate") {
          QVERIFY2(line.contains("'alpha' has no value at t = 0") &&
                       line.contains("the right-hand side is not finite there either (dC/dt = NaN)"),
                   qPrintable(line));
        } else {
          QVERIFY2(line.contains("the rate of change of 'C' is not a finite number at t = 0"),
                   qPrintable(line));
        }
      }
    }
  }

  // --outputs: only those columns, in that order, after time; an unknown or repeated id is one
  // line naming it (exit status 1); an empty id is a usage error.
  void outputsChooseTheColumns() {
    QTemporaryDir dir;
    const QString csv = dir.filePath("s.csv"), json = dir.filePath("s.json");
    for (const auto& [list, header] :
         {std::pair{QString("B"), QStringList{"time", "B"}},
          std::pair{QString("alpha, B,A"), QStringList{"time", "alpha", "B", "A"}},
          std::pair{QString("makeB"), QStringList{"time", "makeB"}}}) {
      const auto run = test::runProcess(
          kCli, {"simulate", kRatio, "--times", "1,2", "--outputs", list, "--out", csv}, kTimeoutMs);
      QVERIFY2(run.exitCode == 0, qPrintable(run.errLines.join('\n')));
      const QList<QStringList> rows = readCsv(csv);
      QCOMPARE(rows.size(), 3);
      QCOMPARE(rows[0], header);
      if (header[1] == "B") SENSODE_EXPECT_CLOSE(cellValue(rows[2][1]), k2 * 2 * 2 / 2, 1e-10, 1e-6, "B", 2);
      if (header[1] == "makeB") SENSODE_EXPECT_CLOSE(cellValue(rows[2][1]), k2 * 2, 1e-10, 1e-9, "makeB", 2);
    }
    // Without alpha among the outputs nothing is undefined.
    const auto noAlpha = test::runProcess(
        kCli, {"simulate", kRatio, "--points", "3", "--outputs", "B", "--stats", json}, kTimeoutMs);
    QVERIFY2(noAlpha.exitCode == 0 && noAlpha.errLines.isEmpty(), qPrintable(noAlpha.errLines.join('\n')));
    QCOMPARE(readJson(json).value("n_outputs").toInt(), 1);

    for (const char* command : {"simulate", "sensitivities"}) {
      const auto unknown = test::runProcess(kCli, {command, kRatio, "--outputs", "B,nosuch"}, kTimeoutMs);
      QVERIFY2(test::isClearError(unknown, kRatio), qPrintable(unknown.errLines.join(" | ")));
      QVERIFY2(unknown.errLines.front().contains("unknown output id 'nosuch'"),
               qPrintable(unknown.errLines.front()));
      const auto twice = test::runProcess(kCli, {command, kRatio, "--outputs", "B,A,B"}, kTimeoutMs);
      QVERIFY2(test::isClearError(twice, kRatio), qPrintable(twice.errLines.join(" | ")));
      QVERIFY2(twice.errLines.front().contains("output id 'B' given twice"),
               qPrintable(twice.errLines.front()));
      const auto empty = test::runProcess(kCli, {command, kRatio, "--outputs", "B,,A"}, kTimeoutMs);
      QCOMPARE(empty.exitCode, 2);
      QVERIFY2(empty.errLines.join(' ').contains("empty id"), qPrintable(empty.errLines.join(" | ")));
    }

    // sensitivities --outputs: only those variables' rows, in that order.
    const auto sens = test::runProcess(
        kCli, {"sensitivities", kRatio, "--times", "1,2", "--params", "k2", "--outputs", "B,A",
               "--out", csv},
        kTimeoutMs);
    QVERIFY2(sens.exitCode == 0, qPrintable(sens.errLines.join('\n')));
    const QList<QStringList> rows = readCsv(csv);
    QCOMPARE(rows.size(), 1 + 2 * 2);
    QStringList variables;
    for (int i = 1; i < rows.size(); ++i) variables << rows[i][1];
    QCOMPARE(variables, (QStringList{"B", "A", "B", "A"}));
    // dB/dk2 = t²/2, dA/dk2 = 0.
    SENSODE_EXPECT_CLOSE(cellValue(rows[3][3]), 2.0, 1e-8, 1e-5, "dB/dk2 at t = 2", 3);
    SENSODE_EXPECT_CLOSE(cellValue(rows[4][3]), 0.0, 1e-8, 0, "dA/dk2 at t = 2", 4);
  }
};

QTEST_GUILESS_MAIN(TestUndefinedOutputs)
#include "tst_undefined_outputs.moc"
