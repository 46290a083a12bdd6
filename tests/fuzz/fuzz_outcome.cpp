// SPDX-License-Identifier: MIT
#include "fuzz/fuzz_outcome.h"

#include <QtCore/QDir>
#include <QtCore/QFile>

#include <utility>

namespace sensode::test::fuzz {

FuzzTally::FuzzTally(QString what, QString failuresDir)
    : what_(std::move(what)), failuresDir_(std::move(failuresDir)) {
  QDir(failuresDir_).removeRecursively();
}

void FuzzTally::setKnownFailures(const QString& knownFailuresFile, const QString& test) {
  QFile f(knownFailuresFile);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return;
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine()).trimmed();
    if (line.isEmpty() || line.startsWith('#') || line.startsWith("test\t")) continue;
    const QStringList cells = line.split('\t');
    if (cells.size() >= 2 && cells[0] == test) known_[cells[1]] = cells.value(2);
  }
}

QStringList FuzzTally::staleKnownFailures() const {
  QStringList stale;
  for (const QString& id : known_.keys())
    if (!knownSeen_.contains(id)) stale << id + " (" + known_[id] + ")";
  return stale;
}

void FuzzTally::clearError(const QString& mutation, bool namesPlace) {
  Counts& c = byMutation_[mutation];
  ++c.mutants;
  ++c.clearErrors;
  if (namesPlace) ++c.namingPlace;
}

void FuzzTally::run(const QString& mutation) {
  Counts& c = byMutation_[mutation];
  ++c.mutants;
  ++c.runs;
}

void FuzzTally::failure(const QString& mutation, const QString& id, const QString& description,
                        const QString& problem, const QMap<QString, QByteArray>& files,
                        bool overTime) {
  Counts& c = byMutation_[mutation];
  ++c.mutants;
  if (known_.contains(id) && !overTime) {
    ++c.known;
    knownSeen_ << id;
    return;
  }
  ++c.failures;
  const QDir dir(QDir(failuresDir_).filePath(id));
  dir.mkpath(".");
  for (auto it = files.begin(); it != files.end(); ++it) {
    QFile f(dir.filePath(it.key()));
    if (f.open(QIODevice::WriteOnly)) f.write(it.value());
  }
  failures_ << id + " (" + description + "): " + problem + "  [kept in " + dir.path() + "]";
}

QString FuzzTally::line(const QString& what, const Counts& c) {
  return QStringLiteral("%1 %2: %3 clear errors (%4 name an element, row or line), %5 runs, %6 failures%7")
      .arg(c.mutants)
      .arg(what)
      .arg(c.clearErrors)
      .arg(c.namingPlace)
      .arg(c.runs)
      .arg(c.failures)
      .arg(c.known > 0 ? QStringLiteral(" (+%1 known, listed)").arg(c.known) : QString());
}

QString FuzzTally::summary() const {
  Counts total;
  QStringList lines;
  for (auto it = byMutation_.begin(); it != byMutation_.end(); ++it) {
    const Counts& c = it.value();
    total.mutants += c.mutants;
    total.clearErrors += c.clearErrors;
    total.namingPlace += c.namingPlace;
    total.runs += c.runs;
    total.failures += c.failures;
    total.known += c.known;
    lines << "  " + line(it.key(), c);
  }
  return "fuzz: " + line(what_, total) + "\n" + lines.join('\n');
}

}  // namespace sensode::test::fuzz
