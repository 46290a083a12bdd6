// SPDX-License-Identifier: MIT
#include "core/estimation/work_units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/common/errors.h"
#include "core/estimation/profile_likelihood.h"

namespace sensode::estimation {
namespace {

std::string number(double v) { return exactNumber(v); }

std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string numbers(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += " " + number(v);
  return out;
}

std::vector<std::pair<std::string, std::string>> lines(const std::string& text) {
  return keyValueLines(text);
}

class Reader {
 public:
  Reader(const std::string& what, const std::string& key) : what_(what), key_(key) {}
  double toDouble(const std::string& s) const {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') fail("'" + s + "' is not a number");
    return v;
  }
  long toLong(const std::string& s) const {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (end == s.c_str() || *end != '\0') fail("'" + s + "' is not an integer");
    return v;
  }
  std::vector<double> toDoubles(const std::string& s) const {
    std::vector<double> out;
    std::istringstream in(s);
    std::string item;
    while (in >> item) out.push_back(toDouble(item));
    return out;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(what_ + ": '" + key_ + "': " + why);
  }

 private:
  const std::string& what_;
  const std::string& key_;
};

}  // namespace

std::string exactNumber(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::vector<std::pair<std::string, std::string>> keyValueLines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::size_t space = line.find(' ');
    out.emplace_back(line.substr(0, space),
                     space == std::string::npos ? std::string() : line.substr(space + 1));
  }
  return out;
}

std::optional<StartStatus> startStatusFromString(const std::string& s) {
  for (StartStatus st : {StartStatus::Converged, StartStatus::MaxIterations, StartStatus::Failed,
                         StartStatus::Cancelled, StartStatus::Stalled})
    if (s == toString(st)) return st;
  return std::nullopt;
}

std::string toText(const StartPlan& p) {
  std::string out;
  out += std::string("optimizer ") + toString(p.optimizer) + "\n";
  out += "optimizer_reason " + oneLine(p.optimizerReason) + "\n";
  out += std::string("gradient ") + petab::toString(p.gradient) + "\n";
  out += std::string("noise_residuals ") + (p.noiseResiduals ? "1" : "0") + "\n";
  for (const std::string& f : p.fallbacks) out += "fallback " + oneLine(f) + "\n";
  out += "nominal_objective " + number(p.nominalObjective) + "\n";
  out += std::string("global ") + toString(p.global) + "\n";
  out += "global_evaluations " + std::to_string(p.globalEvaluations) + "\n";
  out += "global_seconds " + number(p.globalSeconds) + "\n";
  out += "global_generations " + std::to_string(p.globalGenerations) + "\n";
  out += "global_local_searches " + std::to_string(p.globalLocalSearches) + "\n";
  out += "global_best " + number(p.globalBest) + "\n";
  out += "screened_points " + std::to_string(p.screenedPoints) + "\n";
  out += "screen_seconds " + number(p.screenSeconds) + "\n";
  for (const auto& s : p.starts) out += "start" + numbers(s) + "\n";
  return out;
}

StartPlan startPlanFromText(const std::string& text, const std::string& what) {
  StartPlan p;
  for (const auto& [key, value] : lines(text)) {
    const Reader r(what, key);
    if (key == "optimizer") {
      const auto o = optimizerFromString(value);
      if (!o || *o == Optimizer::Auto) r.fail("'" + value + "' is not ls or qn");
      p.optimizer = *o;
    } else if (key == "optimizer_reason") {
      p.optimizerReason = value;
    } else if (key == "gradient") {
      const auto g = petab::gradientMethodFromString(value);
      if (!g) r.fail("'" + value + "' is not a gradient method");
      p.gradient = *g;
    } else if (key == "noise_residuals") {
      p.noiseResiduals = r.toLong(value) != 0;
    } else if (key == "fallback") {
      p.fallbacks.push_back(value);
    } else if (key == "nominal_objective") {
      p.nominalObjective = r.toDouble(value);
    } else if (key == "global") {
      const auto g = globalPhaseFromString(value);
      if (!g) r.fail("'" + value + "' is not screen, ess or none");
      p.global = *g;
    } else if (key == "global_evaluations") {
      p.globalEvaluations = r.toLong(value);
    } else if (key == "global_seconds") {
      p.globalSeconds = r.toDouble(value);
    } else if (key == "global_generations") {
      p.globalGenerations = static_cast<int>(r.toLong(value));
    } else if (key == "global_local_searches") {
      p.globalLocalSearches = static_cast<int>(r.toLong(value));
    } else if (key == "global_best") {
      p.globalBest = r.toDouble(value);
    } else if (key == "screened_points") {
      p.screenedPoints = static_cast<int>(r.toLong(value));
    } else if (key == "screen_seconds") {
      p.screenSeconds = r.toDouble(value);
    } else if (key == "start") {
      p.starts.push_back(r.toDoubles(value));
    } else {
      r.fail("unknown key");
    }
  }
  return p;
}

void reportPlan(const StartPlan& plan, double runRtol, EstimationResult& result) {
  result.optimizer = plan.optimizer;
  result.optimizerReason = plan.optimizerReason;
  result.fallbacks = plan.fallbacks;
  result.nominalObjective = result.nominalObjectiveRunRtol = plan.nominalObjective;
  if (std::isfinite(plan.nominalObjective)) result.nominalObjectiveRtol = runRtol;
  result.global = plan.global;
  result.globalEvaluations = plan.globalEvaluations;
  result.globalSeconds = plan.globalSeconds;
  result.globalGenerations = plan.globalGenerations;
  result.globalLocalSearches = plan.globalLocalSearches;
  result.globalBest = plan.globalBest;
  result.screenedPoints = plan.screenedPoints;
  result.screenSeconds = plan.screenSeconds;
}

void reportForwardIntegrator(integrators::Method requested, EstimationResult& result) {
  result.forwardIntegrator = requested;
  long evaluations = 0;
  result.cvodesFallbacks = 0;
  for (const StartResult& s : result.starts) {
    result.cvodesFallbacks += s.cvodesFallbacks;
    evaluations += s.objectiveEvaluations;
  }
  if (result.cvodesFallbacks > 0)
    result.fallbacks.push_back(
        std::string(petab::kOdeSdFallback) + " in " + std::to_string(result.cvodesFallbacks) +
        " of the starts' " + std::to_string(evaluations) +
        " evaluations; CVODES computed those (StartResult messages name the last reason)");
}

void sortStartsByObjective(std::vector<StartResult>& starts) {
  std::stable_sort(starts.begin(), starts.end(), [](const StartResult& a, const StartResult& b) {
    const bool fa = std::isfinite(a.objective), fb = std::isfinite(b.objective);
    if (fa != fb) return fa;
    return fa && a.objective < b.objective;
  });
}

std::string toText(const StartResult& s) {
  std::string out;
  out += "index " + std::to_string(s.index) + "\n";
  out += std::string("status ") + toString(s.status) + "\n";
  out += "objective " + number(s.objective) + "\n";
  out += "start_objective " + number(s.startObjective) + "\n";
  out += "objective_rtol " + number(s.objectiveRtol) + "\n";
  out += "iterations " + std::to_string(s.iterations) + "\n";
  out += "objective_evaluations " + std::to_string(s.objectiveEvaluations) + "\n";
  out += "gradient_evaluations " + std::to_string(s.gradientEvaluations) + "\n";
  out += "cvodes_fallbacks " + std::to_string(s.cvodesFallbacks) + "\n";
  out += "wall_seconds " + number(s.wallSeconds) + "\n";
  out += "start" + numbers(s.start) + "\n";
  out += "parameters" + numbers(s.parameters) + "\n";
  out += "message " + oneLine(s.message) + "\n";
  // The last line: a record cut short (which the atomic write prevents on disk, and which a
  // truncated message would be) is refused instead of read as a start with defaults.
  out += "end\n";
  return out;
}

StartResult startResultFromText(const std::string& text, const std::string& what) {
  StartResult s;
  bool complete = false;
  for (const auto& [key, value] : lines(text)) {
    const Reader r(what, key);
    if (key == "index") {
      s.index = static_cast<int>(r.toLong(value));
    } else if (key == "status") {
      const auto st = startStatusFromString(value);
      if (!st) r.fail("'" + value + "' is not a start status");
      s.status = *st;
    } else if (key == "objective") {
      s.objective = r.toDouble(value);
    } else if (key == "start_objective") {
      s.startObjective = r.toDouble(value);
    } else if (key == "objective_rtol") {
      s.objectiveRtol = r.toDouble(value);
    } else if (key == "iterations") {
      s.iterations = static_cast<int>(r.toLong(value));
    } else if (key == "objective_evaluations") {
      s.objectiveEvaluations = r.toLong(value);
    } else if (key == "gradient_evaluations") {
      s.gradientEvaluations = r.toLong(value);
    } else if (key == "cvodes_fallbacks") {
      s.cvodesFallbacks = r.toLong(value);
    } else if (key == "wall_seconds") {
      s.wallSeconds = r.toDouble(value);
    } else if (key == "start") {
      s.start = r.toDoubles(value);
    } else if (key == "parameters") {
      s.parameters = r.toDoubles(value);
    } else if (key == "message") {
      s.message = value;
    } else if (key == "end") {
      complete = true;
    } else {
      r.fail("unknown key");
    }
  }
  if (!complete) throw Error(what + ": incomplete record (no 'end' line)");
  return s;
}

std::string toText(const detail::ProfileDirection& d) {
  std::string out;
  out += std::string("reached_threshold ") + (d.reachedThreshold ? "1" : "0") + "\n";
  out += "message " + oneLine(d.message) + "\n";
  // point <value> <objective> <converged> <every parameter>
  for (const ProfilePoint& p : d.points)
    out += "point " + number(p.value) + " " + number(p.objective) + " " +
           (p.converged ? "1" : "0") + numbers(p.parameters) + "\n";
  out += "end\n";
  return out;
}

detail::ProfileDirection profileDirectionFromText(const std::string& text,
                                                  const std::string& what) {
  detail::ProfileDirection d;
  bool complete = false;
  for (const auto& [key, value] : lines(text)) {
    const Reader r(what, key);
    if (key == "reached_threshold") {
      d.reachedThreshold = r.toLong(value) != 0;
    } else if (key == "message") {
      d.message = value;
    } else if (key == "point") {
      const std::vector<double> v = r.toDoubles(value);
      if (v.size() < 3) r.fail("fewer than 3 numbers");
      ProfilePoint p;
      p.value = v[0];
      p.objective = v[1];
      p.converged = v[2] != 0;
      p.parameters.assign(v.begin() + 3, v.end());
      d.points.push_back(std::move(p));
    } else if (key == "end") {
      complete = true;
    } else {
      r.fail("unknown key");
    }
  }
  if (!complete) throw Error(what + ": incomplete record (no 'end' line)");
  return d;
}

}  // namespace sensode::estimation
