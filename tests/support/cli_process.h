// SPDX-License-Identifier: MIT
// Runs the `sensode` CLI as a user does (QProcess on the built binary, with a time limit) and
// judges the run against the command-line contract: exit status 0, or exit status 1 with exactly
// one line on stderr "sensode: FILE: ... reason" — never a signal, a hang, another exit status, or
// a non-finite number in a CSV written with exit status 0. Shared by the corpus and fuzz tests.
#pragma once

#include <QtCore/QString>
#include <QtCore/QStringList>

namespace sensode::test {

struct CliRun {
  bool timedOut = false;  // killed after the time limit
  bool crashed = false;   // ended by a signal (or never started)
  int exitCode = -1;
  QStringList errLines;   // non-empty stderr lines
  double wallSeconds = 0;
};

// `program args...`, killed after `timeoutMs`. Extra environment entries ("NAME=value") are added
// to the caller's environment.
CliRun runProcess(const QString& program, const QStringList& args, int timeoutMs,
                  const QStringList& extraEnvironment = {});

// Empty when `run` kept the contract for `inputFile` (the file the error must name); otherwise
// what went wrong, in one line ("killed by a signal", "exit status 3", "2 lines on stderr: ...").
QString contractViolation(const CliRun& run, const QString& inputFile);
// The same where the message may name any of `inputFiles` (a PEtab problem: the yaml or a table).
QString contractViolation(const CliRun& run, const QStringList& inputFiles);

// True for exit status 1 with a contract-keeping one-line message.
bool isClearError(const CliRun& run, const QString& inputFile);
bool isClearError(const CliRun& run, const QStringList& inputFiles);

// Whether a clear error's message points into the file: it names an element, a row or a line.
bool namesPlace(const CliRun& run);

// The first non-finite cell of a CSV file ("row 12, column 'S1': nan"), or empty when every cell
// after the header parses as a finite number or is a non-numeric label (the sensitivities CSV has
// id columns). `nanOnly`: only NaN counts, ±inf passes.
QString firstNonFiniteCell(const QString& csvFile, bool nanOnly = false);
// The same, except that a NaN (or ±INF) is no fault where the run's --stats JSON `statsJson`
// lists it under "undefined_outputs" (an output whose own formula has no value there, issue 30):
// its id (the column of a wide CSV, the `variable` cell of the long sensitivities CSV) at that
// time.
QString firstUnlistedNonFiniteCell(const QString& csvFile, const QString& statsJson,
                                   bool nanOnly = false);

// The "undefined_outputs" of a --stats JSON file as "id@t" strings ("alpha@0"), in order.
QStringList undefinedOutputsOf(const QString& statsJson);

// Number of data rows (lines after the header) of a CSV file; -1 when it cannot be read.
long csvDataRows(const QString& csvFile);

}  // namespace sensode::test
