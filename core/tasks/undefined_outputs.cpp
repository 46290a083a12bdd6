// SPDX-License-Identifier: MIT
#include "core/tasks/undefined_outputs.h"

#include <cmath>
#include <string>

namespace sensode::tasks {

namespace {

// "0", "0, 0.5 and 1", "0, 0.1, ..., 0.7 ... (40 output times in all)": the first 8.
std::string listTimes(const std::vector<double>& times) {
  constexpr std::size_t kShown = 8;
  std::string s;
  for (std::size_t i = 0; i < times.size() && i < kShown; ++i) {
    if (i > 0) s += (i + 1 == times.size() ? " and " : ", ");
    s += detail::exactNumber(times[i]);
  }
  if (times.size() > kShown) s += ", ... (" + std::to_string(times.size()) + " output times in all)";
  return s;
}

// "'alpha' has no value at t = 0: its formula gives NaN although every quantity it reads is
// finite (A = 0, B = 0; e.g. 0/0)".
std::string whatIsUndefined(const UndefinedOutput& u) {
  return "'" + u.id + "' has no value at t = " + listTimes(u.times) + ": its formula gives " +
         u.gives + " although every quantity it reads is finite (" + u.reads +
         (u.gives == "NaN" ? "; e.g. 0/0" : "") + ")";
}

}  // namespace

std::string describe(const UndefinedOutput& u) {
  return whatIsUndefined(u) + "; " + u.gives + " is written there. Formula: " + u.formula;
}

}  // namespace sensode::tasks

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

const char* spelling(double value) { return std::isnan(value) ? "NaN" : value > 0 ? "INF" : "-INF"; }

}  // namespace

bool UndefinedOutputLog::note(const OutputColumn& column, double t, const double* x,
                              const double* p, double value) {
  if (std::isfinite(value)) return false;
  for (UndefinedOutput& known : entries_) {
    if (known.id != column.id) continue;
    // Listed already: the same formula, so the same verdict (a listed output reads no
    // non-finite parameter, and a non-finite state stops the integration).
    if (known.times.empty() || known.times.back() != t) known.times.push_back(t);
    return true;
  }
  const symbolic::OdeSystem& sys = model_.system();
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
      if (!found) return false;  // a symbol of unknown meaning: not provably the formula's doing
    }
    if (!std::isfinite(v)) return false;
    if (listed < 8) reads += (listed > 0 ? ", " : "") + id + " = " + exactNumber(v);
    else if (listed == 8) reads += ", ...";
    ++listed;
  }
  // A constant formula (INF, NaN, 1/0 folded: SBML Test Suite cases 00950, 01811, 01813) is a
  // value the model states.
  if (listed == 0) return false;
  UndefinedOutput undefined{column.id, {t}, shortened(sys.pool->toString(formula)), reads,
                            spelling(value)};
  // The value is only read by a person as long as the right-hand side is finite; where it is
  // not (the rule drives a reaction), no state after t has a value either. (A model with delays
  // evaluates f only with its history attached, which the sensitivities' check after the run has
  // not; its integrators test f themselves.)
  f_.assign(model_.hasDelays() ? 0 : sys.states.size(), 0.0);
  if (!f_.empty()) model_.rhs(t, x, p, f_.data());
  for (std::size_t i = 0; i < f_.size(); ++i) {
    if (!std::isfinite(f_[i])) {
      throw InvalidInput(whatIsUndefined(undefined) +
                         ", and the right-hand side is not finite there either (d" +
                         sys.states[i].id + "/dt = " +
                         (std::isnan(f_[i]) ? std::string("NaN") : exactNumber(f_[i])) +
                         "), so the run cannot go on. Formula: " + undefined.formula);
    }
  }
  entries_.push_back(std::move(undefined));
  return true;
}

void UndefinedOutputLog::noteAll(const std::vector<OutputColumn>& columns,
                                 const std::vector<double>& times,
                                 const std::vector<double>& states, const std::vector<double>& p,
                                 const std::vector<double>& values,
                                 std::vector<std::uint8_t>* undefined) {
  const auto nx = static_cast<std::size_t>(model_.nx());
  const std::size_t ny = columns.size();
  if (undefined) undefined->assign(times.size() * ny, 0);
  for (std::size_t it = 0; it < times.size(); ++it) {
    for (std::size_t j = 0; j < ny; ++j) {
      const double v = values[it * ny + j];
      if (std::isfinite(v)) continue;
      if (note(columns[j], times[it], states.data() + it * nx, p.data(), v) && undefined)
        (*undefined)[it * ny + j] = 1;
    }
  }
}

}  // namespace sensode::tasks::detail
