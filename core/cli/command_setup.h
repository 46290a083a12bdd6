// SPDX-License-Identifier: MIT
// What every model command does before its run: check the files (the input exists, every output
// folder exists — before a possibly long run, not after it), and for SBML commands import,
// build and compile the model and check the --set ids against it.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cli/arguments.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::cli {

// Throws Error("<file>: no such file" / "not a regular file" / "cannot write: no folder ...").
void checkFiles(const std::string& input, std::initializer_list<std::optional<std::string>> outputs);

struct CommandModel {
  std::shared_ptr<const symbolic::CompiledModel> model;
  std::string modelId;     // the SBML model's id (may be empty)
  double loadSeconds = 0;  // import + ODE build + compilation
};

// Imports `path` (the importer makes it absolute for libSBML, so comp external model files are
// found next to it, and names it as given in messages) and checks the overrides' ids, so that a mistyped --set id is reported as such: Error("<path>:
// <why>"). Import errors are the importer's (SbmlError naming file, element and reason).
// `native`: which evaluators tcc compiles first (nativeOptionsFor) and whether to use the cache.
CommandModel loadCommandModel(const std::string& path,
                              const std::vector<std::pair<std::string, double>>& overrides,
                              const symbolic::NativeOptions& native = {});

// --no-cache, for every command that compiles a model: neither read nor write the compiled-model
// cache (docs/native-cache.md). applyCacheOption() switches it off for the process.
OptionSpec noCacheOption();
void applyCacheOption(const Arguments& a);

// The evaluators a run evaluates first, compiled first by the quick tier in a first run:
// odeSD f with ẍ ("fa") and J with J_J ("J_JJ"), other methods f and J; with sensitivities also
// ∂f/∂p (and odeSD's ∂ẍ/∂p), S0 and the outputs' derivatives.
symbolic::NativeOptions nativeOptionsFor(bool odesd, bool sensitivities);

}  // namespace sensode::cli
