// SPDX-License-Identifier: MIT
// The quick tier of the native evaluators: the same C that native_compiler.h hands to `cc -O2`,
// compiled in memory by libtcc (the Tiny C Compiler as a library) in milliseconds, on the loading
// thread, so that a model evaluates natively from its first call. tcc does not optimise (its code
// is 2–4× slower than cc -O2; docs/benchmarks/performance.md) and never contracts a*b+c into a
// fused multiply-add, so its results equal the tape interpreter's bit for bit, like cc's.
//
// The emitted C includes <math.h>; tcc gets plain prototypes instead (no header search, no
// tcc runtime library: -nostdlib) and the libm functions are bound by address, so the quick tier
// needs no file at run time and calls the very libm the interpreter calls.
//
// libtcc 0.9.27 keeps global state: every compilation holds one process-wide lock.
//
// The libtcc calls live in the sensode_tcc library (tcc_backend.cpp), which executables link and
// install with installTccBackend(): Debian's libtcc.a is position-dependent code that a shared
// object cannot hold, so the GUI's plugins run without the quick tier (cc -O2 still replaces the
// interpreter in the background there).
#pragma once

#include <memory>
#include <string>

#include "core/symbolic/tape.h"

namespace sensode::symbolic {

// The libtcc entry points (tcc_backend.cpp): compile returns a TCCState* or null with `error`.
struct TccBackend {
  void* (*compile)(const std::string& source, std::string& error);
  NativeFunction (*function)(void* state, const char* name);
  void (*release)(void* state);
  // The same compilation written as a shared object to `path` (for the compiled-model cache,
  // native_cache.h); false with `error`. Its libm calls are left to the dynamic linker, which
  // binds them to the libm the process already has loaded.
  bool (*writeSharedObject)(const std::string& source, const std::string& path, std::string& error);
};

// Makes TccModule available in this process: defined in sensode_tcc (tcc_backend.cpp), called
// by executables before they load a model.
void installTccBackend();

// Machine code compiled in memory; freed when the last reference goes.
class TccModule {
 public:
  // True when the process installed the libtcc backend (installTccBackend) and SENSODE_TCC is
  // not "0"/"off".
  static bool available();
  static void setBackend(const TccBackend* backend);
  // Compiles `source` (Tape::cPrelude() + Tape::emitCScratch() units). Null, with the compiler's
  // first message in `error`, when tcc rejects it.
  static std::shared_ptr<TccModule> compile(const std::string& source, std::string& error);

  // Compiles `source` into a shared object at `path` (dlopen it to use it); false with `error`.
  static bool writeSharedObject(const std::string& source, const std::string& path,
                                std::string& error);

  // The function `name` (a Tape::emitCScratch unit), or null.
  NativeFunction function(const std::string& name) const;

  ~TccModule();
  TccModule(const TccModule&) = delete;
  TccModule& operator=(const TccModule&) = delete;

 private:
  TccModule(void* state, const TccBackend* backend) : state_(state), backend_(backend) {}
  void* state_;  // TCCState*
  const TccBackend* backend_;
};

}  // namespace sensode::symbolic
