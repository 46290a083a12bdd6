// SPDX-License-Identifier: MIT
#include "support/cli_process.h"

#include <QtCore/QElapsedTimer>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QProcessEnvironment>
#include <QtCore/QRegularExpression>

namespace sensode::test {

CliRun runProcess(const QString& program, const QStringList& args, int timeoutMs,
                  const QStringList& extraEnvironment) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const QString& entry : extraEnvironment) {
    const qsizetype eq = entry.indexOf('=');
    env.insert(entry.left(eq), entry.mid(eq + 1));
  }
  p.setProcessEnvironment(env);
  p.setStandardOutputFile(QProcess::nullDevice());  // the summaries are not judged; never block on a full pipe
  QElapsedTimer clock;
  clock.start();
  p.start(program, args);
  CliRun r;
  if (!p.waitForStarted(10000)) {
    r.crashed = true;
    r.errLines << "could not start " + program;
    return r;
  }
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    r.timedOut = true;
  }
  r.wallSeconds = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
  r.crashed = !r.timedOut && p.exitStatus() != QProcess::NormalExit;
  r.exitCode = p.exitCode();
  const QString err = QString::fromUtf8(p.readAllStandardError());
  for (const QString& line : err.split('\n'))
    if (!line.trimmed().isEmpty()) r.errLines << line;
  return r;
}

QString contractViolation(const CliRun& run, const QString& inputFile) {
  return contractViolation(run, QStringList{inputFile});
}

QString contractViolation(const CliRun& run, const QStringList& inputFiles) {
  if (run.timedOut) return QStringLiteral("hang: killed after the time limit");
  if (run.crashed) return QStringLiteral("killed by a signal (crash)");
  if (run.exitCode == 0) return {};
  if (run.exitCode != 1)
    return QStringLiteral("exit status %1: %2").arg(run.exitCode).arg(run.errLines.join(" | "));
  if (run.errLines.size() != 1)
    return QStringLiteral("%1 lines on stderr: %2").arg(run.errLines.size()).arg(run.errLines.join(" | "));
  const QString& line = run.errLines.front();
  for (const QString& file : inputFiles) {
    const QString prefix = "sensode: " + file + ": ";
    if (!line.startsWith(prefix)) continue;
    if (line.trimmed().size() <= prefix.trimmed().size())
      return QStringLiteral("the message names no reason: ") + line;
    return {};
  }
  return "the message does not start with 'sensode: " + inputFiles.join("' or '") + ": ': " + line;
}

bool isClearError(const CliRun& run, const QString& inputFile) {
  return isClearError(run, QStringList{inputFile});
}

bool isClearError(const CliRun& run, const QStringList& inputFiles) {
  return run.exitCode == 1 && !run.timedOut && !run.crashed &&
         contractViolation(run, inputFiles).isEmpty();
}

bool namesPlace(const CliRun& run) {
  if (run.errLines.isEmpty()) return false;
  static const QRegularExpression place(QStringLiteral("element '|\\b(row|line) [0-9]"));
  return place.match(run.errLines.front()).hasMatch();
}

namespace {

// Columns that hold ids, not numbers (sensitivities and gradient CSVs).
bool isLabelColumn(const QString& name) {
  return name == "variable" || name == "parameter" || name == "parameterId";
}

}  // namespace

namespace {

// The first non-finite cell that `allowed(id, time)` does not accept.
template <class Allowed>
QString firstNonFiniteCellWhere(const QString& csvFile, bool nanOnly, Allowed allowed) {
  QFile f(csvFile);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return "cannot read " + csvFile;
  QStringList header;
  qsizetype variableColumn = -1;
  long row = 0;
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine()).trimmed();
    if (line.isEmpty()) continue;
    const QStringList cells = line.split(',');
    if (header.isEmpty()) {
      header = cells;
      variableColumn = header.indexOf(QStringLiteral("variable"));
      continue;
    }
    ++row;
    for (qsizetype c = 0; c < cells.size(); ++c) {
      const QString column = c < header.size() ? header[c] : QString::number(c);
      if (isLabelColumn(column)) continue;
      const QString cell = cells[c].trimmed().toLower();
      const bool nan = cell == "nan" || cell == "-nan";
      const bool inf = cell == "inf" || cell == "-inf" || cell == "+inf";
      if (!nan && !(inf && !nanOnly)) continue;
      const QString id = variableColumn >= 0 && variableColumn < cells.size() ? cells[variableColumn]
                                                                               : column;
      if (allowed(id, cells.front())) continue;
      return QStringLiteral("row %1, column '%2': %3").arg(row).arg(column, cells[c]);
    }
  }
  return {};
}

}  // namespace

QString firstNonFiniteCell(const QString& csvFile, bool nanOnly) {
  return firstNonFiniteCellWhere(csvFile, nanOnly, [](const QString&, const QString&) { return false; });
}

QStringList undefinedOutputsOf(const QString& statsJson) {
  QFile f(statsJson);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QStringList listed;
  const QJsonArray undefined =
      QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("undefined_outputs")).toArray();
  for (const QJsonValue& u : undefined) {
    const QString id = u.toObject().value(QStringLiteral("id")).toString();
    for (const QJsonValue& t : u.toObject().value(QStringLiteral("times")).toArray())
      listed << id + '@' + QString::number(t.toDouble(), 'g', 17);
  }
  return listed;
}

QString firstUnlistedNonFiniteCell(const QString& csvFile, const QString& statsJson,
                                   bool nanOnly) {
  const QStringList listed = undefinedOutputsOf(statsJson);
  return firstNonFiniteCellWhere(csvFile, nanOnly, [&](const QString& id, const QString& time) {
    return listed.contains(id + '@' + QString::number(time.toDouble(), 'g', 17));
  });
}

long csvDataRows(const QString& csvFile) {
  QFile f(csvFile);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return -1;
  long lines = 0;
  while (!f.atEnd())
    if (!f.readLine().trimmed().isEmpty()) ++lines;
  return lines > 0 ? lines - 1 : 0;
}

}  // namespace sensode::test
