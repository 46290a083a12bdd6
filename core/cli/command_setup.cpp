// SPDX-License-Identifier: MIT
#include "core/cli/command_setup.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/native_cache.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/time_course_task.h"

namespace sensode::cli {

namespace fs = std::filesystem;

void checkFiles(const std::string& input, std::initializer_list<std::optional<std::string>> outputs) {
  if (!fs::is_regular_file(input))
    throw Error(input + ": " + (fs::exists(input) ? "not a regular file" : "no such file"));
  for (const auto& file : outputs) {
    if (!file) continue;
    const fs::path dir = fs::absolute(*file).parent_path();
    if (!fs::is_directory(dir)) throw Error(*file + ": cannot write: no folder " + dir.string());
  }
}

CommandModel loadCommandModel(const std::string& path,
                              const std::vector<std::pair<std::string, double>>& overrides,
                              const symbolic::NativeOptions& native) {
  const auto start = std::chrono::steady_clock::now();
  // As typed: the importer resolves it for libSBML and names it in messages as the user wrote it.
  const model::Model m = model::importSbmlFile(path);
  // What the import assumed (e.g. a valueless parameter taken as 1) goes to stderr, so that it
  // never mixes with CSV on stdout.
  for (const std::string& w : m.warnings)
    std::cerr << "sensode: warning: " << path << ": " << w << "\n";
  CommandModel loaded;
  loaded.modelId = m.id;
  loaded.model = namingFileOfErrors(path, [&] {
    return std::make_shared<const symbolic::CompiledModel>(symbolic::buildOdeSystem(m), native);
  });
  loaded.loadSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    tasks::resolveParameters(*loaded.model, overrides);
  } catch (const InvalidOptions& e) {
    throw Error(path + ": " + e.what());
  }
  return loaded;
}

OptionSpec noCacheOption() {
  return {"--no-cache", "", "neither load nor store compiled models in the on-disk cache"};
}

void applyCacheOption(const Arguments& a) {
  if (a.has("--no-cache")) symbolic::setNativeCacheEnabled(false);
}

symbolic::NativeOptions nativeOptionsFor(bool odesd, bool sensitivities) {
  symbolic::NativeOptions o;
  o.earlyTapes = {"x0", "f", "y"};
  if (odesd)
    o.earlyTapes.insert(o.earlyTapes.end(), {"fa", "J_JJ"});
  else
    o.earlyTapes.push_back("J");
  if (sensitivities) {
    o.earlyTapes.insert(o.earlyTapes.end(), {"fp", "S0", "yx", "yp"});
    if (odesd) o.earlyTapes.push_back("ap_mix");
  }
  return o;
}

}  // namespace sensode::cli
