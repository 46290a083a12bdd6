// SPDX-License-Identifier: MIT
// Reading a task's settings JSON the same way in every task: a missing or null key keeps the
// default, a wrong type or a value outside its constraint throws InvalidOptions naming the task,
// the key, the value and the constraint ("time course setting points = 1.5. Violated
// constraint: whole number >= 2"). The GUI's form validates first; this is the last word, also
// for settings restored from QSettings or written by scripts.
#pragma once

#include <QJsonObject>

#include <optional>
#include <string>

namespace sensode::plugin {

class SettingsReader {
 public:
  // `what` opens every message: "time course setting".
  SettingsReader(const QJsonObject& json, std::string what) : json_(json), what_(std::move(what)) {}

  double number(const char* key, double fallback) const;
  // A finite number > 0.
  double positive(const char* key, double fallback) const;
  // A whole number in [min, max].
  long whole(const char* key, long fallback, double min, double max) const;
  // The text of the key (e.g. a method name), nullopt when the key is missing.
  std::optional<std::string> text(const char* key) const;

  // "<what> <key> = <value>. Violated constraint: <constraint>"
  [[noreturn]] void violated(const char* key, const std::string& value,
                             const std::string& constraint) const;

 private:
  const QJsonObject& json_;
  std::string what_;
};

}  // namespace sensode::plugin
