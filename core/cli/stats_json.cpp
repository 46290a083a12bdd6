// SPDX-License-Identifier: MIT
#include "core/cli/stats_json.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "core/common/errors.h"

namespace sensode::cli {

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;  // UTF-8 passes through unchanged
        }
    }
  }
  return out + "\"";
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

JsonObject& JsonObject::add(const std::string& key, double value) {
  entries_.emplace_back(key, jsonNumber(value));
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, long value) {
  entries_.emplace_back(key, std::to_string(value));
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, bool value) {
  entries_.emplace_back(key, value ? "true" : "false");
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::string& value) {
  entries_.emplace_back(key, jsonString(value));
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<std::string>& values) {
  std::string array = "[";
  for (std::size_t i = 0; i < values.size(); ++i) array += (i ? ", " : "") + jsonString(values[i]);
  entries_.emplace_back(key, array + "]");
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<double>& values) {
  std::string array = "[";
  for (std::size_t i = 0; i < values.size(); ++i) array += (i ? ", " : "") + jsonNumber(values[i]);
  entries_.emplace_back(key, array + "]");
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<JsonObject>& objects) {
  std::string array = "[";
  for (std::size_t i = 0; i < objects.size(); ++i)
    array += (i ? ",\n    " : "\n    ") + objects[i].compact();
  entries_.emplace_back(key, array + (objects.empty() ? "]" : "\n  ]"));
  return *this;
}

std::string JsonObject::compact() const {
  std::string out = "{";
  for (std::size_t i = 0; i < entries_.size(); ++i)
    out += (i ? ", " : "") + jsonString(entries_[i].first) + ": " + entries_[i].second;
  return out + "}";
}

std::string JsonObject::str() const {
  std::string out = "{";
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    out += i == 0 ? "\n  " : ",\n  ";
    out += jsonString(entries_[i].first) + ": " + entries_[i].second;
  }
  return out + (entries_.empty() ? "}\n" : "\n}\n");
}

void JsonObject::write(const std::filesystem::path& file) const {
  std::ofstream out(file);
  if (!out) throw Error(file.string() + ": cannot open for writing");
  out << str();
  out.flush();
  if (!out) throw Error(file.string() + ": write failed");
}

void addIntegratorStats(JsonObject& json, const integrators::IntegratorStats& stats) {
  json.add("steps", stats.steps)
      .add("rhs_evals", stats.rhsEvals)
      .add("jac_evals", stats.jacEvals)
      .add("lu_factorizations", stats.luFactorizations)
      .add("newton_iterations", stats.newtonIterations)
      .add("newton_failures", stats.newtonFailures)
      .add("error_test_failures", stats.errorTestFailures)
      .add("second_derivative_evals", stats.secondDerivativeEvals)
      .add("jacobian_of_second_evals", stats.jacobianOfSecondEvals)
      .add("sens_evals", stats.sensitivityRhsEvals)
      .add("handover_time", stats.handoverTime)
      .add("handover_steps", stats.handoverSteps)
      .add("fallback_steps", stats.fallbackSteps)
      .add("fallbacks", stats.fallbacks);
}

}  // namespace sensode::cli

namespace sensode::cli {

void addUndefinedOutputs(JsonObject& json, const std::vector<tasks::UndefinedOutput>& undefined) {
  std::vector<JsonObject> objects;
  for (const tasks::UndefinedOutput& u : undefined) {
    JsonObject o;
    o.add("id", u.id).add("times", u.times).add("formula", u.formula).add("reads", u.reads)
        .add("value", u.gives);
    objects.push_back(std::move(o));
  }
  json.add("undefined_outputs", objects);
}

void warnUndefinedOutputs(const std::string& modelPath,
                          const std::vector<tasks::UndefinedOutput>& undefined) {
  for (const tasks::UndefinedOutput& u : undefined)
    std::cerr << "sensode: warning: " << modelPath << ": " << tasks::describe(u) << "\n";
}

void addNativeStats(JsonObject& json, const symbolic::CompiledModel& compiled) {
  const symbolic::NativeStatus st = compiled.nativeStatus();
  json.add("native", st.message)
      .add("native_tier", symbolic::toString(st.tier))
      .add("native_cache", st.cache)
      .add("native_from_first_evaluation", compiled.nativeFromFirstEvaluation())
      .add("native_emit_seconds", st.emitSeconds)
      .add("native_quick_seconds", st.quickSeconds)
      .add("native_first_seconds", st.firstNativeSeconds);
}

}  // namespace sensode::cli
