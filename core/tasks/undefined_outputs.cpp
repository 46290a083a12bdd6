// SPDX-License-Identifier: MIT
#include "core/tasks/undefined_outputs.h"

#include <cmath>
#include <string>

namespace sensode::tasks::detail {

namespace {

symbolic::Expr formulaOf(const symbolic::OutputVar& out, int block) {
  switch (block) {
    case 1: return out.amount;
    case 2: return out.concentration;
    default: return out.value;
  }
}

// A formula for a one-line message: symbols by their SBML ids (without the "@x:"/"@p:" kind
// prefixes of ExprPool::toString), at most 300 characters.
std::string shortened(std::string text) {
  for (const char* prefix : {"@x:", "@p:"}) {
    for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at))
      text.erase(at, 3);
  }
  constexpr std::size_t kLimit = 300;
  if (text.size() > kLimit) text = text.substr(0, kLimit) + " ...";
  return text;
}

}  // namespace

void checkOutputDefined(const symbolic::CompiledModel& model, const OutputColumn& column, double t,
                        const double* x, const double* p, double value) {
  if (std::isfinite(value)) return;
  const symbolic::OdeSystem& sys = model.system();
  const symbolic::Expr formula = formulaOf(sys.outputs[column.index], column.block);
  // What the formula reads, with its values; any non-finite input makes the value the model's own.
  std::string reads;
  std::size_t listed = 0;
  for (const symbolic::Expr dep : sys.pool->dependencies(formula)) {
    double v = t;
    std::string id = "t";
    if (dep != sys.time) {
      bool found = false;
      for (std::size_t i = 0; i < sys.states.size() && !found; ++i) {
        if (sys.states[i].symbol == dep) {
          v = x[i];
          id = sys.states[i].id;
          found = true;
        }
      }
      for (std::size_t k = 0; k < sys.params.size() && !found; ++k) {
        if (sys.params[k].symbol == dep) {
          v = p[k];
          id = sys.params[k].id;
          found = true;
        }
      }
      if (!found) return;  // a symbol of unknown meaning: not provably the formula's fault
    }
    if (!std::isfinite(v)) return;
    if (listed < 8) reads += (listed > 0 ? ", " : "") + id + " = " + exactNumber(v);
    else if (listed == 8) reads += ", ...";
    ++listed;
  }
  // A constant formula (INF, NaN, 1/0 folded: SBML Test Suite cases 00950, 01811, 01813) is a
  // value the model states.
  if (listed == 0) return;
  throw InvalidInput(
      "'" + column.id + "' has no value at t = " + exactNumber(t) + ": its formula gives " +
      std::string(std::isnan(value) ? "NaN" : value > 0 ? "INF" : "-INF") + " although every quantity it reads is finite" +
      " (" + reads + ")" +
      " (e.g. 0/0); leave it out of the outputs or choose output times where it is defined. "
      "Formula: " + shortened(sys.pool->toString(formula)));
}

void checkOutputsDefined(const symbolic::CompiledModel& model,
                         const std::vector<OutputColumn>& columns, const std::vector<double>& times,
                         const std::vector<double>& states, const std::vector<double>& p,
                         const std::vector<double>& values) {
  const auto nx = static_cast<std::size_t>(model.nx());
  const std::size_t ny = columns.size();
  for (std::size_t it = 0; it < times.size(); ++it) {
    for (std::size_t j = 0; j < ny; ++j) {
      const double v = values[it * ny + j];
      if (!std::isfinite(v))
        checkOutputDefined(model, columns[j], times[it], states.data() + it * nx, p.data(), v);
    }
  }
}

}  // namespace sensode::tasks::detail
