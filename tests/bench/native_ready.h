// SPDX-License-Identifier: MIT
// Benchmarks time a model with the evaluators a user's run ends up with: CompiledModel starts on
// the tape interpreter and switches to native code when its background compilation is done
// (core/symbolic/native_compiler.h). Timing before that switch would compare one method on the
// interpreter with another on native code, so every benchmark waits for it first.
#pragma once

#include <ostream>
#include <string>

#include "core/symbolic/compiled_model.h"

namespace sensode::bench {

// Waits up to `timeoutSeconds` for the model's native evaluators; when they are not ready (no
// compiler, SENSODE_NATIVE=0, too large, timeout) writes a note naming the model and why, since
// its times are then the interpreter's. True when the model evaluates natively.
inline bool waitForNativeEvaluators(const symbolic::CompiledModel& model, const std::string& name,
                                    double timeoutSeconds, std::ostream& notes) {
  if (model.waitForNative(timeoutSeconds)) return true;
  notes << "note: " << name << " is timed with the tape interpreter ("
        << model.nativeStatus().message << ")\n";
  return false;
}

}  // namespace sensode::bench
