// SPDX-License-Identifier: MIT
// Native evaluators in two tiers, from the same C (a model's tapes emitted by
// Tape::emitCScratch, one function per tape):
//
//  1. quick: first thing on the background thread (no delay; on the loading thread for models
//     up to quickOnLoadInstructions()), the C is compiled in memory by libtcc (tcc_jit.h) in
//     milliseconds and switched into every tape, so evaluation is native almost from the start
//     (about 2–3× slower than optimised C, 2× faster than the interpreter;
//     docs/benchmarks/performance.md). The units marked `early` (the right-hand side and what a
//     run evaluates before its first step) go first, alone: tcc compiles ~35 MB of C per second,
//     so the whole model's C (3.4 MB for 100 species) would hold the first native evaluation
//     back by ~100 ms where f alone takes a few;
//  2. optimised: `cc -O2 -shared -fPIC -ffp-contract=off` (cc from $SENSODE_CC when set) in a
//     background thread into a shared object, loaded with dlopen and switched into each tape
//     atomically once ready — for runs that last: it starts after a delay
//     ($SENSODE_NATIVE_DELAY seconds; default 0.5, or half the compile's expected time when
//     that exceeds 10 s), so short runs never spawn a compiler that their exit would kill.
//
// Both tiers' shared objects are cached on disk (native_cache.h: keyed by a SHA-256 of the C,
// Sensode's version and the compilers; checked before loading): a model's first run writes tcc's
// object (the quick tier is compiled to a file and loaded from it, a few ms more than in memory),
// a run that lasts past the start delay replaces it by cc -O2's, and every later run loads the
// entry on the loading thread, so its first evaluation runs native code. Without the cache
// (setNativeCacheEnabled(false), a refused folder) cc -O2 compiles in a private temporary folder.
//
// Without fused multiply-adds and -ffast-math, both compilers' code performs the tape's
// operations in the tape's order and calls the same libm, so every tier gives the interpreter's
// numbers bit for bit (tests/core/tst_native_evaluators.cpp) and a switch mid-run changes no
// result. The native path only ever makes evaluation faster: whenever a tier is off
// (SENSODE_NATIVE=0 for both, SENSODE_TCC=0 for the quick one), missing or failing, the
// previous one (in the end the tape interpreter) keeps running. Destroying the compiler (with
// the last CompiledModel sharing it) cancels: a running compiler process is killed and the
// thread joined.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/symbolic/detached_compile.h"
#include "core/symbolic/native_cache.h"
#include "core/symbolic/tape.h"

namespace sensode::symbolic {

// The state of the optimised tier (cc -O2); the quick tier's outcome is NativeStatus::tier.
enum class NativeState {
  Disabled,    // SENSODE_NATIVE=0, or the model is too large (see maxInstructions())
  Waiting,     // the start delay has not passed yet
  Compiling,   // the C compiler is running
  Ready,       // every tape evaluates the optimised code
  NoCompiler,  // the C compiler could not be started
  Failed,      // emission, compilation or loading failed
  Cancelled,   // destroyed before it finished
};

const char* toString(NativeState state);

// What evaluates the tapes right now.
enum class EvaluationTier {
  Interpreter,  // the tape interpreter
  Quick,        // tcc's in-memory code
  Optimised,    // cc -O2's shared object
};

const char* toString(EvaluationTier tier);

struct NativeStatus {
  NativeState state = NativeState::Disabled;
  EvaluationTier tier = EvaluationTier::Interpreter;
  // One line for logs and stats, e.g. "native: ready (cache hit) sensode-....so" or
  // "native: waiting to compile with cc -O2 (tcc code in use)".
  std::string message;
  bool cacheHit = false;        // the code in use came from the cache (tcc's or cc -O2's)
  // The cache at load time: "hit", "miss" (": damaged entry ..., rebuilt" when one was found and
  // removed), "disabled", or "refused: <why>" (a folder or entry another user could write).
  std::string cache = "disabled";
  double compileSeconds = 0;    // wall time of the optimised tier: compilation + loading, s
  double emitSeconds = 0;       // wall time of emitting the C (loading thread), s
  double quickSeconds = 0;      // wall time of the tcc compilation (loading thread), s
  // Wall time from the compiler's construction (the end of loading) until the early units ran
  // tcc's code (-1: they did not), and the size of their C.
  double firstNativeSeconds = -1;
  std::size_t firstSourceBytes = 0;
  std::string quickError;       // why the quick tier is not in use, when it was tried
  std::size_t sourceBytes = 0;  // size of the emitted C
  std::filesystem::path library;  // the cached shared object, once ready
};

// All tapes as one C translation unit (Tape::cPrelude() then one Tape::emitCScratch function per
// tape, named by nativeSymbol(i)): what both tiers compile and the cache key hashes.
std::string emitNativeSource(const std::vector<const Tape*>& tapes);
std::string nativeSymbol(std::size_t i);

// Seconds after loading at which cc -O2 starts on `sourceBytes` of C: $SENSODE_NATIVE_DELAY when
// set, else 0.5, or half the compile's expected time (at 40 kB/s) when that exceeds 10 s.
double ccStartDelaySeconds(std::size_t sourceBytes);

class NativeCompiler {
 public:
  struct Unit {
    const Tape* tape;  // read only during construction (emission)
    std::shared_ptr<NativeBinding> binding;
    bool early = false;  // compiled by tcc ahead of the rest (what a run evaluates first)
  };
  // Emits the C, loads a cached shared object or else compiles the quick tier (on the calling
  // thread up to quickOnLoadInstructions(), else first thing on the background thread), then
  // leaves the optimised tier to the background job and returns.
  // `useCache`: read and write the on-disk cache (also subject to nativeCacheEnabled()).
  explicit NativeCompiler(std::vector<Unit> units, bool useCache = true);
  ~NativeCompiler();
  NativeCompiler(const NativeCompiler&) = delete;
  NativeCompiler& operator=(const NativeCompiler&) = delete;

  NativeStatus status() const;
  // Blocks until the job has finished (any final state) or `timeoutSeconds` passed, and starts
  // it at once if it is still in its start delay. True when native evaluation is in use.
  bool waitUntilDone(double timeoutSeconds);

  // True when every tape evaluated so far ran native code from its first call (and one did).
  bool nativeFromFirstEvaluation() const;

  // False when SENSODE_NATIVE is "0", "off" or "false".
  static bool enabledByEnvironment();
  // Models with more tape instructions than this are not compiled: the C compiler needs about
  // 1 ms per instruction at -O2 and memory to match, which is no longer a background job
  // ($SENSODE_NATIVE_MAX_INSTRUCTIONS, default 200000).
  static std::size_t maxInstructions();
  // Models with up to this many tape instructions get emission and the quick tier on the loading
  // thread; larger ones get both first thing on the background thread, the interpreter serving
  // until then ($SENSODE_NATIVE_SYNC_INSTRUCTIONS, default 0: always in the background — tcc's
  // milliseconds cost more than they save on the typical short run, docs/benchmarks/performance.md).
  static std::size_t quickOnLoadInstructions();
  static std::filesystem::path cacheDirectory();  // NativeCache::directory()

 private:
  void run();
  // Emits the C, loads a cached object, else compiles the quick tier; true when nothing is left
  // for the optimised tier to do (cache hit, or failure).
  bool prepare(const std::vector<const Tape*>& tapes);
  bool cancelled() const;
  void setState(NativeState state, const std::string& message);
  // The early units alone through tcc, switched in at once (the first native evaluation).
  void compileEarlyUnits(const std::vector<const Tape*>& tapes, NativeStatus& st);
  // Switches every tape (only those with `only[i]`, when given) to `functions` (one per unit),
  // keeping `owner` (and whatever code the tapes ran before: another thread may still be inside
  // it) loaded for as long as the tapes live.
  void publish(const std::vector<NativeFunction>& functions, std::shared_ptr<void> owner,
               const std::vector<bool>* only = nullptr);
  // Loads the shared object and publishes it as `tier`; empty on success, else why not.
  // `path` is what dlopen opens (a cache entry's /proc/self/fd/N), `library` what status names.
  std::string loadLibrary(const std::string& path, const std::filesystem::path& library,
                          EvaluationTier tier);
  // Loads a verified cache entry (tcc's: the quick tier, cc's: the optimised one).
  std::string loadEntry(const NativeCacheEntry& entry);
  // The quick tier through the cache: tcc writes a shared object, stored then loaded from its
  // entry (what the next run loads). True when it is in use.
  bool quickThroughCache(std::string& error);
  // cc -O2 into `soFile` (its C, log next to it); empty on success, else the final state's text
  // (state in `failure`). Polls cancellation. Without a usable cache: the compile ends with the
  // run.
  std::string compileOptimised(const std::filesystem::path& cFile,
                               const std::filesystem::path& soFile, NativeState& failure);
  // With the cache: cc -O2 as a detached job (detached_compile.h), or another process's job of
  // the same model, whose object is then adopted and loaded. The final state and its message.
  std::pair<NativeState, std::string> compileIntoCache();
  // Loads key's cc entry, if there is one (`hit`: it counts as a cache hit, i.e. another
  // process or an earlier run compiled it); the entry's file name on success, else empty.
  std::string loadOptimisedEntry(bool hit);
  // At the end of a run that ended before cc -O2 began: the compile as a detached job, so that
  // the model's next run loads cc's code (one such job per cache folder at a time).
  void compileAfterTheRun();
  // `cc -O2 …` ($SENSODE_CC for cc), as the job runs it and the cache key names it.
  static std::vector<std::string> compilerCommand();
  std::string withCacheNote(const std::string& message) const;
  std::string inUse() const;  // "tcc code" or "tape interpreter", for messages

  std::vector<std::shared_ptr<NativeBinding>> bindings_;
  std::vector<bool> early_;            // per unit: NativeCompiler::Unit::early
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  std::vector<Tape> tapeCopies_;       // large models: what the thread emits, released after
  std::string source_;                 // the emitted C, until the optimised tier has used it
  std::string key_;                    // the cache key (NativeCache::key)
  std::vector<std::size_t> instructions_;  // per unit: tape instructions
  NativeCache cache_;
  bool cacheUsable_ = false;           // read and write cache_ (false: disabled or refused)
  std::string command_;                // the compiler command, for messages
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  NativeStatus status_;
  DetachedCompile job_;                // this run's detached cc -O2 job, if it started one
  bool jobRunning_ = false;            // job_ held the lock when last seen
  bool cancel_ = false;
  bool startNow_ = false;
  std::thread thread_;
};

}  // namespace sensode::symbolic
