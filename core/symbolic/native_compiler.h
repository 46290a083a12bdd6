// SPDX-License-Identifier: MIT
// Optional native evaluators: a model's tapes emitted as C (Tape::emitCScratch), compiled by the
// system C compiler in a background thread into a shared object, loaded with dlopen, and switched
// into each Tape atomically once ready. The tape interpreter keeps running until then, and for
// good whenever there is no compiler, compilation fails or SENSODE_NATIVE=0: the native path
// only ever makes evaluation faster, it never makes loading slower or fails a model.
//
// The compiler runs as `cc -O2 -shared -fPIC -ffp-contract=off` (cc from $SENSODE_CC when set):
// without fused multiply-adds and -ffast-math the compiled code performs the tape's operations
// in the tape's order, so native and interpreted results are identical. Shared objects are
// cached under a hash of the compiler command and the source in $SENSODE_CACHE_DIR, else
// $XDG_CACHE_HOME/sensode, else ~/.cache/sensode; a model loaded again starts native at once.
//
// Compilation starts after a short delay ($SENSODE_NATIVE_DELAY seconds, default 0.5; cache hits
// load at once): models that live shorter than that — test-suite cases, unit tests — never
// spawn a compiler. Destroying the compiler (with the last CompiledModel sharing it) cancels:
// a running compiler process is killed and the thread joined.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/symbolic/tape.h"

namespace sensode::symbolic {

enum class NativeState {
  Disabled,    // SENSODE_NATIVE=0, or the model is too large (see maxInstructions())
  Waiting,     // the start delay has not passed yet (tape interpreter in use)
  Compiling,   // the C compiler is running (tape interpreter in use)
  Ready,       // every tape evaluates natively
  NoCompiler,  // the C compiler could not be started (tape interpreter in use)
  Failed,      // emission, compilation or loading failed (tape interpreter in use)
  Cancelled,   // destroyed before it finished
};

const char* toString(NativeState state);

struct NativeStatus {
  NativeState state = NativeState::Disabled;
  std::string message;          // one line for logs and stats, e.g. "native: ready (cache hit)"
  bool cacheHit = false;        // the shared object came from the cache
  double compileSeconds = 0;    // wall time of emission + compilation + loading, s
  std::size_t sourceBytes = 0;  // size of the emitted C
  std::filesystem::path library;  // the cached shared object, once ready
};

class NativeCompiler {
 public:
  struct Unit {
    Tape tape;  // a copy (the thread never touches tapes being evaluated), released once emitted
    std::shared_ptr<NativeBinding> binding;
  };
  // Starts the background job and returns at once.
  explicit NativeCompiler(std::vector<Unit> units);
  ~NativeCompiler();
  NativeCompiler(const NativeCompiler&) = delete;
  NativeCompiler& operator=(const NativeCompiler&) = delete;

  NativeStatus status() const;
  // Blocks until the job has finished (any final state) or `timeoutSeconds` passed, and starts
  // it at once if it is still in its start delay. True when native evaluation is in use.
  bool waitUntilDone(double timeoutSeconds);

  // False when SENSODE_NATIVE is "0", "off" or "false".
  static bool enabledByEnvironment();
  // Models with more tape instructions than this are not compiled: the C compiler needs about
  // 1 ms per instruction at -O2 and memory to match, which is no longer a background job
  // ($SENSODE_NATIVE_MAX_INSTRUCTIONS, default 200000).
  static std::size_t maxInstructions();
  static std::filesystem::path cacheDirectory();

 private:
  void run();
  bool cancelled() const;
  void setState(NativeState state, const std::string& message);

  std::vector<Unit> units_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  NativeStatus status_;
  bool cancel_ = false;
  bool startNow_ = false;
  std::thread thread_;
};

}  // namespace sensode::symbolic
