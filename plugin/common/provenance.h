// SPDX-License-Identifier: MIT
// What every Sensode task records about a run for the provenance file the host writes beside an
// export: Sensode version, task, model file and SHA-256, settings, parameter overrides, start
// time; each task adds method, tolerances, derivative source, wall time and statistics.
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>

#include "core/integrators/integrator.h"
#include "core/tasks/time_course_task.h"
#include "gui/plugin_api/task_plugin.h"
#include "plugin/common/model_cache.h"
#include "plugin/models/key_value_table_model.h"

namespace sensode::plugin {

// Derivatives (J, ∂f/∂p, ...) come from the symbolic pipeline, never from finite differences
// unless a method says so (the sensitivities task's "fd").
inline constexpr const char* kExactSymbolic = "exact symbolic";

QJsonObject baseProvenance(const QString& taskId, const QString& taskName,
                           const LoadedModel& model, const api::ModelSession& session,
                           const QJsonObject& settings);

// The counters and `fallbacks` (array of sentences, as the CLI's --stats JSON).
QJsonObject statsJson(const integrators::IntegratorStats& stats);

// Rows for the Statistics side view (counters that are zero for the method are left out), then
// one "Fallback" row per sentence of stats.fallbacks.
QList<KeyValueTableModel::Entry> statsEntries(const integrators::IntegratorStats& stats);

// One "Fallback" row per sentence (what a default method did instead of failing), keyed
// "<keyPrefix>_<n>", the sentence as value and tool tip (it can be longer than the column).
QList<KeyValueTableModel::Entry> fallbackEntries(const std::vector<std::string>& sentences,
                                                 const QString& keyPrefix = QStringLiteral("fallback"));

// For a status line: " — fell back: <sentence>; <sentence>" or "" when nothing fell back.
QString fallbackNote(const std::vector<std::string>& sentences);

// For a status line: " — no value (NaN, a gap in the chart): 'alpha' at t = 0; 'beta' at 3
// output times" or "" when every output has a value everywhere (tasks::UndefinedOutput).
QString undefinedNote(const std::vector<tasks::UndefinedOutput>& undefined);

// The provenance's record of them: [{"id", "times", "formula", "reads", "value"}], as --stats.
QJsonArray undefinedJson(const std::vector<tasks::UndefinedOutput>& undefined);

}  // namespace sensode::plugin
