// SPDX-License-Identifier: MIT
#include "core/symbolic/native_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/symbolic/tcc_jit.h"

extern char** environ;

namespace sensode::symbolic {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char* const kFlags[] = {"-O2", "-shared", "-fPIC", "-ffp-contract=off"};

std::string compilerName() {
  const char* cc = std::getenv("SENSODE_CC");
  return cc && *cc ? cc : "cc";
}

double startDelaySeconds() {
  const char* v = std::getenv("SENSODE_NATIVE_DELAY");
  if (!v || !*v) return 0.5;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  return end != v && d >= 0 ? d : 0.5;
}

// FNV-1a, 64 bit: the cache key needs no cryptographic strength, only a stable spread.
std::uint64_t fnv1a(const std::string& text, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string firstLines(const fs::path& file, std::size_t maxChars) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text.substr(0, maxChars);
}

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

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::string nativeSymbol(std::size_t i) { return "sensode_tape_" + std::to_string(i); }

std::string emitNativeSource(const std::vector<const Tape*>& tapes) {
  std::string source = "/* Sensode native evaluators (Tape::emitCScratch) */\n" + Tape::cPrelude();
  for (std::size_t i = 0; i < tapes.size(); ++i)
    source += tapes[i]->emitCScratch(nativeSymbol(i)) + "\n";
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

fs::path NativeCompiler::cacheDirectory() {
  if (const char* d = std::getenv("SENSODE_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "sensode";
  if (const char* d = std::getenv("HOME"); d && *d) return fs::path(d) / ".cache" / "sensode";
  return fs::temp_directory_path() / "sensode-cache";
}

NativeCompiler::NativeCompiler(std::vector<Unit> units) {
  for (auto& u : units) {
    bindings_.push_back(std::move(u.binding));
    early_.push_back(u.early);
  }
  command_ = compilerName();
  for (const char* f : kFlags) command_ += std::string(" ") + f;
  std::size_t instructions = 0;
  for (const auto& u : units) instructions += u.tape->numInstructions();
  if (instructions > quickOnLoadInstructions()) {
    // Emission and tcc run first thing on the thread (no delay), on copies, while the
    // interpreter serves: loading is not held up, and on a second core the quick tier arrives
    // while the run starts.
    for (const auto& u : units) tapeCopies_.push_back(*u.tape);
    status_.state = NativeState::Waiting;
    status_.message = "native: compiling with tcc (tape interpreter in use)";
  } else if (prepare([&] {
               std::vector<const Tape*> tapes;
               for (const auto& u : units) tapes.push_back(u.tape);
               return tapes;
             }())) {
    return;  // cache hit, or failed
  }
  thread_ = std::thread([this] { run(); });
}

bool NativeCompiler::prepare(const std::vector<const Tape*>& tapes) {
  NativeStatus st;
  auto commit = [&](NativeState state, const std::string& message) {
    {
      std::lock_guard lock(mutex_);
      st.state = state;
      st.message = "native: " + message;
      st.tier = status_.tier;  // loadLibrary() / the quick tier set it under the lock
      st.library = status_.library;
      status_ = st;
    }
    changed_.notify_all();  // waitUntilDone() waits for a final state (a cache hit is one)
  };
  try {
    if (cancelled()) {
      commit(NativeState::Cancelled, "cancelled (tape interpreter in use)");
      return true;
    }
    // The early units first (a few ms), so that the first evaluations run native code while the
    // whole model's C is emitted and compiled. On a cache hit this is wasted, but only those
    // milliseconds: the hit is known only once the whole C is emitted (its hash is the key).
    compileEarlyUnits(tapes, st);
    auto t0 = Clock::now();
    source_ = emitNativeSource(tapes);
    key_ = hex(fnv1a(source_, fnv1a(command_ + "\n")));
    st.emitSeconds = secondsSince(t0);
    st.sourceBytes = source_.size();

    // A cached optimised object beats both compilations: load it and be done.
    const fs::path library = cacheDirectory() / ("sensode-" + key_ + ".so");
    std::error_code ec;
    if (fs::exists(library, ec)) {
      t0 = Clock::now();
      const std::string error = loadLibrary(library);
      st.compileSeconds = secondsSince(t0);
      if (error.empty()) {
        st.cacheHit = true;
        source_.clear();
        source_.shrink_to_fit();
        commit(NativeState::Ready, "ready (cache hit) " + library.filename().string());
        return true;
      }
      fs::remove(library, ec);  // damaged: compile afresh
    }

    // The quick tier (not cancellable once tcc runs: a destructor waits for it, milliseconds).
    if (cancelled()) {
      commit(NativeState::Cancelled, "cancelled (tape interpreter in use)");
      return true;
    }
    if (TccModule::available()) {
      t0 = Clock::now();
      std::string error;
      if (auto module = TccModule::compile(source_, error)) {
        std::vector<NativeFunction> fns;
        for (std::size_t i = 0; i < bindings_.size() && error.empty(); ++i) {
          fns.push_back(module->function(nativeSymbol(i)));
          if (!fns.back()) error = "tcc: no symbol " + nativeSymbol(i);
          if (tapes[i]->numInstructions() > kQuickMaxTapeInstructions) fns.back() = nullptr;
        }
        if (error.empty()) {
          publish(fns, std::move(module));
          std::lock_guard lock(mutex_);
          status_.tier = EvaluationTier::Quick;
        }
      }
      st.quickSeconds = secondsSince(t0);
      st.quickError = error;
    } else {
      st.quickError = "tcc not available (built without libtcc, or SENSODE_TCC=0)";
    }
  } catch (const std::exception& e) {
    commit(NativeState::Failed, std::string(e.what()) + " (" + inUse() + " in use)");
    return true;
  }
  commit(NativeState::Waiting, "waiting to compile with cc -O2 (" + inUse() + " in use)");
  return false;
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
    if (early[i]) source += tapes[i]->emitCScratch(nativeSymbol(i)) + "\n";
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
  status_.message = "native: compiling with tcc (tcc code for x0, f and outputs in use)";
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

std::string NativeCompiler::loadLibrary(const fs::path& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
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
  }
  publish(fns, std::move(lib));
  std::lock_guard lock(mutex_);
  status_.library = library;
  status_.tier = EvaluationTier::Optimised;
  return {};
}

NativeCompiler::~NativeCompiler() {
  {
    std::lock_guard lock(mutex_);
    cancel_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();  // run() polls cancel_ and kills a running compiler, so this returns quickly
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
    status_.message = "native: " + message;
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
      changed_.wait_for(lock, std::chrono::duration<double>(startDelaySeconds()),
                        [this] { return cancel_ || startNow_; });
      if (cancel_) {
        status_.state = NativeState::Cancelled;
        status_.message = "native: cancelled (" + inUse() + " in use)";
        return;
      }
    }
    start = Clock::now();
    const std::string cc = compilerName();
    const fs::path dir = cacheDirectory();
    const fs::path library = dir / ("sensode-" + key_ + ".so");
    std::error_code ec;
    // Another process may have compiled the same model since this one was loaded.
    const bool hit = fs::exists(library, ec);
    if (!hit) {
      setState(NativeState::Compiling, "compiling " + std::to_string(source_.size() / 1024) +
                                           " kB of C with cc -O2 (" + inUse() + " in use)");
      fs::create_directories(dir, ec);
      // Unique temporaries, renamed into place: concurrent processes compiling the same model
      // never see a half-written library.
      const std::string tmpStem =
          "tmp-" + key_ + "-" + std::to_string(getpid()) + "-" +
          hex(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(this)));
      const fs::path cFile = dir / (tmpStem + ".c"), soFile = dir / (tmpStem + ".so"),
                     logFile = dir / (tmpStem + ".log");
      {
        std::ofstream out(cFile);
        out << source_;
        if (!out) return finish(NativeState::Failed, "cannot write " + cFile.string());
      }
      source_.clear();
      source_.shrink_to_fit();
      auto cleanup = [&] {
        std::error_code ignored;
        fs::remove(cFile, ignored);
        fs::remove(soFile, ignored);
        fs::remove(logFile, ignored);
      };

      std::vector<std::string> args = {cc};
      for (const char* f : kFlags) args.emplace_back(f);
      args.insert(args.end(), {"-o", soFile.string(), cFile.string(), "-lm"});
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logFile.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
      // Its own process group, so that cancelling kills the driver's children (cc1, as) too.
      posix_spawnattr_t attributes;
      posix_spawnattr_init(&attributes);
      posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
      posix_spawnattr_setpgroup(&attributes, 0);
      pid_t pid = 0;
      const int spawnError =
          posix_spawnp(&pid, cc.c_str(), &actions, &attributes, argv.data(), environ);
      posix_spawnattr_destroy(&attributes);
      posix_spawn_file_actions_destroy(&actions);
      if (spawnError != 0) {
        cleanup();
        return finish(NativeState::NoCompiler,
                      "cannot run '" + cc + "': " + std::strerror(spawnError));
      }
      // Poll rather than block, so that cancellation can kill the compiler; the thread is the
      // only one that waits for this child, so the pid cannot be reused under it.
      int wstatus = 0;
      for (;;) {
        const pid_t r = waitpid(pid, &wstatus, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
          cleanup();
          return finish(NativeState::Failed, "lost the compiler process");
        }
        std::unique_lock lock(mutex_);
        if (changed_.wait_for(lock, std::chrono::milliseconds(20), [this] { return cancel_; })) {
          lock.unlock();
          kill(-pid, SIGKILL);
          waitpid(pid, &wstatus, 0);
          cleanup();
          setState(NativeState::Cancelled, "cancelled (" + inUse() + " in use)");
          return;
        }
      }
      if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        const bool missing = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127;
        const std::string log = firstLines(logFile, 300);
        cleanup();
        return finish(missing ? NativeState::NoCompiler : NativeState::Failed,
                      "'" + command_ + "' failed: " + log);
      }
      fs::rename(soFile, library, ec);
      if (ec) {
        cleanup();
        return finish(NativeState::Failed, "cannot store " + library.string() + ": " + ec.message());
      }
      cleanup();
    }

    if (const std::string error = loadLibrary(library); !error.empty()) {
      if (hit) fs::remove(library, ec);  // a damaged cache entry: the next load compiles afresh
      return finish(NativeState::Failed, error);
    }
    {
      std::lock_guard lock(mutex_);
      status_.cacheHit = hit;
    }
    finish(NativeState::Ready, std::string(hit ? "ready (cache hit) " : "ready (compiled) ") +
                                   library.filename().string());
  } catch (const std::exception& e) {
    finish(NativeState::Failed, e.what());
  }
}

}  // namespace sensode::symbolic
