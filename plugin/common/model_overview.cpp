// SPDX-License-Identifier: MIT
#include "plugin/common/model_overview.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QLocale>

#include <cmath>

#include "core/model/sbml_importer.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/time_course_task.h"
#include "plugin/models/number_format.h"

namespace sensode::plugin {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString yesNo(bool b) { return b ? QStringLiteral("yes") : QStringLiteral("no"); }

// The cell text for a value the file may leave unset.
QString valueCell(double v, const QString& unsetText) {
  return std::isnan(v) ? unsetText : overviewNumber(v);
}

QString stoichTerm(const model::SpeciesReference& r, const symbolic::ExprPool& pool) {
  QString coefficient;
  if (r.stoichiometryMath) {
    coefficient = QStringLiteral("[%1] ").arg(q(pool.toString(*r.stoichiometryMath)));
  } else if (!r.id.empty() && !r.constant) {
    coefficient = QStringLiteral("[%1] ").arg(q(r.id));
  } else if (!std::isnan(r.stoichiometry) && r.stoichiometry != 1.0) {
    coefficient = overviewNumber(r.stoichiometry) + QLatin1Char(' ');
  }
  return coefficient + q(r.species);
}

QString side(const std::vector<model::SpeciesReference>& refs, const symbolic::ExprPool& pool) {
  if (refs.empty()) return QStringLiteral("∅");
  QStringList terms;
  for (const auto& r : refs) terms << stoichTerm(r, pool);
  return terms.join(QStringLiteral(" + "));
}

// Which values an override may change, by id.
bool isParam(const symbolic::OdeSystem& sys, const std::string& id, symbolic::ParamKind kind) {
  const int k = sys.findParam(id);
  return k >= 0 && sys.params[static_cast<std::size_t>(k)].kind == kind;
}

// What sets a value the file leaves unset (for the cell text).
QString setBy(const model::Model& m, const std::string& id) {
  for (const auto& r : m.rules) {
    if (r.variable == id) {
      return r.kind == model::RuleKind::Assignment ? QStringLiteral("(assignment rule)")
                                                   : QStringLiteral("(rate rule)");
    }
  }
  for (const auto& a : m.initialAssignments) {
    if (a.symbol == id) return QStringLiteral("(initial assignment)");
  }
  return QStringLiteral("(unset)");
}

}  // namespace

QString overviewNumber(double v) {
  if (std::isnan(v)) return {};
  return shortNumber(v);  // the file's exact value is the cell's edit text and tool tip
}

api::ModelOverview describeModel(const model::Model& m, const symbolic::OdeSystem& sys) {
  const symbolic::ExprPool& pool = *m.pool;
  api::ModelOverview o;
  o.title = m.id.empty() ? QFileInfo(q(m.file)).fileName() : q(m.id);
  if (!m.name.empty() && m.name != m.id) o.title += QStringLiteral(" — ") + q(m.name);

  api::ModelTable compartments;
  compartments.title = QStringLiteral("Compartments");
  compartments.headers = {QStringLiteral("Id"), QStringLiteral("Name"), QStringLiteral("Size"),
                          QStringLiteral("Dimensions"), QStringLiteral("Constant")};
  compartments.valueColumn = 2;
  for (const auto& c : m.compartments) {
    api::ModelTable::Row row;
    row.cells = {q(c.id), q(c.name), valueCell(c.size, setBy(m, c.id)),
                 overviewNumber(c.spatialDimensions), yesNo(c.constant)};
    if (isParam(sys, c.id, symbolic::ParamKind::CompartmentSize)) {
      row.overrideId = q(c.id);
      row.nominal = c.size;
    }
    compartments.rows << row;
  }

  api::ModelTable species;
  species.title = QStringLiteral("Species");
  species.headers = {QStringLiteral("Id"),        QStringLiteral("Name"),
                     QStringLiteral("Compartment"), QStringLiteral("Initial value"),
                     QStringLiteral("Given as"),  QStringLiteral("Flags")};
  species.valueColumn = 3;
  for (const auto& s : m.species) {
    api::ModelTable::Row row;
    const bool amount = !std::isnan(s.initialAmount);
    const double initial = amount ? s.initialAmount : s.initialConcentration;
    QStringList flags;
    if (s.boundaryCondition) flags << QStringLiteral("boundary");
    if (s.constant) flags << QStringLiteral("constant");
    if (s.hasOnlySubstanceUnits) flags << QStringLiteral("amounts only");
    const bool unset = std::isnan(initial);
    row.cells = {q(s.id),
                 q(s.name),
                 q(s.compartment),
                 valueCell(initial, setBy(m, s.id)),
                 unset ? QString() : (amount ? QStringLiteral("amount") : QStringLiteral("concentration")),
                 flags.join(QStringLiteral(", "))};
    if (isParam(sys, s.id, symbolic::ParamKind::SpeciesInitial)) {
      row.overrideId = q(s.id);
      row.nominal = initial;
    }
    species.rows << row;
  }

  api::ModelTable parameters;
  parameters.title = QStringLiteral("Parameters");
  parameters.headers = {QStringLiteral("Id"), QStringLiteral("Name"), QStringLiteral("Value"),
                        QStringLiteral("Scope"), QStringLiteral("Constant")};
  parameters.valueColumn = 2;
  for (const auto& p : m.parameters) {
    api::ModelTable::Row row;
    row.cells = {q(p.id), q(p.name), valueCell(p.value, setBy(m, p.id)), QStringLiteral("global"),
                 yesNo(p.constant)};
    if (isParam(sys, p.id, symbolic::ParamKind::GlobalParameter)) {
      row.overrideId = q(p.id);
      row.nominal = p.value;
    }
    parameters.rows << row;
  }
  int localCount = 0;
  for (const auto& r : m.reactions) {
    for (const auto& lp : r.localParameters) {
      const std::string id = model::localParameterSymbol(r.id, lp.id);
      api::ModelTable::Row row;
      row.cells = {q(id), q(lp.id), valueCell(lp.value, QStringLiteral("(unset)")),
                   QStringLiteral("local to %1").arg(q(r.id)), QStringLiteral("yes")};
      if (isParam(sys, id, symbolic::ParamKind::LocalParameter)) {
        row.overrideId = q(id);
        row.nominal = lp.value;
      }
      parameters.rows << row;
      ++localCount;
    }
  }

  api::ModelTable reactions;
  reactions.title = QStringLiteral("Reactions");
  reactions.headers = {QStringLiteral("Id"), QStringLiteral("Name"), QStringLiteral("Equation"),
                       QStringLiteral("Rate law"), QStringLiteral("Reversible")};
  for (const auto& r : m.reactions) {
    api::ModelTable::Row row;
    QString equation = side(r.reactants, pool) +
                       (r.reversible ? QStringLiteral(" ⇌ ") : QStringLiteral(" → ")) +
                       side(r.products, pool);
    if (!r.modifiers.empty()) {
      QStringList mods;
      for (const auto& id : r.modifiers) mods << q(id);
      equation += QStringLiteral("  (modifiers: %1)").arg(mods.join(QStringLiteral(", ")));
    }
    const QString law = r.rate ? q(pool.toString(*r.rate)) : QStringLiteral("(no kinetic law)");
    row.cells = {q(r.id), q(r.name), equation, law, yesNo(r.reversible)};
    row.toolTip = QStringLiteral("%1\n%2").arg(equation, law);
    reactions.rows << row;
  }

  api::ModelTable rules;
  rules.title = QStringLiteral("Rules");
  rules.headers = {QStringLiteral("Kind"), QStringLiteral("Variable"), QStringLiteral("Math")};
  for (const auto& r : m.rules) {
    api::ModelTable::Row row;
    const QString math = q(pool.toString(r.math));
    const QString kind = r.kind == model::RuleKind::Assignment ? QStringLiteral("assignment")
                         : r.kind == model::RuleKind::Rate ? QStringLiteral("rate (d/dt)")
                                                           : QStringLiteral("algebraic (0 = math)");
    row.cells = {kind, q(r.kind == model::RuleKind::Algebraic ? r.id : r.variable), math};
    row.toolTip = math;
    rules.rows << row;
  }
  for (const auto& a : m.initialAssignments) {
    api::ModelTable::Row row;
    const QString math = q(pool.toString(a.math));
    row.cells = {QStringLiteral("initial assignment"), q(a.symbol), math};
    row.toolTip = math;
    rules.rows << row;
  }

  api::ModelTable events;
  events.title = QStringLiteral("Events");
  events.headers = {QStringLiteral("Id"), QStringLiteral("Trigger"), QStringLiteral("Delay"),
                    QStringLiteral("Priority"), QStringLiteral("Assignments")};
  for (const auto& e : m.events) {
    api::ModelTable::Row row;
    QStringList assignments;
    for (const auto& a : e.assignments) {
      assignments << QStringLiteral("%1 = %2").arg(q(a.variable), q(pool.toString(a.math)));
    }
    row.cells = {q(e.id), q(pool.toString(e.trigger)),
                 e.delay ? q(pool.toString(*e.delay)) : QString(),
                 e.priority ? q(pool.toString(*e.priority)) : QString(),
                 assignments.join(QStringLiteral("; "))};
    row.toolTip = assignments.join(QLatin1Char('\n'));
    events.rows << row;
  }

  // What the importer assumed where the file is silent: shown so that a modeller sees, e.g.,
  // that a parameter without a value was taken as 1 before trusting a result.
  api::ModelTable notes;
  notes.title = QStringLiteral("Import notes");
  notes.headers = {QStringLiteral("Assumption")};
  for (const std::string& w : m.warnings) {
    api::ModelTable::Row row;
    row.cells = {q(w)};
    row.toolTip = q(w);
    notes.rows << row;
  }

  o.summary = QStringLiteral("%1 compartment(s), %2 species, %3 parameter(s)%4, %5 reaction(s), "
                             "%6 rule(s)%9. ODE: %7 state(s), %8 parameter(s).%10")
                  .arg(m.compartments.size())
                  .arg(m.species.size())
                  .arg(m.parameters.size())
                  .arg(localCount > 0 ? QStringLiteral(" + %1 local").arg(localCount) : QString())
                  .arg(m.reactions.size())
                  .arg(m.rules.size() + m.initialAssignments.size())
                  .arg(sys.numStates())
                  .arg(sys.numParams())
                  .arg(m.events.empty() ? QString()
                                        : QStringLiteral(", %1 event(s)").arg(m.events.size()))
                  .arg(m.warnings.empty()
                           ? QString()
                           : QStringLiteral(" %1 import note(s): see Import notes.")
                                 .arg(m.warnings.size()));
  o.tables = {compartments, species, parameters, reactions, rules};
  if (!events.rows.isEmpty()) o.tables << events;
  if (!notes.rows.isEmpty()) o.tables << notes;
  return o;
}

api::ModelOverview readModelOverview(const QString& path) {
  const model::Model m = model::importSbmlFile(QFile::encodeName(path).toStdString());
  const symbolic::OdeSystem sys = symbolic::buildOdeSystem(m);
  return describeModel(m, sys);
}

QList<ParameterInfo> readModelParameters(const QString& path) {
  const model::Model m = model::importSbmlFile(QFile::encodeName(path).toStdString());
  const symbolic::OdeSystem sys = symbolic::buildOdeSystem(m);
  QList<ParameterInfo> list;
  for (const symbolic::ParamVar& p : sys.params) {
    QString kind;
    switch (p.kind) {
      case symbolic::ParamKind::GlobalParameter: kind = QStringLiteral("global parameter"); break;
      case symbolic::ParamKind::LocalParameter: kind = QStringLiteral("local parameter"); break;
      case symbolic::ParamKind::SpeciesInitial: kind = QStringLiteral("initial value"); break;
      case symbolic::ParamKind::CompartmentSize: kind = QStringLiteral("compartment size"); break;
      case symbolic::ParamKind::Stoichiometry: kind = QStringLiteral("stoichiometry"); break;
    }
    list.append({q(p.id), kind, p.nominal});
  }
  return list;
}

QList<OutputInfo> readModelOutputs(const QString& path) {
  const model::Model m = model::importSbmlFile(QFile::encodeName(path).toStdString());
  const symbolic::OdeSystem sys = symbolic::buildOdeSystem(m);
  QHash<QString, QString> names;
  for (const auto& c : m.compartments) names.insert(q(c.id), q(c.name));
  for (const auto& sp : m.species) names.insert(q(sp.id), q(sp.name));
  for (const auto& p : m.parameters) names.insert(q(p.id), q(p.name));
  for (const auto& r : m.reactions) names.insert(q(r.id), q(r.name));
  QList<OutputInfo> list;
  for (const std::string& id : tasks::defaultOutputIds(sys)) {
    QString kind;
    switch (sys.outputs[static_cast<std::size_t>(sys.findOutput(id))].kind) {
      case symbolic::OutputKind::Species: kind = QStringLiteral("species"); break;
      case symbolic::OutputKind::Compartment: kind = QStringLiteral("compartment"); break;
      case symbolic::OutputKind::Parameter: kind = QStringLiteral("parameter"); break;
      case symbolic::OutputKind::SpeciesReference: kind = QStringLiteral("stoichiometry"); break;
      case symbolic::OutputKind::Reaction: kind = QStringLiteral("reaction rate"); break;
    }
    list.append({q(id), names.value(q(id)), kind});
  }
  return list;
}

}  // namespace sensode::plugin
