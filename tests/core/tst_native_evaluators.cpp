// SPDX-License-Identifier: MIT
// Native evaluators (core/symbolic/native_compiler.h): the quick tier (tcc, in memory, on the
// loading thread) must be in use as soon as CompiledModel is constructed, and once the
// background job has compiled and loaded the optimised tier, every tape must still give the
// interpreter's numbers bit for bit (both compilers get C that performs the tape's operations in
// order, without contraction); the previous tier (in the end the interpreter) must remain the
// answer whenever a tier is off (SENSODE_NATIVE=0, SENSODE_TCC=0), cannot be compiled or is
// cancelled; a second load of the same model must come from the cache.
#include <sys/stat.h>

#include <QtTest/QtTest>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/tcc_jit.h"

using namespace sensode;
using namespace sensode::symbolic;
namespace fs = std::filesystem;

namespace {

fs::path petabModel(const std::string& name) {
  return fs::path(SENSODE_SHARED_DIR) / "petab" / name / ("model_" + name + ".xml");
}

fs::path suiteModel(const std::string& id) {
  return fs::path(SENSODE_SHARED_DIR) / "sbml-test-suite" / "cases" / id / (id + "-sbml-l3v2.xml");
}

std::unique_ptr<CompiledModel> load(const fs::path& file) {
  return std::make_unique<CompiledModel>(buildOdeSystem(model::importSbmlFile(file)));
}

bool sameBits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool haveCompiler() {
  const char* cc = std::getenv("SENSODE_CC");
  const std::string cmd = std::string(cc && *cc ? cc : "cc") + " --version > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::size_t filesIn(const fs::path& dir, const std::string& suffix) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec))
    n += f.path().string().ends_with(suffix) ? 1 : 0;
  return n;
}

// Environment changes undone at scope exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// Every tape of `cm` evaluated through Tape::evaluate (whatever tier is bound) against the
// interpreter, bit for bit, at the initial state and at a perturbed point; returns the count.
std::size_t compareAllTapesWithInterpreter(const CompiledModel& cm) {
  const std::vector<double> p0 = cm.nominalParameters();
  std::vector<double> x0(static_cast<std::size_t>(cm.nx()));
  cm.initialState(0.0, p0.data(), x0.data());
  std::vector<double> x1 = x0, p1 = p0;
  for (std::size_t i = 0; i < x1.size(); ++i) x1[i] = x1[i] * 1.3 + 0.01 * static_cast<double>(i + 1);
  for (std::size_t k = 0; k < p1.size(); ++k) p1[k] *= 1.0 + 0.05 * static_cast<double>(k % 3);
  const struct {
    double t;
    const std::vector<double>& x;
    const std::vector<double>& p;
  } points[] = {{0.0, x0, p0}, {2.5, x1, p1}};
  std::size_t compared = 0;
  for (const auto& named : cm.tapes()) {
    const Tape& tape = *named.tape;
    if (!tape.isNative()) {
      QTest::qFail(("tape " + named.name + " is not native").c_str(), __FILE__, __LINE__);
      return 0;
    }
    const std::size_t n = tape.numOutputs();
    std::vector<double> interpreted(n + 1), native(n + 1);
    for (const auto& pt : points) {
      tape.interpret(pt.t, pt.x.data(), pt.p.data(), interpreted.data());
      tape.evaluate(pt.t, pt.x.data(), pt.p.data(), native.data());
      for (std::size_t i = 0; i < n; ++i, ++compared)
        if (!sameBits(interpreted[i], native[i])) {
          QTest::qFail(qPrintable(QString("%1[%2] at t=%3: tape %4, native %5")
                                      .arg(named.name.c_str()).arg(i).arg(pt.t)
                                      .arg(interpreted[i], 0, 'g', 17).arg(native[i], 0, 'g', 17)),
                       __FILE__, __LINE__);
          return 0;
        }
    }
  }
  return compared;
}

}  // namespace

class TestNativeEvaluators : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void cleanupTestCase();
  void nativeEqualsTape_data();
  void nativeEqualsTape();
  void quickTierFromConstruction_data();
  void quickTierFromConstruction();
  void quickTierInBackgroundAboveThreshold();
  void disabledFallsBackToTape();
  void missingOrFailingCompilerFallsBackToTape();
  void failingCompilerKeepsQuickTier();
  void secondLoadHitsCache();
  void ccStartsLaterForLongCompiles();
  void destroyWhileCompilingIsSafe();

 private:
  fs::path cache_;
  std::unique_ptr<ScopedEnv> cacheEnv_;
};

void TestNativeEvaluators::initTestCase() {
  installTccBackend();
  std::string pattern = (fs::temp_directory_path() / "sensode-native-XXXXXX").string();
  QVERIFY(mkdtemp(pattern.data()) != nullptr);
  cache_ = pattern;
  cacheEnv_ = std::make_unique<ScopedEnv>("SENSODE_CACHE_DIR", cache_.string());
  unsetenv("SENSODE_NATIVE");
}

void TestNativeEvaluators::cleanupTestCase() {
  cacheEnv_.reset();
  std::error_code ec;
  fs::remove_all(cache_, ec);
}

void TestNativeEvaluators::nativeEqualsTape_data() {
  QTest::addColumn<QString>("file");
  // PEtab models of the gradient tests (rational rate laws, many parameters) and suite cases
  // with piecewise, functions and time (00001 mass action, 00018 more species, 01164 / 01168
  // the larger suite models of the derivative test).
  for (const char* name : {"Boehm_JProteomeRes2014", "Fujita_SciSignal2010", "Borghans_BiophysChem1997",
                           "Bachmann_MSB2011"})
    QTest::newRow(name) << QString::fromStdString(petabModel(name).string());
  for (const char* id : {"00001", "00018", "01164", "01168", "01395"})
    QTest::newRow(id) << QString::fromStdString(suiteModel(id).string());
}

void TestNativeEvaluators::nativeEqualsTape() {
  QFETCH(QString, file);
  if (!fs::exists(file.toStdString())) QSKIP("model not found beside the checkout");
  if (!haveCompiler()) QSKIP("no system C compiler");
  const auto cm = load(file.toStdString());
  QVERIFY2(cm->waitForNative(600), cm->nativeStatus().message.c_str());
  QCOMPARE(cm->nativeStatus().state, NativeState::Ready);

  // Points: the initial state at t = 0 with nominal parameters, and a perturbed state, time and
  // parameter vector (so that every branch value differs from the first point).
  const std::vector<double> p0 = cm->nominalParameters();
  std::vector<double> x0(static_cast<std::size_t>(cm->nx()));
  cm->initialState(0.0, p0.data(), x0.data());
  std::vector<double> x1 = x0, p1 = p0;
  for (std::size_t i = 0; i < x1.size(); ++i) x1[i] = x1[i] * 1.3 + 0.01 * static_cast<double>(i + 1);
  for (std::size_t k = 0; k < p1.size(); ++k) p1[k] *= 1.0 + 0.05 * static_cast<double>(k % 3);
  const struct {
    double t;
    const std::vector<double>& x;
    const std::vector<double>& p;
  } points[] = {{0.0, x0, p0}, {2.5, x1, p1}};

  std::size_t compared = 0;
  for (const auto& named : cm->tapes()) {
    const Tape& tape = *named.tape;
    QVERIFY2(tape.isNative(), named.name.c_str());
    const std::size_t n = tape.numOutputs();
    std::vector<double> interpreted(n + 1), native(n + 1);
    for (const auto& pt : points) {
      tape.interpret(pt.t, pt.x.data(), pt.p.data(), interpreted.data());
      tape.evaluate(pt.t, pt.x.data(), pt.p.data(), native.data());
      for (std::size_t i = 0; i < n; ++i, ++compared)
        QVERIFY2(sameBits(interpreted[i], native[i]),
                 qPrintable(QString("%1[%2] at t=%3: tape %4, native %5")
                                .arg(named.name.c_str()).arg(i).arg(pt.t)
                                .arg(interpreted[i], 0, 'g', 17).arg(native[i], 0, 'g', 17)));
    }
  }
  QVERIFY(compared > 0);
  // And through the public evaluators (the paired tapes split through scratch buffers).
  std::vector<double> f(x0.size()), a(x0.size()), fRef(x0.size()), aRef(x0.size());
  cm->rhsAndSecond(2.5, x1.data(), p1.data(), f.data(), a.data());
  for (const auto& named : cm->tapes()) {
    if (named.name == "f") named.tape->interpret(2.5, x1.data(), p1.data(), fRef.data());
    if (named.name == "a") named.tape->interpret(2.5, x1.data(), p1.data(), aRef.data());
  }
  for (std::size_t i = 0; i < f.size(); ++i) {
    QVERIFY(sameBits(f[i], fRef[i]));
    QVERIFY(sameBits(a[i], aRef[i]));
  }
}

void TestNativeEvaluators::quickTierFromConstruction_data() { nativeEqualsTape_data(); }

void TestNativeEvaluators::quickTierFromConstruction() {
  QFETCH(QString, file);
  if (!fs::exists(file.toStdString())) QSKIP("model not found beside the checkout");
  if (!TccModule::available()) QSKIP("built without libtcc");
  // A fresh cache and a start delay no test outlives: the tcc code is what runs.
  const fs::path cache = cache_ / "quick";
  ScopedEnv dir("SENSODE_CACHE_DIR", cache.string());
  ScopedEnv delay("SENSODE_NATIVE_DELAY", "3600");
  ScopedEnv onLoad("SENSODE_NATIVE_SYNC_INSTRUCTIONS", "100000000");
  const auto cm = load(file.toStdString());
  const NativeStatus st = cm->nativeStatus();
  QVERIFY2(st.tier == EvaluationTier::Quick, (st.message + " / " + st.quickError).c_str());
  QCOMPARE(st.state, NativeState::Waiting);
  QVERIFY2(st.message.find("tcc code in use") != std::string::npos, st.message.c_str());
  QVERIFY(compareAllTapesWithInterpreter(*cm) > 0);
  // The optimised tier, when it comes, takes over mid-life and agrees as well.
  if (!haveCompiler()) return;
  QVERIFY2(cm->waitForNative(600), cm->nativeStatus().message.c_str());
  QVERIFY(cm->nativeStatus().tier == EvaluationTier::Optimised);
  QVERIFY(compareAllTapesWithInterpreter(*cm) > 0);
}

void TestNativeEvaluators::quickTierInBackgroundAboveThreshold() {
  // Models above SENSODE_NATIVE_SYNC_INSTRUCTIONS (by default all) load without waiting for
  // emission and tcc: the interpreter serves at first, tcc's code follows from the thread.
  const fs::path file = petabModel("Bachmann_MSB2011");
  if (!fs::exists(file)) QSKIP("model not found beside the checkout");
  if (!TccModule::available()) QSKIP("built without libtcc");
  ScopedEnv dir("SENSODE_CACHE_DIR", (cache_ / "quick-background").string());
  ScopedEnv delay("SENSODE_NATIVE_DELAY", "3600");
  ScopedEnv threshold("SENSODE_NATIVE_SYNC_INSTRUCTIONS", "0");
  const auto cm = load(file);
  QTRY_VERIFY_WITH_TIMEOUT(cm->nativeStatus().tier == EvaluationTier::Quick, 20000);
  QVERIFY(compareAllTapesWithInterpreter(*cm) > 0);
  // x0, f and y went through tcc first, alone: a small part of the model's C, native before
  // the rest was even emitted.
  const NativeStatus st = cm->nativeStatus();
  QVERIFY2(st.firstNativeSeconds >= 0, st.message.c_str());
  QVERIFY(st.firstSourceBytes > 0);
  QVERIFY2(st.firstSourceBytes * 4 < st.sourceBytes,
           (std::to_string(st.firstSourceBytes) + " of " + std::to_string(st.sourceBytes)).c_str());
}

void TestNativeEvaluators::disabledFallsBackToTape() {
  const fs::path file = petabModel("Boehm_JProteomeRes2014");
  if (!fs::exists(file)) QSKIP("model not found beside the checkout");
  ScopedEnv off("SENSODE_NATIVE", "0");
  const auto cm = load(file);
  QCOMPARE(cm->nativeStatus().state, NativeState::Disabled);
  QVERIFY2(cm->nativeStatus().message.find("SENSODE_NATIVE") != std::string::npos,
           cm->nativeStatus().message.c_str());
  QVERIFY(!cm->waitForNative(1.0));
  for (const auto& named : cm->tapes()) QVERIFY(!named.tape->isNative());
  std::vector<double> p = cm->nominalParameters(), x(static_cast<std::size_t>(cm->nx())),
                      f(x.size());
  cm->initialState(0.0, p.data(), x.data());
  cm->rhs(0.0, x.data(), p.data(), f.data());
  for (double v : f) QVERIFY(std::isfinite(v));
}

void TestNativeEvaluators::missingOrFailingCompilerFallsBackToTape() {
  const fs::path file = petabModel("Boehm_JProteomeRes2014");
  if (!fs::exists(file)) QSKIP("model not found beside the checkout");
  // A compiler that does not exist, and one that runs and fails ("false" exits with 1). A fresh
  // cache so that nothing compiled earlier is found.
  const fs::path cache = cache_ / "fallback";
  ScopedEnv dir("SENSODE_CACHE_DIR", cache.string());
  ScopedEnv noQuickTier("SENSODE_TCC", "0");
  const std::pair<const char*, NativeState> compilers[] = {
      {"/nonexistent/sensode-no-cc", NativeState::NoCompiler}, {"false", NativeState::Failed}};
  for (const auto& [cc, expected] : compilers) {
    ScopedEnv compiler("SENSODE_CC", cc);
    const auto cm = load(file);
    QVERIFY(!cm->waitForNative(60));
    const NativeStatus st = cm->nativeStatus();
    QVERIFY2(st.state == expected, st.message.c_str());
    QVERIFY2(st.message.find("tape interpreter in use") != std::string::npos, st.message.c_str());
    for (const auto& named : cm->tapes()) QVERIFY(!named.tape->isNative());
    std::vector<double> p = cm->nominalParameters(), x(static_cast<std::size_t>(cm->nx())),
                        f(x.size());
    cm->initialState(0.0, p.data(), x.data());
    cm->rhs(0.0, x.data(), p.data(), f.data());
    for (double v : f) QVERIFY(std::isfinite(v));
  }
  QCOMPARE(filesIn(cache, ".so"), std::size_t{0});
  QCOMPARE(filesIn(cache, ".c"), std::size_t{0});  // temporaries cleaned up
}

void TestNativeEvaluators::failingCompilerKeepsQuickTier() {
  const fs::path file = petabModel("Boehm_JProteomeRes2014");
  if (!fs::exists(file)) QSKIP("model not found beside the checkout");
  if (!TccModule::available()) QSKIP("built without libtcc");
  ScopedEnv dir("SENSODE_CACHE_DIR", (cache_ / "fallback-quick").string());
  ScopedEnv compiler("SENSODE_CC", "false");
  const auto cm = load(file);
  QVERIFY(!cm->waitForNative(60));
  const NativeStatus st = cm->nativeStatus();
  QCOMPARE(st.state, NativeState::Failed);
  QVERIFY(st.tier == EvaluationTier::Quick);
  QVERIFY2(st.message.find("tcc code in use") != std::string::npos, st.message.c_str());
  QVERIFY(compareAllTapesWithInterpreter(*cm) > 0);
}

void TestNativeEvaluators::secondLoadHitsCache() {
  const fs::path file = petabModel("Fujita_SciSignal2010");
  if (!fs::exists(file)) QSKIP("model not found beside the checkout");
  if (!haveCompiler()) QSKIP("no system C compiler");
  const fs::path cache = cache_ / "reuse";
  ScopedEnv dir("SENSODE_CACHE_DIR", cache.string());
  {
    const auto first = load(file);
    QVERIFY2(first->waitForNative(600), first->nativeStatus().message.c_str());
    QVERIFY(!first->nativeStatus().cacheHit);
  }
  QCOMPARE(filesIn(cache, ".so"), std::size_t{1});
  fs::path library;
  for (const auto& f : fs::directory_iterator(cache))
    if (f.path().extension() == ".so") library = f.path();
  struct stat before {};
  QCOMPARE(::stat(library.c_str(), &before), 0);
  // The second load finds the library (same source, same compiler command) and loads it
  // without the start delay and without compiling again.
  const auto second = load(file);
  QVERIFY2(second->waitForNative(60), second->nativeStatus().message.c_str());
  QVERIFY(second->nativeStatus().cacheHit);
  QCOMPARE(second->nativeStatus().library, library);
  QCOMPARE(filesIn(cache, ".so"), std::size_t{1});
  // Not rewritten (the hit touches its mtime, for the cache's LRU order, but not its inode).
  struct stat after {};
  QCOMPARE(::stat(library.c_str(), &after), 0);
  QCOMPARE(after.st_ino, before.st_ino);
  // A clone shares the native code.
  const auto clone = second->clone();
  for (const auto& named : clone->tapes()) QVERIFY(named.tape->isNative());
}

// Short runs never compile beside themselves (0.5 s); a model whose compile takes long starts it
// only once the run has lasted half of that, so that shorter runs keep both cores (Lang: 5.7 MB
// of C, ~71 s; its adjoint took 22–23 s with the compile beside it, 12–15 s without) and leave
// the compile to a job at their end. SENSODE_NATIVE_DELAY still decides when set.
void TestNativeEvaluators::ccStartsLaterForLongCompiles() {
  ScopedEnv unset("SENSODE_NATIVE_DELAY", "");
  QCOMPARE(ccStartDelaySeconds(48'000), 0.5);    // Boehm
  QCOMPARE(ccStartDelaySeconds(279'000), 0.5);   // Bachmann: ~7 s of cc
  QCOMPARE(ccStartDelaySeconds(400'000), 0.5);   // 10 s: still short
  QVERIFY(std::abs(ccStartDelaySeconds(5'683'000) - 71.0) < 0.1);  // Lang
  QVERIFY(ccStartDelaySeconds(19'000'000) > 200);                   // 500-species network
  ScopedEnv set("SENSODE_NATIVE_DELAY", "2.5");
  QCOMPARE(ccStartDelaySeconds(5'683'000), 2.5);
  ScopedEnv zero("SENSODE_NATIVE_DELAY", "0");
  QCOMPARE(ccStartDelaySeconds(5'683'000), 0.0);
}

void TestNativeEvaluators::destroyWhileCompilingIsSafe() {
  const fs::path file = petabModel("Bachmann_MSB2011");
  if (!fs::exists(file)) QSKIP("model not found beside the checkout");
  if (!haveCompiler()) QSKIP("no system C compiler");
  const fs::path cache = cache_ / "cancel";
  ScopedEnv dir("SENSODE_CACHE_DIR", cache.string());
  ScopedEnv noDelay("SENSODE_NATIVE_DELAY", "0");
  for (int round = 0; round < 3; ++round) {
    auto cm = load(file);
    // Let the compiler start (Bachmann takes seconds to compile), then destroy the model.
    QTRY_VERIFY_WITH_TIMEOUT(cm->nativeStatus().state != NativeState::Waiting, 10000);
    QElapsedTimer timer;
    timer.start();
    cm.reset();
    QVERIFY2(timer.elapsed() < 2000, "destruction waited for the compiler");
  }
  QCOMPARE(filesIn(cache, ".c"), std::size_t{0});  // the killed compiler's temporaries are gone
}

QTEST_GUILESS_MAIN(TestNativeEvaluators)
#include "tst_native_evaluators.moc"
