// SPDX-License-Identifier: MIT
// What a fuzz run found: each mutant ends as a clear error (exit status 1, one line on stderr
// naming the file and the reason), a run (exit status 0 and a NaN-free CSV), or a failure (a
// signal, a hang, another exit status, a malformed message, NaN in the output). Failing mutants
// are kept on disk for reproduction; the summary is one line per mutation and one in total.
//
// A run over its time limit (a hang) always fails: it is never excused by the known failures.
//
// Undefined outputs: a NaN in an output column of a run with exit status 0 passes only where the
// run's --stats lists it under "undefined_outputs" (support/cli_process.h,
// firstUnlistedNonFiniteCell).
//
// Failures that are known and reported (known_failures.tsv beside the tests: `test<TAB>mutant
// <TAB>reason`, '#' comments) are counted apart and do not fail the run; a listed mutant that did
// not fail is reported as stale (a warning: it may have been fixed).
#pragma once

#include <QtCore/QByteArray>
#include <QtCore/QMap>
#include <QtCore/QString>
#include <QtCore/QStringList>

namespace sensode::test::fuzz {

class FuzzTally {
 public:
  // `what` names the mutants in the summary ("SBML mutants"); failing mutants go to
  // `failuresDir` (emptied first).
  FuzzTally(QString what, QString failuresDir);

  // The known failures of `test` ("sbml", "petab") from `knownFailuresFile`.
  void setKnownFailures(const QString& knownFailuresFile, const QString& test);

  void clearError(const QString& mutation, bool namesPlace);
  void run(const QString& mutation);
  // `id`: "mutant-0042"; `description`: base, mutation and change; `problem`: what went wrong.
  // `files`: name → content of the mutant's files, written to failuresDir/id/. `overTime`: the
  // run exceeded its time limit, which known_failures.tsv cannot excuse.
  void failure(const QString& mutation, const QString& id, const QString& description,
               const QString& problem, const QMap<QString, QByteArray>& files,
               bool overTime = false);

  int failures() const { return failures_.size(); }
  // Listed known failures that did not fail in this run.
  QStringList staleKnownFailures() const;
  // "fuzz: 480 SBML mutants: 451 clear errors (430 name an element, row or line), 29 runs,
  // 0 failures" and one line per mutation.
  QString summary() const;
  QString failureList() const { return failures_.join('\n'); }

 private:
  struct Counts {
    int mutants = 0, clearErrors = 0, namingPlace = 0, runs = 0, failures = 0, known = 0;
  };
  static QString line(const QString& what, const Counts& c);

  QString what_, failuresDir_;
  QMap<QString, Counts> byMutation_;
  QStringList failures_;
  QMap<QString, QString> known_;  // mutant id → reason
  QStringList knownSeen_;
};

}  // namespace sensode::test::fuzz
