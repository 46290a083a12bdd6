// SPDX-License-Identifier: MIT
// The compiled-model cache (core/symbolic/native_cache.h) as users meet it: the built `sensode`
// CLI, one process per run, a private SENSODE_CACHE_DIR. A first run leaves an entry, the second
// is native from its first evaluation; damaged entries are rebuilt, entries and folders another
// user could write are refused, the folder stays under its bound, --no-cache writes nothing, and
// two processes compiling the same model at once share the folder safely.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <memory>
#include <vector>

#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QMap>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/native_cache.h"

namespace {

const QString kCli = QStringLiteral(SENSODE_CLI_PATH);
const QString kModel = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/michaelis_menten.xml");

struct Run {
  int exitCode = -1;
  QJsonObject stats;
  QString err;
};

}  // namespace

class TestNativeCache : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir tmp_;
  QString cacheDir_;
  int runs_ = 0;

  QMap<QString, QString> extraEnvironment_;  // per test, on top of environment()'s

  QProcessEnvironment environment(double maxMb = 0) const {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("SENSODE_CACHE_DIR", cacheDir_);
    // cc -O2 never starts in these short runs, nor after them: the entries under test are
    // tcc's, from the first run, as a user's first run leaves them.
    env.insert("SENSODE_NATIVE_DELAY", "1000");
    env.insert("SENSODE_NATIVE_DETACH", "0");
    if (maxMb > 0) env.insert("SENSODE_CACHE_MAX_MB", QString::number(maxMb, 'g', 17));
    for (auto it = extraEnvironment_.begin(); it != extraEnvironment_.end(); ++it)
      env.insert(it.key(), it.value());
    return env;
  }

  // A C compiler for the detached cc -O2 job: `cc` after `seconds`, or one that fails.
  QString compilerScript(const QString& name, const QByteArray& body) const {
    const QString path = tmp_.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write("#!/bin/sh\n" + body + "\n");
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
  }

  QProcess* start(const QStringList& extra, const QString& statsFile, double maxMb = 0,
                  const QString& model = kModel, const QString& command = "simulate") {
    auto* p = new QProcess(this);
    p->setProcessEnvironment(environment(maxMb));
    p->start(kCli, QStringList{command, model, "--stats", statsFile} + extra);
    return p;
  }

  Run finish(QProcess* p, const QString& statsFile) {
    Run r;
    if (!p->waitForFinished(120000)) p->kill();
    r.exitCode = p->exitStatus() == QProcess::NormalExit ? p->exitCode() : -1;
    r.err = QString::fromUtf8(p->readAllStandardError());
    QFile f(statsFile);
    if (f.open(QIODevice::ReadOnly)) r.stats = QJsonDocument::fromJson(f.readAll()).object();
    p->deleteLater();
    return r;
  }

  Run run(const QStringList& extra = {}, double maxMb = 0, const QString& model = kModel,
          const QString& command = "simulate") {
    const QString stats = tmp_.filePath(QString("stats-%1.json").arg(runs_++));
    return finish(start(extra, stats, maxMb, model, command), stats);
  }

  QStringList files(const QString& pattern) const {
    return QDir(cacheDir_).entryList({pattern}, QDir::Files, QDir::Name);
  }
  QString onlyObject() const {
    const QStringList objects = files("sensode-*.so");
    return objects.size() == 1 ? QDir(cacheDir_).filePath(objects.front()) : QString();
  }
  qint64 folderBytes() const {
    qint64 total = 0;
    for (const QFileInfo& f : QDir(cacheDir_).entryInfoList(QDir::Files)) total += f.size();
    return total;
  }

 private slots:
  void init() {
    QVERIFY(tmp_.isValid());
    cacheDir_ = tmp_.filePath(QString("cache-%1").arg(runs_++));
    extraEnvironment_.clear();
  }

  // A run that ends before cc -O2 could finish leaves the compile to a job of its own: the run's
  // output ends with the run (the job keeps none of its descriptors: a pipe, as $(sensode …)
  // reads it, closes), the job leaves its object in the folder, and the model's next run loads
  // cc's code from its first evaluation, replacing tcc's entry.
  void shortRunLeavesTheOptimisedCompileToTheNextRun() {
    const QString slowCc = compilerScript("slow-cc", "sleep 5\nexec cc \"$@\"");
    extraEnvironment_ = {{"SENSODE_NATIVE_DETACH", "1"}, {"SENSODE_CC", slowCc}};
    const QString stats = tmp_.filePath("detached-first.json");
    QProcess p;
    p.setProcessEnvironment(environment());
    p.start("/bin/sh", {"-c", "\"$0\" simulate \"$1\" --stats \"$2\" | cat >/dev/null", kCli,
                        kModel, stats});
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 0);
    // The pipeline is over while the compile still runs (its lock is there).
    QCOMPARE(files("*.compiling").size(), 1);
    QCOMPARE(files("*.entry").size(), 1);  // tcc's, from the run itself
    QTRY_VERIFY_WITH_TIMEOUT(files("*.compiling").isEmpty(), 120000);
    QCOMPARE(files("*.pending.so").size(), 1);
    QVERIFY(files("tmp-*").isEmpty());

    const Run second = run();
    QCOMPARE(second.exitCode, 0);
    QCOMPARE(second.stats.value("native_cache").toString(), QString("hit"));
    QCOMPARE(second.stats.value("native_tier").toString(), QString("cc -O2"));
    QCOMPARE(second.stats.value("native_from_first_evaluation").toBool(), true);
    QVERIFY(files("*.pending.so").isEmpty());
    QCOMPARE(files("sensode-*.so").size(), 1);  // tcc's object went with its entry
    QVERIFY(files("*.compiling").isEmpty());    // nothing left to compile
  }

  // A loop of short runs over several models starts one compile at a time in a folder, not one
  // per model; a later run of a model left out starts its own.
  void oneDetachedCompileAtATime() {
    const QString slowCc = compilerScript("slow-cc", "sleep 5\nexec cc \"$@\"");
    extraEnvironment_ = {{"SENSODE_NATIVE_DETACH", "1"}, {"SENSODE_CC", slowCc}};
    const QString other = QStringLiteral(SENSODE_TEST_DATA_DIR "/models/hill_at_zero.xml");
    QCOMPARE(run().exitCode, 0);
    QCOMPARE(run({}, 0, other).exitCode, 0);
    QCOMPARE(files("*.compiling").size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(files("*.compiling").isEmpty(), 120000);
    QCOMPARE(files("*.pending.so").size(), 1);
    QCOMPARE(run({}, 0, other).stats.value("native_tier").toString(), QString("tcc"));
    QTRY_VERIFY_WITH_TIMEOUT(files("*.compiling").isEmpty(), 120000);
    QCOMPARE(files("*.pending.so").size(), 2);
    QCOMPARE(run({}, 0, other).stats.value("native_tier").toString(), QString("cc -O2"));
    QCOMPARE(run().stats.value("native_tier").toString(), QString("cc -O2"));
  }

  // A compile that fails leaves no object and no lock: the next run still loads tcc's entry.
  // With SENSODE_NATIVE_DETACH=0 a compile under way when the run ends is killed with it.
  void failedOrUndetachedCompileLeavesTccsEntry() {
    extraEnvironment_ = {{"SENSODE_NATIVE_DETACH", "1"},
                         {"SENSODE_CC", compilerScript("failing-cc", "echo no such luck >&2\nexit 1")}};
    QCOMPARE(run().exitCode, 0);
    QTRY_VERIFY_WITH_TIMEOUT(files("*.compiling").isEmpty(), 120000);
    QVERIFY(files("*.pending.so").isEmpty());
    const Run afterFailure = run();
    QCOMPARE(afterFailure.exitCode, 0);
    QCOMPARE(afterFailure.stats.value("native_cache").toString(), QString("hit"));
    QCOMPARE(afterFailure.stats.value("native_tier").toString(), QString("tcc"));

    // In the run: no start delay, a compiler slower than the run, no detaching.
    extraEnvironment_ = {{"SENSODE_NATIVE_DETACH", "0"},
                         {"SENSODE_NATIVE_DELAY", "0"},
                         {"SENSODE_CC", compilerScript("slow-cc", "sleep 30\nexec cc \"$@\"")}};
    cacheDir_ = tmp_.filePath("cache-undetached");
    QCOMPARE(run().exitCode, 0);
    QVERIFY(files("*.compiling").isEmpty());
    QVERIFY(files("tmp-*").isEmpty());
    QCOMPARE(files("*.entry").size(), 1);
  }

  // A compiler that is not there starts no job at the end of a short run: none would compile,
  // and its shell's failure would leave a log in the folder.
  void missingCompilerStartsNoJobAfterTheRun() {
    extraEnvironment_ = {{"SENSODE_NATIVE_DETACH", "1"},
                         {"SENSODE_CC", tmp_.filePath("no-such-cc")}};
    QCOMPARE(run().exitCode, 0);
    QCOMPARE(files("*.entry").size(), 1);  // tcc's
    QVERIFY(files("*.compiling").isEmpty());
    // A job, had one started, would have failed within this wait and left tmp-*.log.
    QTest::qWait(1000);
    QVERIFY2(files("tmp-*").isEmpty(), qPrintable(files("tmp-*").join(", ")));
    const Run second = run();
    QCOMPARE(second.exitCode, 0);
    QCOMPARE(second.stats.value("native_tier").toString(), QString("tcc"));
    QVERIFY(files("tmp-*").isEmpty());
  }

  // The first run stores tcc's object; the second, a fresh process, loads it and runs every
  // evaluator it uses as compiled code from its first call (simulate and sensitivities, odeSD).
  void secondRunIsNativeFromTheFirstEvaluation() {
    const Run first = run();
    QCOMPARE(first.exitCode, 0);
    QCOMPARE(first.stats.value("native_cache").toString(), QString("miss"));
    QCOMPARE(files("*.entry").size(), 1);
    QCOMPARE(QFileInfo(cacheDir_).permissions() & (QFile::WriteGroup | QFile::WriteOther),
             QFileDevice::Permissions());
    struct stat st {};
    QCOMPARE(::stat(cacheDir_.toLocal8Bit().constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0700u);

    const Run second = run();
    QCOMPARE(second.exitCode, 0);
    QCOMPARE(second.stats.value("native_cache").toString(), QString("hit"));
    QCOMPARE(second.stats.value("native_from_first_evaluation").toBool(), true);
    QCOMPARE(second.stats.value("native_tier").toString(), QString("tcc"));

    const Run sensFirst = run({}, 0, kModel, "sensitivities");
    QCOMPARE(sensFirst.exitCode, 0);  // the same model: the same entry
    QCOMPARE(sensFirst.stats.value("native_cache").toString(), QString("hit"));
    QCOMPARE(sensFirst.stats.value("native_from_first_evaluation").toBool(), true);
    QCOMPARE(files("*.entry").size(), 1);
  }

  // estimate's summary.json says where the model's evaluation ran, like --stats: a miss that
  // stores the entry, then a hit native from the first evaluation (the same keys as gradient).
  void estimateSummaryReportsTheCache() {
    const QString problem = QStringLiteral(SENSODE_TEST_DATA_DIR "/petab/estimation_decay/problem.yaml");
    auto estimate = [&](const QString& out) {
      QProcess p;
      p.setProcessEnvironment(environment());
      p.start(kCli, {"estimate", problem, "--starts", "2", "--threads", "1", "--out", out});
      if (!p.waitForFinished(120000)) p.kill();
      QFile f(out + "/summary.json");
      return std::make_pair(p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                            f.open(QIODevice::ReadOnly)
                                ? QJsonDocument::fromJson(f.readAll()).object()
                                : QJsonObject());
    };
    const auto [firstExit, first] = estimate(tmp_.filePath("estimate-1"));
    QCOMPARE(firstExit, 0);
    QCOMPARE(first.value("native_cache").toString(), QString("miss"));
    QVERIFY(first.contains("native_tier"));
    const auto [secondExit, second] = estimate(tmp_.filePath("estimate-2"));
    QCOMPARE(secondExit, 0);
    QCOMPARE(second.value("native_cache").toString(), QString("hit"));
    QCOMPARE(second.value("native_from_first_evaluation").toBool(), true);
    QCOMPARE(second.value("native_tier").toString(), QString("tcc"));
  }

  void truncatedObjectIsRebuilt() {
    QCOMPARE(run().exitCode, 0);
    const QString object = onlyObject();
    QVERIFY(!object.isEmpty());
    QVERIFY(QFile::resize(object, QFileInfo(object).size() / 2));
    const Run damaged = run();
    QCOMPARE(damaged.exitCode, 0);
    QVERIFY2(damaged.stats.value("native_cache").toString().startsWith("miss: damaged entry"),
             qPrintable(damaged.stats.value("native_cache").toString()));
    QVERIFY(damaged.stats.value("native_cache").toString().contains("size"));
    const Run again = run();
    QCOMPARE(again.stats.value("native_cache").toString(), QString("hit"));
    QCOMPARE(again.stats.value("native_from_first_evaluation").toBool(), true);
  }

  void flippedByteIsRebuilt() {
    QCOMPARE(run().exitCode, 0);
    const QString object = onlyObject();
    QFile f(object);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QByteArray bytes = f.readAll();
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
    QVERIFY(f.seek(0));
    QCOMPARE(f.write(bytes), static_cast<qint64>(bytes.size()));
    f.close();
    const Run damaged = run();
    QCOMPARE(damaged.exitCode, 0);
    QCOMPARE(damaged.stats.value("native_cache").toString(),
             QString("miss: damaged entry %1 (SHA-256 mismatch), rebuilt").arg(files("*.entry").front()));
    QCOMPARE(run().stats.value("native_cache").toString(), QString("hit"));
  }

  // A folder or entry another user could have written is never loaded, and never written to.
  void worldWritableFolderIsRefused() {
    QVERIFY(QDir().mkpath(cacheDir_));
    QCOMPARE(::chmod(cacheDir_.toLocal8Bit().constData(), 0777), 0);
    const Run r = run();
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.stats.value("native_cache").toString(),
             "refused: " + cacheDir_ + " is writable by group or others (mode 0777)");
    QVERIFY(r.stats.value("native").toString().contains("[cache refused: "));
    // (Not native_from_first_evaluation == false: without the cache that depends on whether
    // tcc's early units beat the first evaluation, a race a clean build's CTest run lost.)
    QVERIFY(QDir(cacheDir_).entryList(QDir::Files).isEmpty());
  }

  void worldWritableEntryIsRefused() {
    QCOMPARE(run().exitCode, 0);
    const QString entry = QDir(cacheDir_).filePath(files("*.entry").front());
    const QByteArray before = [&] { QFile f(entry); f.open(QIODevice::ReadOnly); return f.readAll(); }();
    QCOMPARE(::chmod(entry.toLocal8Bit().constData(), 0666), 0);
    const Run r = run();
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.stats.value("native_cache").toString(),
             "refused: " + entry + " is writable by group or others (mode 0666)");
    QFile f(entry);  // left alone, not replaced
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), before);
  }

  void objectOfAnotherUserIsRefused() {
    QCOMPARE(run().exitCode, 0);
    const QString object = onlyObject();
    if (geteuid() != 0) QSKIP("chown to another user needs root");
    QCOMPARE(::chown(object.toLocal8Bit().constData(), 65534, 65534), 0);
    const Run r = run();
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.stats.value("native_cache").toString(),
             QString("refused: %1 is owned by uid 65534, not by you (uid %2)").arg(object).arg(geteuid()));
  }

  // Least recently used entries go once the folder exceeds SENSODE_CACHE_MAX_MB.
  void evictionKeepsTheFolderUnderItsBound() {
    const QStringList models = {"michaelis_menten", "hill_at_zero", "ratio_at_zero", "assigned_rate",
                                "compartment_cancels"};
    auto path = [](const QString& m) { return QString(SENSODE_TEST_DATA_DIR "/models/%1.xml").arg(m); };
    for (int i = 0; i + 1 < models.size(); ++i) QCOMPARE(run({}, 0, path(models[i])).exitCode, 0);
    const qint64 unbounded = folderBytes();
    QCOMPARE(files("*.entry").size(), models.size() - 1);
    // Room for about half of them: the next write evicts the least recently used.
    const double maxMb = 0.5 * static_cast<double>(unbounded) / (1024.0 * 1024.0);
    const Run r = run({}, maxMb, path(models.back()));
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(folderBytes() <= static_cast<qint64>(maxMb * 1024 * 1024),
             qPrintable(QString("%1 bytes, bound %2").arg(folderBytes()).arg(maxMb * 1024 * 1024)));
    QVERIFY(files("*.entry").size() < models.size());
    // The last model's entry survived: its next run hits.
    QCOMPARE(run({}, maxMb, path(models.back())).stats.value("native_cache").toString(), QString("hit"));
    // The first one was evicted: a miss.
    QCOMPARE(run({}, maxMb, path(models.front())).stats.value("native_cache").toString(), QString("miss"));
  }

  void noCacheWritesNothing() {
    const Run r = run({"--no-cache"});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.stats.value("native_cache").toString(), QString("disabled"));
    QVERIFY(!QFileInfo::exists(cacheDir_) || QDir(cacheDir_).entryList(QDir::Files).isEmpty());
    const Run sens = run({"--no-cache"}, 0, kModel, "sensitivities");
    QCOMPARE(sens.exitCode, 0);
    QVERIFY(!QFileInfo::exists(cacheDir_) || QDir(cacheDir_).entryList(QDir::Files).isEmpty());
  }

  // Two processes compiling the same model at once: both succeed, one valid entry is left.
  void concurrentProcessesShareTheFolder() {
    const QString statsA = tmp_.filePath("concurrent-a.json"), statsB = tmp_.filePath("concurrent-b.json");
    QProcess* a = start({}, statsA);
    QProcess* b = start({}, statsB);
    const Run ra = finish(a, statsA), rb = finish(b, statsB);
    QCOMPARE(ra.exitCode, 0);
    QCOMPARE(rb.exitCode, 0);
    QCOMPARE(files("*.entry").size(), 1);
    QCOMPARE(files("sensode-*.so").size(), 1);
    QVERIFY(files("tmp-*").isEmpty());
    const Run third = run();
    QCOMPARE(third.stats.value("native_cache").toString(), QString("hit"));
    QCOMPARE(third.stats.value("native_from_first_evaluation").toBool(), true);
  }

  // Two models loaded from the cache in one process (the GUI keeps several) each run their own
  // code: every tape's native result equals its interpreter's (a dlopen by a reused name once
  // handed the second model the first one's object).
  void twoCachedModelsInOneProcessRunTheirOwnCode() {
    qputenv("SENSODE_CACHE_DIR", cacheDir_.toLocal8Bit());
    const QStringList names = {"michaelis_menten", "hill_at_zero", "assigned_rate"};
    auto load = [](const QString& name) {
      const auto m = sensode::model::importSbmlFile(
          QString(SENSODE_TEST_DATA_DIR "/models/%1.xml").arg(name).toStdString());
      return std::make_shared<const sensode::symbolic::CompiledModel>(
          sensode::symbolic::buildOdeSystem(m));
    };
    for (const QString& name : names) {  // the entries (cc -O2), each model gone afterwards
      const auto model = load(name);
      QVERIFY2(model->waitForNative(300), model->nativeStatus().message.c_str());
    }
    std::vector<std::shared_ptr<const sensode::symbolic::CompiledModel>> models;
    for (const QString& name : names) {
      models.push_back(load(name));  // all alive at once, as in the GUI's model cache
      QCOMPARE(QString::fromStdString(models.back()->nativeStatus().cache), QString("hit"));
    }
    for (const auto& model : models) {
      std::vector<double> x(static_cast<std::size_t>(model->nx()), 0.7);
      std::vector<double> p = model->nominalParameters();
      for (const auto& named : model->tapes()) {
        QVERIFY(named.tape->isNative());
        std::vector<double> native(named.tape->numOutputs() + 1, -1.0), interpreted = native;
        named.tape->evaluate(0.3, x.data(), p.data(), native.data());
        named.tape->interpret(0.3, x.data(), p.data(), interpreted.data());
        for (std::size_t i = 0; i < native.size(); ++i)
          QVERIFY2(native[i] == interpreted[i] || (std::isnan(native[i]) && std::isnan(interpreted[i])),
                   qPrintable(QString("%1 of %2").arg(QString::fromStdString(named.name)).arg(i)));
      }
    }
    qunsetenv("SENSODE_CACHE_DIR");
  }

  // The digest is SHA-256 (FIPS 180-2's test vector), and the compiler's identity is computed
  // without running it and changes with the binary.
  void digestAndCompilerIdentity() {
    QCOMPARE(QString::fromStdString(sensode::symbolic::sha256Hex("abc")),
             QString("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    // In parts (the cache key hashes a header and the model's C without joining them): the
    // digest of the concatenation, also across OpenSSL's 64-byte blocks.
    QCOMPARE(QString::fromStdString(sensode::symbolic::sha256Hex({"a", "", "bc"})),
             QString("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const std::string longText(1000, 'x');
    QCOMPARE(sensode::symbolic::sha256Hex({std::string_view(longText).substr(0, 99),
                                           std::string_view(longText).substr(99)}),
             sensode::symbolic::sha256Hex(longText));
    QVERIFY(sensode::symbolic::sha256Hex({longText, "y"}) != sensode::symbolic::sha256Hex(longText));
    const QString fake = tmp_.filePath("fake-cc");
    QFile f(fake);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\n");
    f.close();
    const std::string id = sensode::symbolic::compilerIdentity(fake.toStdString());
    QVERIFY(QString::fromStdString(id).startsWith(QFileInfo(fake).canonicalFilePath() + " 10 "));
  }
};

QTEST_GUILESS_MAIN(TestNativeCache)
#include "tst_native_cache.moc"
