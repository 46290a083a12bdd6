// SPDX-License-Identifier: MIT
#include "plugin/common/petab_overview.h"

#include <QFile>
#include <QFileInfo>

#include <cmath>

#include "core/petab/petab_problem.h"
#include "plugin/common/model_overview.h"

namespace sensode::plugin {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString valueText(const petab::Value& v) {
  return v.isParameter() ? q(v.parameterId) : overviewNumber(v.number);
}

}  // namespace

bool isPetabFile(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  return suffix == QLatin1String("yaml") || suffix == QLatin1String("yml");
}

api::ModelOverview readPetabOverview(const QString& path) {
  const petab::Problem pr = petab::loadProblem(QFile::encodeName(path).toStdString());
  const symbolic::OdeSystem& sys = pr.model->system();

  api::ModelTable parameters{QStringLiteral("PEtab parameters"),
                             {QStringLiteral("Id"), QStringLiteral("Scale"),
                              QStringLiteral("Lower bound"), QStringLiteral("Upper bound"),
                              QStringLiteral("Nominal value"), QStringLiteral("Estimated")},
                             4,  // estimated parameters' nominal values are editable
                             {}};
  int estimated = 0;
  for (const petab::Parameter& p : pr.parameters) {
    estimated += p.estimate ? 1 : 0;
    parameters.rows.append({{q(p.id), QString::fromLatin1(petab::toString(p.scale)),
                             overviewNumber(p.lowerBound), overviewNumber(p.upperBound),
                             overviewNumber(p.nominalValue),
                             p.estimate ? QStringLiteral("yes") : QStringLiteral("no")},
                            // Edited values are the problem's nominal values for the
                            // tasks (an applied best fit); fixed ones stay the table's.
                            p.estimate ? q(p.id) : QString(),
                            p.nominalValue,
                            q(p.name)});
  }

  api::ModelTable conditions{QStringLiteral("Conditions"),
                             {QStringLiteral("Id"), QStringLiteral("Overrides")},
                             -1,
                             {}};
  for (const petab::Condition& c : pr.conditions) {
    QStringList overrides;
    for (const auto& [k, v] : c.overrides)
      overrides << QStringLiteral("%1 = %2").arg(q(sys.params[static_cast<std::size_t>(k)].id),
                                                  valueText(v));
    conditions.rows.append({{q(c.id), overrides.join(QStringLiteral(", "))}, {}, NAN, q(c.name)});
  }

  api::ModelTable observables{QStringLiteral("Observables"),
                              {QStringLiteral("Id"), QStringLiteral("Formula"),
                               QStringLiteral("Noise"), QStringLiteral("Transformation")},
                              -1,
                              {}};
  for (const petab::Observable& o : pr.observables)
    observables.rows.append({{q(o.id), q(o.formulaText), q(o.noiseText),
                              QString::fromLatin1(petab::toString(o.transformation))},
                             {},
                             NAN,
                             q(o.formulaText)});

  int steady = 0, preequilibrated = 0;
  for (const petab::Measurement& m : pr.measurements) {
    steady += std::isinf(m.time) ? 1 : 0;
    preequilibrated += m.preequilibrationCondition >= 0 ? 1 : 0;
  }

  api::ModelOverview overview = readModelOverview(QString::fromStdString(pr.sbmlFile.string()));
  // The SBML values are not what a PEtab run uses (its tables override them): shown, read-only.
  for (api::ModelTable& t : overview.tables) {
    for (api::ModelTable::Row& r : t.rows) r.overrideId.clear();
  }
  overview.title = QStringLiteral("%1 (PEtab problem; model %2)")
                       .arg(QFileInfo(path).completeBaseName(), overview.title);
  overview.summary = QStringLiteral("%1 estimated of %2 parameters, %3 conditions, %4 observables, "
                                    "%5 measurements (%6 at steady state, %7 pre-equilibrated); %8")
                         .arg(estimated)
                         .arg(pr.parameters.size())
                         .arg(pr.conditions.size())
                         .arg(pr.observables.size())
                         .arg(pr.measurements.size())
                         .arg(steady)
                         .arg(preequilibrated)
                         .arg(overview.summary);
  overview.tables.prepend(observables);
  overview.tables.prepend(conditions);
  overview.tables.prepend(parameters);
  return overview;
}

}  // namespace sensode::plugin
