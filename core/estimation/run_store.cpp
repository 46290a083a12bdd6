// SPDX-License-Identifier: MIT
#include "core/estimation/run_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "core/common/errors.h"
#include "core/estimation/profile_likelihood.h"

namespace sensode::estimation {
namespace {

namespace fs = std::filesystem;

std::string number(double v) { return exactNumber(v); }

// FNV-1a, 64 bits: enough to tell an edited file from its original (not a security hash).
std::string fileHash(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot read it to fingerprint the run");
  std::uint64_t h = 0xcbf29ce484222325ULL;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buffer[i]);
      h *= 0x100000001b3ULL;
    }
  }
  char out[20];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string startFileName(const char* folder, int index) {
  char name[48];
  std::snprintf(name, sizeof name, "%s/%06d.txt", folder, index);
  return name;
}

std::string profileFileName(const std::string& id, int direction) {
  return "profiles/" + id + (direction < 0 ? ".down.txt" : ".up.txt");
}

[[noreturn]] void ioError(const fs::path& file, const std::string& what) {
  throw Error(file.string() + ": " + what + " (" + std::strerror(errno) + ")");
}

}  // namespace

RunFingerprint runFingerprint(const petab::Problem& problem, const EstimationOptions& o) {
  RunFingerprint f;
  const auto add = [&](const std::string& key, const std::string& value) {
    f.emplace_back(key, value);
  };
  add("format", "sensode-run 1");
  add("sensode_version", SENSODE_VERSION);
  add("problem", fs::absolute(problem.yamlFile).string());
  const auto files = [&](const char* role, const std::vector<fs::path>& list) {
    for (std::size_t i = 0; i < list.size(); ++i)
      add(std::string("file_") + role + (list.size() > 1 ? std::to_string(i) : ""),
          list[i].filename().string() + " " + fileHash(list[i]));
  };
  files("yaml", {problem.yamlFile});
  files("sbml", {problem.sbmlFile});
  files("parameters", problem.parameterFiles);
  files("conditions", problem.conditionFiles);
  files("observables", problem.observableFiles);
  files("measurements", problem.measurementFiles);
  add("starts", std::to_string(o.starts));
  add("seed", std::to_string(o.seed));
  add("start_values", o.useStartValues ? "yes" : "no");
  add("global", toString(o.global));
  add("screen", std::to_string(o.screen));
  add("global_evaluations", std::to_string(o.globalEvaluations));
  add("global_local_every", std::to_string(o.globalLocalEvery));
  add("polish", std::to_string(o.polish));
  add("continue_stalled", o.continueStalled ? "on" : "off");
  add("optimizer", toString(o.optimizer));
  add("gradient", petab::toString(o.gradient));
  add("forward_integrator", integrators::toString(o.objective.forwardIntegrator));
  add("rtol", number(o.objective.integrator.rtol));
  add("atol", number(o.objective.integrator.atol));
  add("max_steps", std::to_string(o.objective.integrator.maxSteps));
  add("max_iterations", std::to_string(o.maxIterations));
  add("ftol", number(o.functionTolerance));
  add("xtol", number(o.parameterTolerance));
  add("gtol", number(o.gradientTolerance));
  add("acceleration", o.geodesicAcceleration ? "on" : "off");
  std::string profiles;
  for (const std::string& id : o.profileParameters) profiles += (profiles.empty() ? "" : ",") + id;
  add("profile", profiles.empty() ? "-" : profiles);
  add("confidence_level", number(o.confidenceLevel));
  add("profile_max_points", std::to_string(o.profileMaxPoints));
  add("profile_max_step", number(o.profileMaxStep));
  for (const EstimatedParameter& p : o.parameters)
    add("parameter_" + p.id, std::string(p.estimate ? "estimated " : "fixed ") +
                                 petab::toString(p.scale) + " " + number(p.lower) + " " +
                                 number(p.upper) + " " + number(p.start));
  return f;
}

std::optional<std::string> fingerprintValue(const RunFingerprint& fingerprint,
                                            const std::string& key) {
  for (const auto& [k, v] : fingerprint)
    if (k == key) return v;
  return std::nullopt;
}

EstimationOptions optionsFromFingerprint(const RunFingerprint& f, const std::string& what) {
  EstimationOptions o;
  for (const auto& [key, value] : f) {
    const auto bad = [&]() { return Error(what + ": '" + key + "' has the value '" + value + "'"); };
    const auto real = [&]() {
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end) throw bad();
      return v;
    };
    const auto integer = [&]() {
      char* end = nullptr;
      const long long v = std::strtoll(value.c_str(), &end, 10);
      if (end == value.c_str() || *end) throw bad();
      return v;
    };
    if (key == "starts") o.starts = static_cast<int>(integer());
    else if (key == "seed") o.seed = static_cast<std::uint64_t>(integer());
    else if (key == "start_values") o.useStartValues = value == "yes";
    else if (key == "global") {
      const auto g = globalPhaseFromString(value);
      if (!g) throw bad();
      o.global = *g;
    } else if (key == "screen") o.screen = static_cast<int>(integer());
    else if (key == "global_evaluations") o.globalEvaluations = static_cast<long>(integer());
    else if (key == "global_local_every") o.globalLocalEvery = static_cast<int>(integer());
    else if (key == "polish") o.polish = static_cast<int>(integer());
    else if (key == "continue_stalled") o.continueStalled = value == "on";
    else if (key == "optimizer") {
      const auto m = optimizerFromString(value);
      if (!m) throw bad();
      o.optimizer = *m;
    } else if (key == "gradient") {
      const auto g = petab::gradientMethodFromString(value);
      if (!g) throw bad();
      o.gradient = *g;
    } else if (key == "forward_integrator") {
      const auto m = integrators::methodFromString(value);
      if (!m) throw bad();
      o.objective.forwardIntegrator = *m;
    } else if (key == "rtol") o.objective.integrator.rtol = real();
    else if (key == "atol") o.objective.integrator.atol = real();
    else if (key == "max_steps") o.objective.integrator.maxSteps = static_cast<long>(integer());
    else if (key == "max_iterations") o.maxIterations = static_cast<int>(integer());
    else if (key == "ftol") o.functionTolerance = real();
    else if (key == "xtol") o.parameterTolerance = real();
    else if (key == "gtol") o.gradientTolerance = real();
    else if (key == "acceleration") o.geodesicAcceleration = value == "on";
    else if (key == "profile") {
      std::istringstream in(value == "-" ? std::string() : value);
      std::string id;
      while (std::getline(in, id, ','))
        if (!id.empty()) o.profileParameters.push_back(id);
    } else if (key == "confidence_level") o.confidenceLevel = real();
    else if (key == "profile_max_points") o.profileMaxPoints = static_cast<int>(integer());
    else if (key == "profile_max_step") o.profileMaxStep = real();
    else if (key.rfind("parameter_", 0) == 0) {
      EstimatedParameter p;
      p.id = key.substr(10);
      std::istringstream in(value);
      std::string estimated, scale;
      in >> estimated >> scale >> p.lower >> p.upper >> p.start;
      if (!in) throw bad();
      p.estimate = estimated == "estimated";
      p.scale = scale == "log10" ? petab::Scale::Log10
                : scale == "log" ? petab::Scale::Log
                                 : petab::Scale::Lin;
      o.parameters.push_back(p);
    }
  }
  return o;
}

std::optional<std::string> fingerprintDifference(const RunFingerprint& stored,
                                                 const RunFingerprint& current) {
  std::map<std::string, std::string> there(stored.begin(), stored.end());
  for (const auto& [key, value] : current) {
    const auto it = there.find(key);
    if (it == there.end()) return key + " is '" + value + "' here and not set there";
    if (it->second != value) {
      if (key.rfind("file_", 0) == 0)
        return "the PEtab file " + value.substr(0, value.find(' ')) +
               " differs (content hash " + it->second.substr(it->second.find(' ') + 1) +
               " there, " + value.substr(value.find(' ') + 1) + " here)";
      return key + " is '" + it->second + "' there, '" + value + "' here";
    }
    there.erase(it);
  }
  if (!there.empty())
    return there.begin()->first + " is '" + there.begin()->second + "' there and not set here";
  return std::nullopt;
}

RunStore::RunStore(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  for (const char* sub : {"starts", "polished", "profiles"}) fs::create_directories(dir_ / sub, ec);
  if (ec || !fs::is_directory(dir_ / "starts"))
    throw Error(dir_.string() + ": cannot create the folder for the results (" + ec.message() +
                ")");
}

bool RunStore::hasRun() const { return fs::is_regular_file(dir_ / "run.txt"); }

RunFingerprint RunStore::fingerprint() const {
  const auto text = readFile("run.txt");
  return text ? keyValueLines(*text) : RunFingerprint{};
}

void RunStore::saveFingerprint(const RunFingerprint& fingerprint) const {
  std::string text;
  for (const auto& [key, value] : fingerprint) text += key + " " + value + "\n";
  writeFile("run.txt", text);
}

std::optional<StartPlan> RunStore::plan() const {
  const auto text = readFile("plan.txt");
  if (!text) return std::nullopt;
  return startPlanFromText(*text, (dir_ / "plan.txt").string());
}

void RunStore::savePlan(const StartPlan& plan) const { writeFile("plan.txt", toText(plan)); }

std::vector<StartResult> RunStore::finishedStarts() const { return readStarts("starts"); }

std::vector<StartResult> RunStore::polishedStarts() const { return readStarts("polished"); }

std::vector<StartResult> RunStore::readStarts(const std::string& folder) const {
  std::vector<StartResult> out;
  if (!fs::is_directory(dir_ / folder)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_ / folder)) {
    const std::string name = e.path().filename().string();
    // Temporary files of a write under way (or cut short by a crash) start with a dot.
    if (name.empty() || name[0] == '.' || e.path().extension() != ".txt") continue;
    const auto text = readFile(folder + "/" + name);
    if (!text) continue;
    out.push_back(startResultFromText(*text, e.path().string()));
  }
  std::sort(out.begin(), out.end(),
            [](const StartResult& a, const StartResult& b) { return a.index < b.index; });
  return out;
}

void RunStore::saveStart(const StartResult& start) const {
  writeFile(startFileName("starts", start.index), toText(start));
}

void RunStore::savePolished(const StartResult& start) const {
  writeFile(startFileName("polished", start.index), toText(start));
}

std::optional<detail::ProfileDirection> RunStore::profileDirection(const std::string& id,
                                                                   int direction) const {
  const std::string name = profileFileName(id, direction);
  const auto text = readFile(name);
  if (!text) return std::nullopt;
  return profileDirectionFromText(*text, (dir_ / name).string());
}

void RunStore::saveProfileDirection(const std::string& id, int direction,
                                    const detail::ProfileDirection& d) const {
  writeFile(profileFileName(id, direction), toText(d));
}

void RunStore::writeFile(const std::string& name, const std::string& content) const {
  const fs::path target = dir_ / name;
  const fs::path temporary =
      target.parent_path() / ("." + target.filename().string() + "." + std::to_string(getpid()));
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) ioError(temporary, "cannot create");
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      ioError(temporary, "write failed");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) ioError(temporary, "cannot flush to disk");
  // The folder is not flushed after the rename: after a power loss a record can be missing
  // (and its start is computed again), never half there; flushing it too doubled the cost of a
  // record (docs/benchmarks/estimation.md, "Multistart over MPI ranks").
  if (::rename(temporary.c_str(), target.c_str()) != 0) ioError(target, "cannot rename into");
}

std::optional<std::string> RunStore::readFile(const std::string& name) const {
  std::ifstream in(dir_ / name, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace sensode::estimation
