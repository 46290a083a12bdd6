// SPDX-License-Identifier: MIT
#include "plugin/forms/settings_reader.h"

#include <QJsonValue>
#include <QString>

#include <cmath>

#include "core/common/errors.h"

namespace sensode::plugin {

namespace {

std::string numberText(double v) { return QString::number(v, 'g', 17).toStdString(); }

}  // namespace

double SettingsReader::number(const char* key, double fallback) const {
  const QJsonValue v = json_.value(QLatin1String(key));
  if (v.isUndefined() || v.isNull()) return fallback;
  if (!v.isDouble()) throw InvalidOptions(what_ + " '" + key + "' is not a number");
  return v.toDouble();
}

double SettingsReader::positive(const char* key, double fallback) const {
  const double v = number(key, fallback);
  if (!(v > 0) || !std::isfinite(v))
    violated(key, numberText(v), std::string(key) + " > 0 and finite");
  return v;
}

long SettingsReader::whole(const char* key, long fallback, double min, double max) const {
  const double v = number(key, static_cast<double>(fallback));
  if (!(v >= min) || v > max || v != std::floor(v))
    violated(key, numberText(v), "whole number >= " + numberText(min));
  return static_cast<long>(v);
}

std::optional<std::string> SettingsReader::text(const char* key) const {
  const QJsonValue v = json_.value(QLatin1String(key));
  if (v.isUndefined()) return std::nullopt;
  return v.toString().toStdString();
}

void SettingsReader::violated(const char* key, const std::string& value,
                              const std::string& constraint) const {
  throw InvalidOptions(what_ + " " + key + " = " + value + ". Violated constraint: " + constraint);
}

}  // namespace sensode::plugin
