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
#pragma once

#include <memory>
#include <string>

#include "core/symbolic/tape.h"

namespace sensode::symbolic {

// Machine code compiled in memory; freed when the last reference goes.
class TccModule {
 public:
  // True when Sensode was built with libtcc (libtcc-dev) and SENSODE_TCC is not "0"/"off".
  static bool available();
  // Compiles `source` (Tape::cPrelude() + Tape::emitCScratch() units). Null, with the compiler's
  // first message in `error`, when tcc rejects it.
  static std::shared_ptr<TccModule> compile(const std::string& source, std::string& error);

  // The function `name` (a Tape::emitCScratch unit), or null.
  NativeFunction function(const std::string& name) const;

  ~TccModule();
  TccModule(const TccModule&) = delete;
  TccModule& operator=(const TccModule&) = delete;

 private:
  explicit TccModule(void* state) : state_(state) {}
  void* state_;  // TCCState*
};

}  // namespace sensode::symbolic
