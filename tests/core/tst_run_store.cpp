// SPDX-License-Identifier: MIT
// The multistart's work units, the run store and resume (core/estimation/work_units.h,
// run_store.h, run_results.h) on the two-parameter decay of tests/data/petab/estimation_decay:
//   units       a StartResult and a StartPlan survive their text form bit for bit (values that
//               need all 17 digits, inf, NaN); a record cut short is refused, not read.
//   store       records are written atomically (no temporary file stays), read back by index.
//   fingerprint a change of option or of a PEtab file's bytes is named.
//   resume      a run cancelled after two starts and continued from its store equals the
//               uninterrupted run start by start (objectives and points identical), computes
//               only the starts the store lacks, and reuses the stored plan.
//   refusal     a store of other settings is refused naming the option.
//   cancel      a cancelled run keeps exactly the starts that finished (none marked cancelled).
//   reader      the folder read back gives the run's starts, best fit and statistics.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "core/estimation/estimation.h"
#include "core/estimation/run_results.h"
#include "core/estimation/run_store.h"
#include "core/estimation/work_units.h"
#include "support/numeric_compare.h"

namespace est = sensode::estimation;
namespace fs = std::filesystem;

namespace {

const fs::path kDecay = fs::path(SENSODE_TEST_DATA_DIR) / "petab/estimation_decay/problem.yaml";

est::EstimationOptions decayOptions() {
  est::EstimationOptions o;
  o.starts = 6;
  o.seed = 3;
  o.useStartValues = false;
  o.threads = 1;
  o.screen = 4;
  o.polish = 1;
  return o;
}

const est::StartResult* byIndex(const est::EstimationResult& r, int index) {
  for (const auto& s : r.starts)
    if (s.index == index) return &s;
  return nullptr;
}

}  // namespace

class TestRunStore : public QObject {
  Q_OBJECT

 private slots:
  void unitsRoundTrip() {
    est::StartResult s;
    s.index = 7;
    s.start = {0.1, 1.0 / 3.0, -2.718281828459045};
    s.parameters = {std::nextafter(1.0, 2.0), 1e-300, -0.0};
    s.startObjective = std::numeric_limits<double>::infinity();
    s.objective = 12.345678901234567;
    s.objectiveRtol = std::numeric_limits<double>::quiet_NaN();
    s.iterations = 12;
    s.objectiveEvaluations = 40;
    s.gradientEvaluations = 13;
    s.wallSeconds = 0.25;
    s.status = est::StartStatus::Stalled;
    s.message = "line one\nline two";
    const est::StartResult back = est::startResultFromText(est::toText(s), "record");
    QCOMPARE(back.index, 7);
    QVERIFY(back.start == s.start);
    QVERIFY(back.parameters == s.parameters);
    QVERIFY(std::isinf(back.startObjective));
    QCOMPARE(back.objective, s.objective);  // exact: %.17g round-trips
    QVERIFY(std::isnan(back.objectiveRtol));
    QCOMPARE(back.status, est::StartStatus::Stalled);
    QCOMPARE(back.message, std::string("line one line two"));

    std::string cut = est::toText(s);
    cut = cut.substr(0, cut.find("message"));
    try {
      est::startResultFromText(cut, "starts/000007.txt");
      QFAIL("an incomplete record was read");
    } catch (const sensode::Error& e) {
      QVERIFY2(std::string(e.what()).find("starts/000007.txt: incomplete record") == 0, e.what());
    }

    est::StartPlan plan;
    plan.optimizer = est::Optimizer::QuasiNewton;
    plan.optimizerReason = "requested";
    plan.gradient = sensode::petab::GradientMethod::Adjoint;
    plan.noiseResiduals = true;
    plan.fallbacks = {"one", "two"};
    plan.global = est::GlobalPhase::Screen;
    plan.globalEvaluations = 120;
    plan.screenedPoints = 120;
    plan.starts = {{0.1, 0.2}, {1.0 / 7.0, -3.5}};
    plan.nominalObjective = 1.25;  // NaN (the default) equals nothing, itself included
    plan.globalBest = 0.75;
    QVERIFY(est::startPlanFromText(est::toText(plan), "plan") == plan);
  }

  void atomicStore() {
    QTemporaryDir tmp;
    const est::RunStore store(fs::path(tmp.path().toStdString()) / "run");
    est::StartResult s;
    s.index = 3;
    s.status = est::StartStatus::Converged;
    s.objective = 1.5;
    store.saveStart(s);
    s.index = 1;
    store.saveStart(s);
    const auto starts = store.finishedStarts();
    QCOMPARE(starts.size(), std::size_t(2));
    QCOMPARE(starts[0].index, 1);
    QCOMPARE(starts[1].index, 3);
    for (const auto& e : fs::recursive_directory_iterator(store.dir()))
      QVERIFY2(e.path().filename().string()[0] != '.', e.path().c_str());  // no temporary left
  }

  void fingerprintNamesTheDifference() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const auto& e : fs::directory_iterator(kDecay.parent_path()))
      fs::copy_file(e.path(), dir / e.path().filename());
    const auto problem = sensode::petab::loadProblem(dir / "problem.yaml");
    est::EstimationOptions o = decayOptions();
    const est::RunFingerprint base = est::runFingerprint(problem, o);
    QVERIFY(!est::fingerprintDifference(base, base));
    o.seed = 4;
    const auto seed = est::fingerprintDifference(base, est::runFingerprint(problem, o));
    QVERIFY(seed);
    QCOMPARE(*seed, std::string("seed is '3' there, '4' here"));
    // The options come back from the fingerprint.
    const auto again = est::fingerprintDifference(
        base, est::runFingerprint(problem, est::optionsFromFingerprint(base, "run.txt")));
    QVERIFY2(!again, again ? again->c_str() : "");
    o.seed = 3;
    std::ofstream(dir / "measurements.tsv", std::ios::app) << "\n";
    const auto edited = est::fingerprintDifference(
        base, est::runFingerprint(sensode::petab::loadProblem(dir / "problem.yaml"), o));
    QVERIFY(edited);
    QVERIFY2(edited->find("the PEtab file measurements.tsv differs") == 0, edited->c_str());
  }

  void resumeEqualsUninterrupted() {
    const est::EstimationOptions o = decayOptions();
    const est::EstimationResult whole = est::runEstimation({kDecay}, o);
    QCOMPARE(whole.status, est::EstimationResult::Status::Success);

    QTemporaryDir tmp;
    est::RunStore store(fs::path(tmp.path().toStdString()) / "run");
    // Cancelled once two starts have finished (the cancel is seen at the next integration step).
    int finished = 0;
    sensode::ProgressMonitor stopAfterTwo;
    stopAfterTwo.callback = [&](const sensode::ProgressInfo&) {
      return finished >= 2 ? sensode::Decision::Abort : sensode::Decision::Continue;
    };
    std::set<int> first;
    const est::EstimationResult cut = est::runEstimation(
        {kDecay}, o, stopAfterTwo,
        [&](const est::StartResult& s) {
          ++finished;
          first.insert(s.index);
        },
        {nullptr, &store});
    QCOMPARE(cut.status, est::EstimationResult::Status::UserAbort);
    QCOMPARE(cut.starts.size(), first.size());  // the finished ones, kept
    for (const auto& s : cut.starts) QVERIFY(s.status != est::StartStatus::Cancelled);
    QCOMPARE(store.finishedStarts().size(), first.size());

    std::set<int> second;
    const est::EstimationResult resumed = est::runEstimation(
        {kDecay}, o, {}, [&](const est::StartResult& s) { second.insert(s.index); },
        {nullptr, &store});
    QCOMPARE(resumed.status, est::EstimationResult::Status::Success);
    QCOMPARE(resumed.resumedStarts, static_cast<int>(first.size()));
    for (int i : first) QVERIFY2(!second.count(i), "a finished start was computed again");
    QCOMPARE(first.size() + second.size(), std::size_t(o.starts));
    QCOMPARE(resumed.starts.size(), whole.starts.size());
    for (int i = 0; i < o.starts; ++i) {
      const est::StartResult* a = byIndex(whole, i);
      const est::StartResult* b = byIndex(resumed, i);
      QVERIFY(a && b);
      QVERIFY2(a->start == b->start, qPrintable(QString("start point %1").arg(i)));
      SENSODE_EXPECT_CLOSE(b->objective, a->objective, 0, 1e-12, "objective of start", i);
    }
    SENSODE_EXPECT_CLOSE(resumed.bestObjective, whole.bestObjective, 0, 1e-12, "best", 0);
    QCOMPARE(resumed.screenedPoints, whole.screenedPoints);

    // Read back as File ▸ Open estimation results does.
    const est::StoredRun read = est::readStoredRun(store.dir());
    QCOMPARE(read.result.status, est::EstimationResult::Status::Success);
    QCOMPARE(read.result.starts.size(), whole.starts.size());
    SENSODE_EXPECT_CLOSE(read.result.bestObjective, whole.bestObjective, 0, 1e-12, "best read", 0);
    QVERIFY(read.result.statistics.available);
    for (std::size_t k = 0; k < whole.statistics.standardErrors.size(); ++k)
      SENSODE_EXPECT_CLOSE(read.result.statistics.standardErrors[k],
                           whole.statistics.standardErrors[k], 0, 1e-8, "standard error", k);
    QCOMPARE(read.options.seed, o.seed);
  }

  void otherSettingsRefused() {
    QTemporaryDir tmp;
    est::RunStore store(fs::path(tmp.path().toStdString()) / "run");
    est::EstimationOptions o = decayOptions();
    o.starts = 2;
    o.screen = 0;
    o.polish = 0;
    QCOMPARE(est::runEstimation({kDecay}, o, {}, {}, {nullptr, &store}).status,
             est::EstimationResult::Status::Success);
    o.seed = 5;
    const est::EstimationResult refused = est::runEstimation({kDecay}, o, {}, {}, {nullptr, &store});
    QCOMPARE(refused.status, est::EstimationResult::Status::InvalidInput);
    QVERIFY2(refused.message.find("another problem or other settings: seed is '3' there, '5' here") !=
                 std::string::npos,
             refused.message.c_str());
  }

  void notAResultsFolder() {
    QTemporaryDir tmp;
    try {
      est::readStoredRun(tmp.path().toStdString());
      QFAIL("an empty folder was read as results");
    } catch (const sensode::Error& e) {
      QVERIFY2(std::string(e.what()).find("not an estimation results folder") != std::string::npos,
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestRunStore)
#include "tst_run_store.moc"
