// SPDX-License-Identifier: MIT
#include "core/symbolic/native_compiler.h"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/symbolic/native_cache.h"
#include "core/symbolic/tcc_jit.h"

namespace sensode::symbolic {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A function pointer from dlsym (POSIX guarantees the object/function pointer round trip).
NativeFunction functionFrom(void* symbol) {
  NativeFunction f = nullptr;
  static_assert(sizeof f == sizeof symbol);
  std::memcpy(&f, &symbol, sizeof f);
  return f;
}

// Above this many instructions in one tape tcc's code (its chunks pass values through memory,
// unoptimised) evaluates no faster than the interpreter: such tapes stay interpreted.
constexpr std::size_t kQuickMaxTapeInstructions = 60000;

// A run that ends before tcc has stored the model's entry waits for it up to this much C: tcc
// compiles ~35 MB/s (docs/benchmarks/performance.md §1), so at most ~0.5 s, once per model. At
// 1 MB, short time courses of Laske (34 states) and SalazarCavazos (75) never stored an entry,
// so no later run of theirs was native from its first evaluation.
constexpr std::size_t kStoreAtExitMaxBytes = 16 << 20;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::string nativeSymbol(std::size_t i) { return "sensode_tape_" + std::to_string(i); }

std::string emitNativeSource(const std::vector<const Tape*>& tapes) {
  std::string source = "/* Sensode native evaluators (Tape::emitCScratch) */\n" + Tape::cPrelude();
  for (std::size_t i = 0; i < tapes.size(); ++i) {
    tapes[i]->appendCScratch(source, nativeSymbol(i));
    source += '\n';
  }
  return source;
}

const char* toString(EvaluationTier tier) {
  switch (tier) {
    case EvaluationTier::Interpreter: return "tape interpreter";
    case EvaluationTier::Quick: return "tcc";
    case EvaluationTier::Optimised: return "cc -O2";
  }
  return "?";
}

// How long a run must have lasted before cc -O2 starts on `sourceBytes` of C. Short runs never
// compile beside themselves (0.5 s): they leave the compile to a job at their end
// (detached_compile.h). A model whose compile takes long starts it only once the run has lasted
// half of that: cc -O2 gets through ~25–55 kB of this C per second (docs/benchmarks/
// performance.md §1), so Lang's 5.7 MB take minutes, and a compile beside the run takes the core
// it needs: Lang's adjoint took 22–23 s with that compile beside it, 12–15 s without
// (2026-11-28). Runs that last (an estimate, a profile) compile while they run.
double ccStartDelaySeconds(std::size_t sourceBytes) {
  constexpr double kShortRunSeconds = 0.5;
  constexpr double kCcBytesPerSecond = 40e3;  // cc -O2, conservative for this machine
  constexpr double kLongCompileSeconds = 10;
  const char* v = std::getenv("SENSODE_NATIVE_DELAY");
  if (v && *v) {
    char* end = nullptr;
    const double d = std::strtod(v, &end);
    if (end != v && d >= 0) return d;
  }
  const double expected = static_cast<double>(sourceBytes) / kCcBytesPerSecond;
  return expected > kLongCompileSeconds ? expected / 2 : kShortRunSeconds;
}

const char* toString(NativeState state) {
  switch (state) {
    case NativeState::Disabled: return "disabled";
    case NativeState::Waiting: return "waiting";
    case NativeState::Compiling: return "compiling";
    case NativeState::Ready: return "ready";
    case NativeState::NoCompiler: return "no compiler";
    case NativeState::Failed: return "failed";
    case NativeState::Cancelled: return "cancelled";
  }
  return "?";
}

bool NativeCompiler::enabledByEnvironment() {
  const char* v = std::getenv("SENSODE_NATIVE");
  if (!v) return true;
  const std::string s = v;
  return !(s == "0" || s == "off" || s == "false" || s == "OFF" || s == "FALSE");
}

std::size_t NativeCompiler::maxInstructions() {
  const char* v = std::getenv("SENSODE_NATIVE_MAX_INSTRUCTIONS");
  if (!v || !*v) return 200000;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end != v ? static_cast<std::size_t>(n) : 200000;
}

fs::path NativeCompiler::cacheDirectory() { return NativeCache::directory(); }

NativeCompiler::NativeCompiler(std::vector<Unit> units, bool useCache) {
  for (auto& u : units) {
    bindings_.push_back(std::move(u.binding));
    early_.push_back(u.early);
    instructions_.push_back(u.tape->numInstructions());
  }
  const std::vector<std::string> command = compilerCommand();
  for (const std::string& word : command) command_ += (command_.empty() ? "" : " ") + word;
  std::size_t instructions = 0;
  for (const auto& u : units) instructions += u.tape->numInstructions();
  std::vector<const Tape*> tapes;
  for (const auto& u : units) tapes.push_back(u.tape);

  if (useCache && nativeCacheEnabled()) {
    cache_ = NativeCache::open();
    cacheUsable_ = cache_.usable();
    status_.cache = cacheUsable_ ? "miss" : "refused: " + cache_.refusal();
  }
  if (cacheUsable_) {
    // The key is the hash of the whole C, so the lookup needs it emitted here, on the loading
    // thread: a hit then runs native code from the first evaluation (docs/native-cache.md has
    // what emission costs).
    try {
      const auto t0 = Clock::now();
      source_ = emitNativeSource(tapes);
      key_ = cache_.key(source_, command.front(),
                        command_.substr(command.front().size()) + "; tcc -nostdlib -shared");
      status_.emitSeconds = secondsSince(t0);
      status_.sourceBytes = source_.size();
      // An earlier run's detached cc -O2 job may have left its object: this run loads it.
      cache_.adoptPending(key_);
      std::string problem;
      const auto entry = cache_.find(key_, problem);
      if (problem.rfind("refused: ", 0) == 0) {
        cacheUsable_ = false;  // neither loaded nor overwritten
        status_.cache = problem;
      } else if (!problem.empty()) {
        status_.cache = "miss: " + problem;
      }
      if (entry) {
        const auto t1 = Clock::now();
        if (const std::string error = loadEntry(*entry); error.empty()) {
          status_.cache = "hit";
          status_.cacheHit = true;
          if (entry->tier == "cc") {
            status_.compileSeconds = secondsSince(t1);
            status_.state = NativeState::Ready;
            status_.message = "native: ready (cache hit) " + entry->object.filename().string();
            source_.clear();
            source_.shrink_to_fit();
            return;
          }
          // tcc's object: native now; cc -O2 replaces it if the run lasts past the delay.
          status_.state = NativeState::Waiting;
          status_.message = "native: waiting to compile with cc -O2 (tcc code from the cache in use)";
          thread_ = std::thread([this] { run(); });
          return;
        }
        status_.cache = "miss: cache entry could not be loaded, rebuilt";
      }
    } catch (const std::exception& e) {
      status_.state = NativeState::Failed;
      status_.message = std::string("native: ") + e.what() + " (tape interpreter in use)";
      return;
    }
  }
  if (instructions > quickOnLoadInstructions()) {
    // Emission and tcc run first thing on the thread (no delay), on copies, while the
    // interpreter serves: loading is not held up, and on a second core the quick tier arrives
    // while the run starts.
    for (const auto& u : units) tapeCopies_.push_back(*u.tape);
    status_.state = NativeState::Waiting;
    status_.message = withCacheNote("native: compiling with tcc (tape interpreter in use)");
  } else if (prepare(tapes)) {
    return;  // failed
  }
  thread_ = std::thread([this] { run(); });
}

std::string NativeCompiler::withCacheNote(const std::string& message) const {
  // A refused cache is said once, in the message every state carries.
  return status_.cache.rfind("refused: ", 0) == 0 ? message + " [cache " + status_.cache + "]"
                                                  : message;
}

bool NativeCompiler::prepare(const std::vector<const Tape*>& tapes) {
  NativeStatus st;
  auto commit = [&](NativeState state, const std::string& message) {
    {
      std::lock_guard lock(mutex_);
      st.state = state;
      st.message = withCacheNote("native: " + message);
      st.tier = status_.tier;  // loadLibrary() / the quick tier set it under the lock
      st.library = status_.library;
      st.cache = status_.cache;
      st.cacheHit = status_.cacheHit;
      if (st.emitSeconds == 0) st.emitSeconds = status_.emitSeconds;
      if (st.sourceBytes == 0) st.sourceBytes = status_.sourceBytes;
      status_ = st;
    }
    changed_.notify_all();  // waitUntilDone() waits for a final state
  };
  try {
    // With the cache, the quick tier goes on after a cancel (the process is ending) for models
    // whose C tcc compiles in milliseconds: its entry is what makes the next run native from its
    // first evaluation (docs/native-cache.md). Larger ones would hold the exit back.
    auto storeAtExit = [&] { return cacheUsable_ && source_.size() <= kStoreAtExitMaxBytes; };
    if (cancelled() && !storeAtExit()) {
      commit(NativeState::Cancelled, "cancelled (tape interpreter in use)");
      return true;
    }
    // The early units first (a few ms), so that the first evaluations run native code while the
    // whole model's C is emitted and compiled.
    if (!cancelled()) compileEarlyUnits(tapes, st);
    if (source_.empty()) {
      const auto t0 = Clock::now();
      source_ = emitNativeSource(tapes);
      st.emitSeconds = secondsSince(t0);
      st.sourceBytes = source_.size();
    }

    if (cancelled() && !storeAtExit()) {
      commit(NativeState::Cancelled, "cancelled (" + inUse() + " in use)");
      return true;
    }
    if (TccModule::available()) {
      const auto t0 = Clock::now();
      std::string error;
      bool done = cacheUsable_ && quickThroughCache(error);
      if (!done) {
        if (auto module = TccModule::compile(source_, error)) {
          std::vector<NativeFunction> fns;
          for (std::size_t i = 0; i < bindings_.size() && error.empty(); ++i) {
            fns.push_back(module->function(nativeSymbol(i)));
            if (!fns.back()) error = "tcc: no symbol " + nativeSymbol(i);
            if (instructions_[i] > kQuickMaxTapeInstructions) fns.back() = nullptr;
          }
          if (error.empty()) {
            publish(fns, std::move(module));
            std::lock_guard lock(mutex_);
            status_.tier = EvaluationTier::Quick;
          }
        }
      }
      st.quickSeconds = secondsSince(t0);
      st.quickError = error;
      if (status_.tier == EvaluationTier::Optimised) {  // another process's cc -O2 entry
        commit(NativeState::Ready, "ready (cache hit) " + status_.library.filename().string());
        return true;
      }
    } else {
      st.quickError = "tcc not available (built without libtcc, or SENSODE_TCC=0)";
    }
  } catch (const std::exception& e) {
    commit(NativeState::Failed, std::string(e.what()) + " (" + inUse() + " in use)");
    return true;
  }
  if (cancelled()) {
    commit(NativeState::Cancelled, "cancelled (" + inUse() + " in use)");
    return true;
  }
  commit(NativeState::Waiting, "waiting to compile with cc -O2 (" + inUse() + " in use)");
  return false;
}

bool NativeCompiler::quickThroughCache(std::string& error) {
  // A concurrent process may have stored this model meanwhile (its cc -O2 entry is not to be
  // replaced by tcc's).
  std::string problem;
  if (const auto entry = cache_.find(key_, problem); entry && loadEntry(*entry).empty()) {
    std::lock_guard lock(mutex_);
    status_.cacheHit = true;
    return true;
  }
  const fs::path temporary = cache_.temporaryPath(key_, ".so");
  if (!TccModule::writeSharedObject(source_, temporary.string(), error)) {
    std::error_code ec;
    fs::remove(temporary, ec);
    return false;
  }
  if (error = cache_.store(key_, temporary, "tcc"); !error.empty()) return false;
  const auto entry = cache_.find(key_, problem);
  if (!entry) {
    error = "the cache entry just written is gone" + (problem.empty() ? "" : ": " + problem);
    return false;
  }
  error = loadEntry(*entry);
  return error.empty();
}

std::string NativeCompiler::loadEntry(const NativeCacheEntry& entry) {
  return loadLibrary(entry.loadPath(), entry.object,
                     entry.tier == "cc" ? EvaluationTier::Optimised : EvaluationTier::Quick);
}

void NativeCompiler::compileEarlyUnits(const std::vector<const Tape*>& tapes, NativeStatus& st) {
  std::vector<bool> early = early_;
  for (std::size_t i = 0; i < tapes.size(); ++i)
    early[i] = early[i] && tapes[i]->numInstructions() <= kQuickMaxTapeInstructions;
  if (!TccModule::available() || std::find(early.begin(), early.end(), true) == early.end())
    return;
  // Only the early units, under their own symbols (nativeSymbol(i) of their index).
  std::string source = "/* Sensode native evaluators, early units */\n" + Tape::cPrelude();
  for (std::size_t i = 0; i < tapes.size(); ++i)
    if (early[i]) {
      tapes[i]->appendCScratch(source, nativeSymbol(i));
      source += '\n';
    }
  std::string error;
  auto module = TccModule::compile(source, error);
  if (!module) return;  // the whole unit's compilation below says why
  std::vector<NativeFunction> fns(bindings_.size(), nullptr);
  for (std::size_t i = 0; i < bindings_.size(); ++i)
    if (early[i] && !(fns[i] = module->function(nativeSymbol(i)))) return;
  publish(fns, std::move(module), &early);
  st.firstNativeSeconds = secondsSince(created_);
  st.firstSourceBytes = source.size();
  // Visible at once: a short run ends before the rest of the model is compiled.
  std::lock_guard lock(mutex_);
  status_.firstNativeSeconds = st.firstNativeSeconds;
  status_.firstSourceBytes = st.firstSourceBytes;
  status_.message = withCacheNote("native: compiling with tcc (tcc code for the run's first evaluators in use)");
}

std::size_t NativeCompiler::quickOnLoadInstructions() {
  const char* v = std::getenv("SENSODE_NATIVE_SYNC_INSTRUCTIONS");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end != v ? static_cast<std::size_t>(n) : 0;
}

std::string NativeCompiler::inUse() const {
  // Only the compiler's own thread (or the constructor) changes the tier: no lock needed here.
  return status_.tier == EvaluationTier::Quick ? "tcc code" : "tape interpreter";
}

void NativeCompiler::publish(const std::vector<NativeFunction>& functions,
                             std::shared_ptr<void> owner, const std::vector<bool>* only) {
  for (std::size_t i = 0; i < bindings_.size(); ++i) {
    if (only && !(*only)[i]) continue;
    NativeBinding& b = *bindings_[i];
    // The new owner first, holding the previous one too; then the function (release).
    auto both = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(
        owner, b.library);
    b.library = both;
    b.fn.store(functions[i], std::memory_order_release);
  }
}

std::string NativeCompiler::loadLibrary(const std::string& path, const fs::path& library,
                                        EvaluationTier tier) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return std::string("dlopen: ") + (err ? err : "unknown error");
  }
  std::shared_ptr<void> lib(handle, [](void* h) { dlclose(h); });
  std::vector<NativeFunction> fns;
  for (std::size_t i = 0; i < bindings_.size(); ++i) {
    void* sym = dlsym(handle, nativeSymbol(i).c_str());
    if (!sym) return "dlsym " + nativeSymbol(i) + " failed";
    fns.push_back(functionFrom(sym));
    // tcc's code of a very long tape is no faster than the interpreter (as in memory).
    if (tier == EvaluationTier::Quick && instructions_[i] > kQuickMaxTapeInstructions)
      fns.back() = nullptr;
  }
  publish(fns, std::move(lib));
  std::lock_guard lock(mutex_);
  status_.library = library;
  status_.tier = tier;
  return {};
}

bool NativeCompiler::nativeFromFirstEvaluation() const {
  bool any = false;
  for (const auto& b : bindings_) {
    const unsigned char first = b->firstCall.load(std::memory_order_relaxed);
    if (first == 2) return false;
    any = any || first == 1;
  }
  return any;
}

NativeCompiler::~NativeCompiler() {
  {
    std::lock_guard lock(mutex_);
    cancel_ = true;
  }
  changed_.notify_all();
  // run() polls cancel_ and kills a compiler of its own (a detached job goes on), so this
  // returns quickly.
  if (thread_.joinable()) thread_.join();
  compileAfterTheRun();
}

NativeStatus NativeCompiler::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

bool NativeCompiler::waitUntilDone(double timeoutSeconds) {
  std::unique_lock lock(mutex_);
  startNow_ = true;
  changed_.notify_all();
  changed_.wait_for(lock, std::chrono::duration<double>(timeoutSeconds), [this] {
    return status_.state != NativeState::Waiting && status_.state != NativeState::Compiling;
  });
  return status_.state == NativeState::Ready;
}

bool NativeCompiler::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancel_;
}

void NativeCompiler::setState(NativeState state, const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    status_.state = state;
    status_.message = withCacheNote("native: " + message);
  }
  changed_.notify_all();
}

void NativeCompiler::run() {
  // Busy time only: compilation and loading, after the start delay.
  auto start = Clock::now();
  auto finish = [&](NativeState state, const std::string& message) {
    {
      std::lock_guard lock(mutex_);
      status_.compileSeconds = secondsSince(start);
    }
    setState(state, message + (state == NativeState::Ready ? "" : " (" + inUse() + " in use)"));
  };
  try {
    if (!tapeCopies_.empty()) {
      std::vector<const Tape*> tapes;
      for (const Tape& t : tapeCopies_) tapes.push_back(&t);
      const bool done = prepare(tapes);
      tapeCopies_.clear();
      tapeCopies_.shrink_to_fit();
      if (done) return;
    }
    // Wait out the start delay (cancellable; waitUntilDone() ends it early).
    {
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, std::chrono::duration<double>(ccStartDelaySeconds(source_.size())),
                        [this] { return cancel_ || startNow_; });
      if (cancel_) {
        status_.state = NativeState::Cancelled;
        status_.message = "native: cancelled (" + inUse() + " in use)";
        return;
      }
    }
    start = Clock::now();
    std::error_code ec;
    if (cacheUsable_) {
      auto [state, message] = compileIntoCache();
      if (state == NativeState::Cancelled) return setState(state, message);
      return finish(state, message);
    }
    setState(NativeState::Compiling, "compiling " + std::to_string(source_.size() / 1024) +
                                         " kB of C with cc -O2 (" + inUse() + " in use)");
    // Into the cache folder (unique temporaries, stored atomically), else into a private
    // temporary folder that goes once the object is loaded.
    fs::path privateDir;
    if (!cacheUsable_) {
      std::string pattern = (fs::temp_directory_path() / "sensode-native-XXXXXX").string();
      if (!mkdtemp(pattern.data()))
        return finish(NativeState::Failed, "cannot create a temporary folder: " +
                                               std::string(std::strerror(errno)));
      privateDir = pattern;
    }
    auto removePrivate = [&] {
      if (!privateDir.empty()) fs::remove_all(privateDir, ec);
    };
    const fs::path cFile = cacheUsable_ ? cache_.temporaryPath(key_, ".c") : privateDir / "model.c";
    const fs::path soFile =
        cacheUsable_ ? cache_.temporaryPath(key_, ".so") : privateDir / "model.so";
    NativeState failure = NativeState::Failed;
    if (std::string error = compileOptimised(cFile, soFile, failure); !error.empty()) {
      removePrivate();
      if (failure == NativeState::Cancelled) return setState(failure, error);
      return finish(failure, error);
    }
    if (cacheUsable_) {
      if (std::string error = cache_.store(key_, soFile, "cc"); !error.empty())
        return finish(NativeState::Failed, error);
      std::string problem;
      const auto entry = cache_.find(key_, problem);
      if (!entry) return finish(NativeState::Failed, "the cache entry just written is gone " + problem);
      if (const std::string error = loadEntry(*entry); !error.empty())
        return finish(NativeState::Failed, error);
      return finish(NativeState::Ready, "ready (compiled) " + entry->object.filename().string());
    }
    const std::string error = loadLibrary(soFile.string(), soFile, EvaluationTier::Optimised);
    removePrivate();  // loaded objects stay mapped
    if (!error.empty()) return finish(NativeState::Failed, error);
    finish(NativeState::Ready, "ready (compiled, not cached)");
  } catch (const std::exception& e) {
    finish(NativeState::Failed, e.what());
  }
}

}  // namespace sensode::symbolic
