// SPDX-License-Identifier: MIT
// The PEtab objective task's "Steady states" table: one column per steady state the objective
// solved (pre-equilibration or steady-state data, by condition), one row per diagnostic (found,
// path, fallback reason, Newton and simulation effort, residual, cond(J_r), max Re λ, stability,
// conservation laws). Transposed because a problem has one to a few steady states and about
// fifteen diagnostics: it reads top-down without scrolling sideways.
#pragma once

#include <QStringList>

#include <vector>

#include "core/petab/objective.h"
#include "plugin/models/record_table_model.h"

namespace sensode::plugin::gradient {

// "diagnostic", then "<condition> (<role>)" per steady state (one empty header without any).
QStringList equilibrationHeaders(const std::vector<petab::EquilibrationReport>& all);
// The diagnostics' rows: the label first, then one cell per steady state (numbers as doubles or
// integers, the rest as text); without steady states, one row saying there are none.
QList<RecordTableModel::Row> equilibrationRows(const std::vector<petab::EquilibrationReport>& all);

}  // namespace sensode::plugin::gradient
