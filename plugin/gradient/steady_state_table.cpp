// SPDX-License-Identifier: MIT
#include "plugin/gradient/steady_state_table.h"

#include <functional>

namespace sensode::plugin::gradient {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

QStringList equilibrationHeaders(const std::vector<petab::EquilibrationReport>& all) {
  QStringList headers{QStringLiteral("diagnostic")};
  if (all.empty()) headers << QString();
  for (const petab::EquilibrationReport& e : all)
    headers << QStringLiteral("%1 (%2)").arg(q(e.conditionId), q(e.role));
  return headers;
}

QList<RecordTableModel::Row> equilibrationRows(const std::vector<petab::EquilibrationReport>& all) {
  if (all.empty()) {
    // (A time-course problem: say so rather than list diagnostics without values.)
    return {{{QStringLiteral("steady states"),
              QStringLiteral("none: this problem has no pre-equilibration and no steady-state "
                             "data (time = inf)")},
             {}}};
  }
  using S = steadystate::SteadyStateSolution;
  struct Item {
    QString label, toolTip;
    std::function<QVariant(const S&)> value;
  };
  const auto text = [](const std::string& s, const char* empty) {
    return QVariant(s.empty() ? QString::fromLatin1(empty) : q(s));
  };
  const QList<Item> items = {
      {QStringLiteral("found"), {}, [](const S& s) { return QVariant(s.found ? QStringLiteral("yes") : QStringLiteral("no")); }},
      {QStringLiteral("found by"), QStringLiteral("the first path, or the fallback after it failed"),
       [](const S& s) { return QVariant(QString::fromLatin1(steadystate::toString(s.foundBy))); }},
      {QStringLiteral("path"), {}, [&](const S& s) { return text(s.path, ""); }},
      {QStringLiteral("fallback reason"), QStringLiteral("why the first path failed"),
       [&](const S& s) { return text(s.fallbackReason, "none"); }},
      {QStringLiteral("no steady state because"), {}, [&](const S& s) { return text(s.reason, "-"); }},
      {QStringLiteral("Newton iterations"), {}, [](const S& s) { return QVariant(qlonglong(s.newtonIterations)); }},
      {QStringLiteral("Newton runs"), {}, [](const S& s) { return QVariant(qlonglong(s.newtonRuns)); }},
      {QStringLiteral("simulation steps"), {}, [](const S& s) { return QVariant(qlonglong(s.simulationSteps)); }},
      {QStringLiteral("simulated to t"), {}, [](const S& s) { return QVariant(s.simulatedTime); }},
      {QStringLiteral("residual ‖f_r(x*)‖_w"), QStringLiteral("weighted norm; < 1 meets the criterion"),
       [](const S& s) { return QVariant(s.residualNorm); }},
      {QStringLiteral("cond(J_r)"), QStringLiteral("1-norm condition estimate of the reduced Jacobian at x*"),
       [](const S& s) { return QVariant(s.conditionEstimate); }},
      {QStringLiteral("max Re λ(J_r)"), QStringLiteral("largest real part of the eigenvalues at x*"),
       [](const S& s) { return s.eigenReal.empty() ? QVariant(QStringLiteral("not computed")) : QVariant(s.maxRealEigenvalue); }},
      {QStringLiteral("stability"), {}, [](const S& s) {
         return QVariant(s.eigenReal.empty() ? QStringLiteral("unknown")
                         : s.stable         ? QStringLiteral("stable")
                                            : QStringLiteral("unstable"));
       }},
      {QStringLiteral("negative species"), QStringLiteral("rejected unless accepted in the options"),
       [](const S& s) { return QVariant(s.negative ? QStringLiteral("yes") : QStringLiteral("no")); }},
      {QStringLiteral("conservation laws"), QStringLiteral("moieties eliminated before solving"),
       [](const S& s) {
         QStringList laws;
         for (const std::string& l : s.conservationLaws) laws << q(l);
         return QVariant(laws.isEmpty() ? QStringLiteral("none") : laws.join(QStringLiteral("; ")));
       }},
  };
  QList<RecordTableModel::Row> rows;
  for (const Item& item : items) {
    RecordTableModel::Row row;
    row.cells << item.label;
    row.toolTips << item.toolTip;
    for (const petab::EquilibrationReport& e : all) {
      row.cells << item.value(e.solution);
      row.toolTips << QString();
    }
    rows.append(row);
  }
  return rows;
}

}  // namespace sensode::plugin::gradient
