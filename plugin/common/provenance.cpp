// SPDX-License-Identifier: MIT
#include "plugin/common/provenance.h"

#include <QDateTime>
#include <QJsonArray>
#include <QObject>
#include <QStringList>

namespace sensode::plugin {

QJsonObject baseProvenance(const QString& taskId, const QString& taskName,
                           const LoadedModel& model, const api::ModelSession& session,
                           const QJsonObject& settings) {
  QJsonObject overrides;
  for (auto it = session.overrides.cbegin(); it != session.overrides.cend(); ++it) {
    overrides.insert(it.key(), it.value());
  }
  QJsonObject modelJson{
      {QStringLiteral("file"), model.path},
      {QStringLiteral("sha256"), model.sha256},
      {QStringLiteral("format"), session.format},
  };
  if (model.model) {
    modelJson.insert(QStringLiteral("states"), model.model->nx());
    modelJson.insert(QStringLiteral("parameters"), model.model->np());
  }
  return QJsonObject{
      {QStringLiteral("sensode_version"), QStringLiteral(SENSODE_VERSION)},
      {QStringLiteral("task"),
       QJsonObject{{QStringLiteral("id"), taskId}, {QStringLiteral("name"), taskName}}},
      {QStringLiteral("model"), modelJson},
      {QStringLiteral("settings"), settings},
      {QStringLiteral("parameter_overrides"), overrides},
      {QStringLiteral("derivative_source"), QString::fromLatin1(kExactSymbolic)},
      {QStringLiteral("started"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
  };
}

QJsonObject statsJson(const integrators::IntegratorStats& s) {
  QJsonObject o{
      {QStringLiteral("steps"), static_cast<double>(s.steps)},
      {QStringLiteral("rhs_evals"), static_cast<double>(s.rhsEvals)},
      {QStringLiteral("jac_evals"), static_cast<double>(s.jacEvals)},
      {QStringLiteral("lu_factorizations"), static_cast<double>(s.luFactorizations)},
      {QStringLiteral("newton_iterations"), static_cast<double>(s.newtonIterations)},
      {QStringLiteral("newton_failures"), static_cast<double>(s.newtonFailures)},
      {QStringLiteral("error_test_failures"), static_cast<double>(s.errorTestFailures)},
  };
  if (s.secondDerivativeEvals) o.insert(QStringLiteral("second_derivative_evals"), static_cast<double>(s.secondDerivativeEvals));
  if (s.jacobianOfSecondEvals) o.insert(QStringLiteral("jacobian_of_second_evals"), static_cast<double>(s.jacobianOfSecondEvals));
  if (s.sensitivityRhsEvals) o.insert(QStringLiteral("sens_evals"), static_cast<double>(s.sensitivityRhsEvals));
  if (s.sensitivityErrorTestFailures) o.insert(QStringLiteral("sens_error_test_failures"), static_cast<double>(s.sensitivityErrorTestFailures));
  if (s.handoverTime >= 0) {
    o.insert(QStringLiteral("handover_time"), s.handoverTime);
    o.insert(QStringLiteral("handover_steps"), static_cast<double>(s.handoverSteps));
  }
  QJsonArray fallbacks;
  for (const std::string& f : s.fallbacks) fallbacks.append(QString::fromStdString(f));
  o.insert(QStringLiteral("fallbacks"), fallbacks);
  return o;
}

QList<KeyValueTableModel::Entry> fallbackEntries(const std::vector<std::string>& sentences,
                                                 const QString& keyPrefix) {
  QList<KeyValueTableModel::Entry> rows;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    const QString sentence = QString::fromStdString(sentences[i]);
    rows << KeyValueTableModel::Entry{QStringLiteral("%1_%2").arg(keyPrefix).arg(i + 1),
                                      QObject::tr("Fallback"), sentence, sentence};
  }
  return rows;
}

QString fallbackNote(const std::vector<std::string>& sentences) {
  if (sentences.empty()) return {};
  QStringList parts;
  for (const std::string& f : sentences) parts << QString::fromStdString(f);
  return QObject::tr(" — fell back: %1").arg(parts.join(QStringLiteral("; ")));
}

QString undefinedNote(const std::vector<tasks::UndefinedOutput>& undefined) {
  if (undefined.empty()) return {};
  QStringList parts;
  for (const tasks::UndefinedOutput& u : undefined) {
    if (parts.size() == 3) {
      parts << QObject::tr("%n more", "", int(undefined.size() - 3));
      break;
    }
    parts << (u.times.size() == 1
                  ? QObject::tr("'%1' at t = %2").arg(QString::fromStdString(u.id)).arg(u.times.front())
                  : QObject::tr("'%1' at %2 output times from t = %3")
                        .arg(QString::fromStdString(u.id))
                        .arg(u.times.size())
                        .arg(u.times.front()));
  }
  return QObject::tr(" — no value (NaN, a gap in the chart): %1").arg(parts.join(QStringLiteral("; ")));
}

QJsonArray undefinedJson(const std::vector<tasks::UndefinedOutput>& undefined) {
  QJsonArray list;
  for (const tasks::UndefinedOutput& u : undefined) {
    QJsonArray times;
    for (const double t : u.times) times.append(t);
    list.append(QJsonObject{{QStringLiteral("id"), QString::fromStdString(u.id)},
                            {QStringLiteral("times"), times},
                            {QStringLiteral("formula"), QString::fromStdString(u.formula)},
                            {QStringLiteral("reads"), QString::fromStdString(u.reads)},
                            {QStringLiteral("value"), QString::fromStdString(u.gives)}});
  }
  return list;
}

QList<KeyValueTableModel::Entry> statsEntries(const integrators::IntegratorStats& s) {
  using E = KeyValueTableModel::Entry;
  QList<E> rows = {
      E{QStringLiteral("steps"), QStringLiteral("Steps"), qlonglong(s.steps), QStringLiteral("accepted integration steps")},
      E{QStringLiteral("rhs_evals"), QStringLiteral("f evaluations"), qlonglong(s.rhsEvals), QStringLiteral("right-hand side evaluations")},
      E{QStringLiteral("jac_evals"), QStringLiteral("Jacobian evaluations"), qlonglong(s.jacEvals), QStringLiteral("exact symbolic J = ∂f/∂x")},
      E{QStringLiteral("lu_factorizations"), QStringLiteral("LU factorizations"), qlonglong(s.luFactorizations), QStringLiteral("factorizations of the Newton matrix")},
      E{QStringLiteral("newton_iterations"), QStringLiteral("Newton iterations"), qlonglong(s.newtonIterations), {}},
      E{QStringLiteral("newton_failures"), QStringLiteral("Newton failures"), qlonglong(s.newtonFailures), QStringLiteral("nonlinear solver convergence failures")},
      E{QStringLiteral("error_test_failures"), QStringLiteral("Error test failures"), qlonglong(s.errorTestFailures), QStringLiteral("steps rejected by the local error test")},
  };
  if (s.secondDerivativeEvals) rows << E{QStringLiteral("second_derivative_evals"), QStringLiteral("ẍ evaluations"), qlonglong(s.secondDerivativeEvals), QStringLiteral("second derivative J·f + ∂f/∂t (odeSD)")};
  if (s.jacobianOfSecondEvals) rows << E{QStringLiteral("jacobian_of_second_evals"), QStringLiteral("J_J evaluations"), qlonglong(s.jacobianOfSecondEvals), QStringLiteral("∂ẍ/∂x (odeSD)")};
  if (s.sensitivityRhsEvals) rows << E{QStringLiteral("sens_evals"), QStringLiteral("Sensitivity evaluations"), qlonglong(s.sensitivityRhsEvals), {}};
  if (s.sensitivityErrorTestFailures) rows << E{QStringLiteral("sens_error_test_failures"), QStringLiteral("Sensitivity error test failures"), qlonglong(s.sensitivityErrorTestFailures), {}};
  if (s.handoverTime >= 0) {
    rows << E{QStringLiteral("handover_time"), QStringLiteral("Hand-over to CVODES at t"), s.handoverTime, QStringLiteral("odeSD handed the stiff tail to CVODES BDF")};
    rows << E{QStringLiteral("handover_steps"), QStringLiteral("CVODES steps after hand-over"), qlonglong(s.handoverSteps), {}};
  }
  rows << fallbackEntries(s.fallbacks);
  return rows;
}

}  // namespace sensode::plugin
