// SPDX-License-Identifier: MIT
#include "plugin/estimation/results_folder.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>

#include "core/common/errors.h"
#include "core/estimation/run_results.h"
#include "plugin/estimation/estimation_task.h"
#include "plugin/gradient/gradient_task.h"

namespace sensode::plugin::estimation {
namespace {

namespace core = sensode::estimation;

QString q(const std::string& s) { return QString::fromStdString(s); }

// The task's settings JSON (estimation_task.h) of the options the run had.
QJsonObject settingsOf(const core::StoredRun& run) {
  const core::EstimationOptions& o = run.options;
  QJsonArray profile;
  for (const std::string& id : o.profileParameters) profile.append(q(id));
  return {{QStringLiteral("problem"), q(run.problem.yamlFile.string())},
          {QStringLiteral("optimizer"), QString::fromLatin1(core::toString(o.optimizer))},
          {QStringLiteral("starts"), o.starts},
          {QStringLiteral("seed"), static_cast<double>(o.seed)},
          {QStringLiteral("use_start_values"), o.useStartValues},
          {QStringLiteral("global"), QString::fromLatin1(core::toString(o.global))},
          {QStringLiteral("global_evaluations"), static_cast<double>(o.globalEvaluations)},
          {QStringLiteral("screen"), o.screen},
          {QStringLiteral("polish"), o.polish},
          {QStringLiteral("continue_stalled"), o.continueStalled},
          {QStringLiteral("gradient"), QString::fromLatin1(petab::toString(o.gradient))},
          {QStringLiteral("max_iterations"), o.maxIterations},
          {QStringLiteral("rtol"), o.objective.integrator.rtol},
          {QStringLiteral("atol"), o.objective.integrator.atol},
          {QStringLiteral("profile"), profile}};
}

}  // namespace

std::optional<api::OpenedResults> openResultsFolder(const QString& folder, QString* errorString) {
  try {
    const std::filesystem::path dir = QFile::encodeName(folder).toStdString();
    auto stored = std::make_shared<core::StoredRun>(core::readStoredRun(dir));
    const petab::Problem problem = petab::loadProblem(stored->problem.yamlFile);
    auto fit = std::make_shared<const MeasurementPoints>(
        gradient::measurementPoints(problem, stored->result.bestFit));
    QJsonObject provenance{{QStringLiteral("task"), QString::fromLatin1(kTaskId)},
                           {QStringLiteral("results_folder"), QFileInfo(folder).absoluteFilePath()}};
    QJsonObject run;
    for (const auto& [key, value] : stored->settings) run.insert(q(key), q(value));
    provenance.insert(QStringLiteral("run"), run);
    const QJsonObject settings = settingsOf(*stored);
    auto core = std::shared_ptr<const core::EstimationResult>(stored, &stored->result);
    auto result = std::make_shared<Result>(core, std::move(fit), 0.0, provenance);
    result->setNote(
        stored->result.status == core::EstimationResult::Status::Success
            ? QStringLiteral("from %1").arg(QFileInfo(folder).fileName())
            : QStringLiteral("from %1, %2")
                  .arg(QFileInfo(folder).fileName(), q(stored->result.message)));
    return api::OpenedResults{QString::fromLatin1(kTaskId), std::move(result), settings};
  } catch (const Error& e) {
    if (errorString) *errorString = QString::fromStdString(e.what());
  } catch (const std::exception& e) {
    if (errorString) *errorString = folder + QStringLiteral(": ") + QString::fromStdString(e.what());
  }
  return std::nullopt;
}

}  // namespace sensode::plugin::estimation
