// SPDX-License-Identifier: MIT
// `sensode estimate` across processes, through the built CLI (tests/data/petab/estimation_decay):
//   mpi       `mpirun --oversubscribe -n 3` (workers with 2 threads each) gives every start the
//             serial run's start point and objective (to 1e-12 relative; the same computation on
//             another process), the same polished best fit and the same profile points: the
//             screen, the polish and each profile direction are units on the worker ranks too.
//             Skipped when the CLI was built without MPI.
//   lost      a worker rank killed with SIGKILL while it computes (mpirun with
//             `--mca orte_enable_recovery 1`, which keeps the job): rank 0 names the rank and
//             the start it lost, gives the start to another rank, and the run ends normally with
//             every start equal to the serial run's.
//   resume    SIGTERM after ≥ 3 finished starts leaves a folder that `--resume DIR` continues
//             (the message says so); a second run killed with SIGKILL (no clean-up at all) is
//             resumed too; no finished start is computed again (each start id is reported
//             once over the three processes) and every start's record equals the uninterrupted
//             run's.
//   refusal   `--out DIR` of a run with another seed is refused naming the difference, and
//             `--resume` of a folder without a run says so; both exit 1 with one line.
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <csignal>
#include <limits>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/estimation/profile_likelihood.h"
#include "core/estimation/run_store.h"
#include "support/cli_process.h"
#include "support/numeric_compare.h"

namespace est = sensode::estimation;
namespace fs = std::filesystem;

namespace {

const QString kDecay = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/estimation_decay/problem.yaml");

// Loose enough to be quick, tight enough that a start takes a few integrations.
QStringList runOptions(int starts, int threads = 1) {
  return {QStringLiteral("--starts"), QString::number(starts), QStringLiteral("--seed"),
          QStringLiteral("1"), QStringLiteral("--no-start-values"), QStringLiteral("--threads"),
          QString::number(threads), QStringLiteral("--screen"), QStringLiteral("2"),
          QStringLiteral("--polish"), QStringLiteral("1")};
}

std::map<int, est::StartResult> records(const QString& dir) {
  std::map<int, est::StartResult> out;
  for (auto& s : est::RunStore(dir.toStdString()).finishedStarts()) out[s.index] = s;
  return out;
}

// The start ids of "start k/N (#id): ..." progress lines.
QList<int> reportedStarts(const QStringList& lines) {
  static const QRegularExpression line(QStringLiteral("^start \\d+/\\d+ \\(#(\\d+)\\)"));
  QList<int> ids;
  for (const QString& l : lines) {
    const auto m = line.match(l);
    if (m.hasMatch()) ids << m.captured(1).toInt();
  }
  return ids;
}

void compareRecords(const std::map<int, est::StartResult>& got,
                    const std::map<int, est::StartResult>& expected, int starts) {
  QCOMPARE(static_cast<int>(got.size()), starts);
  QCOMPARE(static_cast<int>(expected.size()), starts);
  for (const auto& [index, e] : expected) {
    const auto it = got.find(index);
    QVERIFY(it != got.end());
    QVERIFY2(it->second.start == e.start, qPrintable(QStringLiteral("start point %1").arg(index)));
    SENSODE_EXPECT_CLOSE(it->second.objective, e.objective, 0, 1e-12, "objective of start", index);
  }
}

// Starts the CLI, waits until `dir` holds at least `count` start records, sends `signal`, and
// returns its stderr lines and exit code (-signal when it died of it).
struct Interrupted {
  QStringList errLines;
  int exitCode = 0;
  bool finishedFirst = false;
};
Interrupted interruptAfter(const QStringList& args, const QString& dir, std::size_t count,
                           int signal) {
  QProcess p;
  p.setStandardOutputFile(QProcess::nullDevice());
  p.start(QStringLiteral(SENSODE_CLI_PATH), args);
  Interrupted r;
  if (!p.waitForStarted(10000)) return r;
  while (p.state() == QProcess::Running) {
    if (fs::is_directory(dir.toStdString() + "/starts") &&
        est::RunStore(dir.toStdString()).finishedStarts().size() >= count) {
      ::kill(static_cast<pid_t>(p.processId()), signal);
      break;
    }
    p.waitForFinished(20);
  }
  r.finishedFirst = p.state() != QProcess::Running;
  p.waitForFinished(60000);
  r.exitCode = p.exitStatus() == QProcess::CrashExit ? -signal : p.exitCode();
  for (const QString& l : QString::fromLocal8Bit(p.readAllStandardError()).split(QLatin1Char('\n')))
    if (!l.trimmed().isEmpty()) r.errLines << l;
  return r;
}

// The pid of the process whose environment says MPI rank `rank` and whose command line holds
// `marker` (0 while there is none).
pid_t mpiRankPid(int rank, const QString& marker) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(entry.path() / "cmdline"), environ(entry.path() / "environ");
    std::stringstream c, e;
    c << cmdline.rdbuf();
    e << environ.rdbuf();
    std::string command = c.str(), environment = e.str();
    std::replace(command.begin(), command.end(), '\0', ' ');
    std::replace(environment.begin(), environment.end(), '\0', '\n');
    if (command.find(marker.toStdString()) != std::string::npos &&
        command.find("mpirun") == std::string::npos &&
        ("\n" + environment).find("\nOMPI_COMM_WORLD_RANK=" + std::to_string(rank) + "\n") !=
            std::string::npos)
      return static_cast<pid_t>(std::stoi(name));
  }
  return 0;
}

QStringList mpiEnvironment() {
  // LeakSanitizer off for the ranks in the sanitizer build: OpenMPI's own start-up allocations
  // (calloc in MCA components it unloads, so no symbol to suppress by) are never freed.
  // Sensode's code in these runs is the same the serial runs and tst_run_store check with leak
  // detection on.
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "ASAN_OPTIONS=" + qEnvironmentVariable("ASAN_OPTIONS") +
              (qEnvironmentVariableIsEmpty("ASAN_OPTIONS") ? "" : ":") + "detect_leaks=0"};
}

}  // namespace

class TestEstimateResume : public QObject {
  Q_OBJECT

 private slots:
  void mpiEqualsSerial() {
#ifndef SENSODE_MPIRUN
    QSKIP("the CLI was built without MPI");
#else
    QTemporaryDir tmp;
    const QString serial = tmp.path() + "/serial", ranks = tmp.path() + "/ranks";
    const int starts = 8;
    const QStringList profile{"--profile", "k,x0"};
    const auto one = sensode::test::runProcess(
        SENSODE_CLI_PATH,
        QStringList{"estimate", kDecay, "--out", serial} + runOptions(starts) + profile, 120000);
    QVERIFY2(one.exitCode == 0, qPrintable(one.errLines.join("\n")));
    const auto three = sensode::test::runProcess(
        SENSODE_MPIRUN,
        QStringList{"--oversubscribe", "-n", "3", SENSODE_CLI_PATH, "estimate", kDecay, "--out",
                    ranks} +
            runOptions(starts, 2) + profile,
        180000, mpiEnvironment());
    QVERIFY2(three.exitCode == 0, qPrintable(three.errLines.join("\n")));
    QVERIFY2(three.errLines.join("\n").contains("3 MPI ranks"), qPrintable(three.errLines.join("\n")));
    // Every unit on the workers: 8 starts, the screen's 16 points (one unit), one polish and two
    // directions of two profiles.
    QVERIFY2(three.errLines.join("\n").contains("MPI: 14 units on the workers"),
             qPrintable(three.errLines.join("\n")));
    compareRecords(records(ranks), records(serial), starts);
    // The same best fit (the polish ran on a worker, from the same start).
    const auto best = [](const QString& dir) {
      const auto p = est::RunStore(dir.toStdString()).polishedStarts();
      return p.empty() ? std::numeric_limits<double>::quiet_NaN() : p.front().objective;
    };
    SENSODE_EXPECT_CLOSE(best(ranks), best(serial), 0, 1e-12, "polished best", 0);
    // The same profiles, point for point (each direction ran on a worker).
    for (const char* id : {"k", "x0"})
      for (int direction : {-1, 1}) {
        const auto a = est::RunStore(ranks.toStdString()).profileDirection(id, direction);
        const auto b = est::RunStore(serial.toStdString()).profileDirection(id, direction);
        QVERIFY2(a && b, id);
        QVERIFY2(!b->points.empty(), id);
        QCOMPARE(a->points.size(), b->points.size());
        for (std::size_t i = 0; i < a->points.size(); ++i) {
          SENSODE_EXPECT_CLOSE(a->points[i].value, b->points[i].value, 0, 1e-12, "profile value", i);
          SENSODE_EXPECT_CLOSE(a->points[i].objective, b->points[i].objective, 0, 1e-12,
                               "profile objective", i);
        }
      }
#endif
  }

  // The scatter search's batches are units on the workers: the same search, the same starts.
  void mpiScatterSearchEqualsSerial() {
#ifndef SENSODE_MPIRUN
    QSKIP("the CLI was built without MPI");
#else
    QTemporaryDir tmp;
    const QString serial = tmp.path() + "/serial", ranks = tmp.path() + "/ranks";
    const QStringList options{"--starts", "4", "--seed", "3", "--global", "ess",
                              "--global-evaluations", "400", "--threads", "1", "--polish", "0"};
    const auto one = sensode::test::runProcess(
        SENSODE_CLI_PATH, QStringList{"estimate", kDecay, "--out", serial} + options, 120000);
    QVERIFY2(one.exitCode == 0, qPrintable(one.errLines.join("\n")));
    const auto three = sensode::test::runProcess(
        SENSODE_MPIRUN,
        QStringList{"--oversubscribe", "-n", "3", SENSODE_CLI_PATH, "estimate", kDecay, "--out",
                    ranks} + options,
        180000, mpiEnvironment());
    QVERIFY2(three.exitCode == 0, qPrintable(three.errLines.join("\n")));
    // More units than the 4 starts: the search's batches went to the workers.
    static const QRegularExpression units(QStringLiteral("MPI: (\\d+) units on the workers"));
    const auto m = units.match(three.errLines.join("\n"));
    QVERIFY2(m.hasMatch() && m.captured(1).toInt() > 4, qPrintable(three.errLines.join("\n")));
    compareRecords(records(ranks), records(serial), 4);
#endif
  }

  // A worker that dies while it computes: its start goes to another rank.
  void lostWorkerRankIsReplaced() {
#ifndef SENSODE_MPIRUN
    QSKIP("the CLI was built without MPI");
#else
    QTemporaryDir tmp;
    const QString serial = tmp.path() + "/serial", ranks = tmp.path() + "/ranks";
    const int starts = 400;
    // No screen: the starts begin at once, so the kill finds rank 2 inside one.
    const QStringList options{"--starts", QString::number(starts), "--seed", "1", "--screen",
                              "0", "--polish", "0", "--threads", "1"};
    const auto one = sensode::test::runProcess(
        SENSODE_CLI_PATH, QStringList{"estimate", kDecay, "--out", serial} + options, 120000);
    QVERIFY2(one.exitCode == 0, qPrintable(one.errLines.join("\n")));

    QProcess run;
    run.setStandardOutputFile(QProcess::nullDevice());
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const QString& e : mpiEnvironment())
      environment.insert(e.section('=', 0, 0), e.section('=', 1));
    run.setProcessEnvironment(environment);
    run.start(QStringLiteral(SENSODE_MPIRUN),
              QStringList{"--mca", "orte_enable_recovery", "1", "--oversubscribe", "-n", "3",
                          SENSODE_CLI_PATH, "estimate", kDecay, "--out", ranks,
                          "--worker-timeout", "2"} +
                  options);
    QVERIFY(run.waitForStarted(10000));
    bool killed = false;
    while (run.state() == QProcess::Running && !killed) {
      if (fs::is_directory(ranks.toStdString() + "/starts") &&
          est::RunStore(ranks.toStdString()).finishedStarts().size() >= 20) {
        const pid_t worker = mpiRankPid(2, ranks);
        if (worker > 0) killed = ::kill(worker, SIGKILL) == 0;
      }
      run.waitForFinished(20);
    }
    if (!killed) QSKIP("the run finished before a worker could be killed");
    const bool ended = run.waitForFinished(180000);
    if (!ended) run.kill();
    run.waitForFinished(10000);
    const QString err = QString::fromLocal8Bit(run.readAllStandardError());
    QVERIFY2(ended, qPrintable("the run did not end after a worker was lost:\n" + err));
    QVERIFY2(run.exitStatus() == QProcess::NormalExit && run.exitCode() == 0, qPrintable(err));
    static const QRegularExpression lost(
        QStringLiteral("MPI rank 2 lost \\(no message from it for [0-9.]+ s while it computed; "
                       "[^)]*\\): its start #\\d+ goes to another rank"));
    QVERIFY2(lost.match(err).hasMatch(), qPrintable(err));
    compareRecords(records(ranks), records(serial), starts);
#endif
  }

  void killAndResume() {
    QTemporaryDir tmp;
    const QString whole = tmp.path() + "/whole", cut = tmp.path() + "/cut";
    const int starts = 200;
    const auto reference = sensode::test::runProcess(
        SENSODE_CLI_PATH, QStringList{"estimate", kDecay, "--out", whole} + runOptions(starts),
        120000);
    QVERIFY2(reference.exitCode == 0, qPrintable(reference.errLines.join("\n")));

    // SIGTERM, as a batch system's time limit sends it: a clean stop that says how to go on.
    const Interrupted term = interruptAfter(
        QStringList{"estimate", kDecay, "--out", cut} + runOptions(starts), cut, 3, SIGTERM);
    if (term.finishedFirst) QSKIP("the run finished before it could be interrupted");
    QCOMPARE(term.exitCode, 1);
    QVERIFY2(term.errLines.last().contains("--resume " + cut), qPrintable(term.errLines.join("\n")));
    const QList<int> first = reportedStarts(term.errLines);
    QVERIFY(first.size() >= 3);
    QCOMPARE(static_cast<qsizetype>(records(cut).size()), first.size());

    // SIGKILL of the resumed run: nothing is cleaned up, the records on disk are all there is.
    const Interrupted killed = interruptAfter({"estimate", "--resume", cut}, cut,
                                              static_cast<std::size_t>(first.size()) + 2, SIGKILL);
    QList<int> second = reportedStarts(killed.errLines);
    if (!killed.finishedFirst) QCOMPARE(killed.exitCode, -SIGKILL);

    const auto last = sensode::test::runProcess(SENSODE_CLI_PATH, {"estimate", "--resume", cut},
                                                120000);
    QVERIFY2(last.exitCode == 0, qPrintable(last.errLines.join("\n")));
    QVERIFY2(last.errLines.first().startsWith("resuming " + cut), qPrintable(last.errLines.first()));
    const QList<int> third = reportedStarts(last.errLines);
    QList<int> all = first + second + third;
    std::sort(all.begin(), all.end());
    // Every start reported exactly once over the three processes (a start SIGKILL interrupted was
    // not finished: it is not in the records and is computed again).
    for (int i = 0; i < starts; ++i)
      QVERIFY2(all.count(i) == 1, qPrintable(QStringLiteral("start %1 reported %2 times")
                                                 .arg(i)
                                                 .arg(all.count(i))));
    QCOMPARE(all.size(), qsizetype(starts));
    compareRecords(records(cut), records(whole), starts);
  }

  void wrongFolderRefused() {
    QTemporaryDir tmp;
    const QString dir = tmp.path() + "/run";
    const auto first = sensode::test::runProcess(
        SENSODE_CLI_PATH,
        {"estimate", kDecay, "--starts", "2", "--screen", "0", "--polish", "0", "--threads", "1",
         "--out", dir},
        60000);
    QVERIFY2(first.exitCode == 0, qPrintable(first.errLines.join("\n")));
    const auto other = sensode::test::runProcess(
        SENSODE_CLI_PATH,
        {"estimate", kDecay, "--starts", "2", "--screen", "0", "--polish", "0", "--seed", "2",
         "--out", dir},
        60000);
    QCOMPARE(other.exitCode, 1);
    QVERIFY2(other.errLines.size() == 1 &&
                 other.errLines[0].contains(dir + ": holds a run of another problem or other "
                                                  "settings: seed is '1' there, '2' here"),
             qPrintable(other.errLines.join("\n")));
    const auto none = sensode::test::runProcess(
        SENSODE_CLI_PATH, {"estimate", "--resume", tmp.path() + "/nothing"}, 60000);
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.errLines.size() == 1 && none.errLines[0].contains("no estimation run to resume"),
             qPrintable(none.errLines.join("\n")));
  }
};

QTEST_GUILESS_MAIN(TestEstimateResume)
#include "tst_estimate_resume.moc"
