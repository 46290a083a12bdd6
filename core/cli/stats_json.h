// SPDX-License-Identifier: MIT
// The `--stats FILE.json` object of the command-line contract: one flat JSON object whose keys
// benchmarks and checks rely on (method, wall_seconds, steps, rhs_evals, jac_evals,
// lu_factorizations, newton_iterations, error_test_failures) plus what else is useful. Numbers
// are written with %.17g so that they round-trip; non-finite numbers become null.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"
#include "core/tasks/time_course_task.h"

namespace sensode::cli {

// A flat JSON object that keeps keys in insertion order.
class JsonObject {
 public:
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, long value);
  JsonObject& add(const std::string& key, int value) { return add(key, static_cast<long>(value)); }
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add(const std::string& key, const std::string& value);
  // A JSON array of strings.
  JsonObject& add(const std::string& key, const std::vector<std::string>& values);
  // A JSON array of numbers (jsonNumber each).
  JsonObject& add(const std::string& key, const std::vector<double>& values);
  // A JSON array of objects, each on one line.
  JsonObject& add(const std::string& key, const std::vector<JsonObject>& objects);
  JsonObject& add(const std::string& key, const char* value) {
    return add(key, std::string(value));
  }

  // The object, pretty-printed one key per line, with a trailing newline.
  std::string str() const;
  // The object on one line: {"a": 1, "b": [2, 3]}.
  std::string compact() const;
  // Writes str() to `file`; throws sensode::Error naming the file on failure.
  void write(const std::filesystem::path& file) const;

 private:
  std::vector<std::pair<std::string, std::string>> entries_;  // key, rendered value
};

// JSON string literal with escapes.
std::string jsonString(const std::string& s);
// %.17g, or null for NaN and ±inf (JSON has no spelling for them).
std::string jsonNumber(double v);

// The keys every `--stats` file has, from integrator statistics:
// steps, rhs_evals, jac_evals, lu_factorizations, newton_iterations, newton_failures,
// error_test_failures (and, for odeSD, second_derivative_evals, jacobian_of_second_evals),
// handover_time, handover_steps, fallback_steps (odeSD: CVODES steps in its bridges),
// fallbacks (array of sentences; empty when the method ran as asked).
void addIntegratorStats(JsonObject& json, const integrators::IntegratorStats& stats);

// Where evaluation ran: native (the status line at the end), native_tier, native_cache ("hit",
// "miss", "disabled", "refused: <why>"), native_from_first_evaluation (every evaluator the run
// used ran compiled code from its first call), native_emit_seconds, native_quick_seconds,
// native_first_seconds.
void addNativeStats(JsonObject& json, const symbolic::CompiledModel& compiled);

// "undefined_outputs": one object per output with no value at some output times,
// {"id": ..., "times": [...], "formula": ..., "reads": ..., "value": "NaN"} (empty array when
// every output has a value everywhere).
void addUndefinedOutputs(JsonObject& json, const std::vector<tasks::UndefinedOutput>& undefined);

// One stderr warning per undefined output: "sensode: warning: MODEL: 'alpha' has no value at
// t = 0: ... Formula: ..." (tasks::describe).
void warnUndefinedOutputs(const std::string& modelPath,
                          const std::vector<tasks::UndefinedOutput>& undefined);

}  // namespace sensode::cli
