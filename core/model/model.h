// SPDX-License-Identifier: MIT
// The plain model: what an SBML file says, with SBML ids kept and all math as expressions in one
// shared ExprPool. Stage 1 of the pipeline (model/ → symbolic/ → compiled evaluators); it knows
// nothing about states or derivatives. core/symbolic/ode_builder turns it into dx/dt = f(x, p).
//
// Symbol names used inside the math:
//   - an SBML id (species, compartment, parameter, species reference, reaction) is its own name;
//   - a local (kinetic-law) parameter is renamed to "<reactionId>.<localId>" inside its kinetic
//     law ('.' cannot occur in SBML ids, so there is no clash);
//   - csymbol time is the symbol kTimeSymbol; csymbol avogadro is folded to its constant;
//   - rateOf(X) is the symbol rateOfSymbol("X"), resolved by the ODE builder.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/symbolic/expression.h"

namespace sensode::model {

using symbolic::Expr;

inline constexpr const char* kTimeSymbol = "@time";
inline std::string rateOfSymbol(const std::string& id) { return "@rateOf:" + id; }
inline std::string localParameterSymbol(const std::string& reaction, const std::string& local) {
  return reaction + "." + local;
}
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Compartment {
  std::string id, name;
  double size = kNaN;            // NaN when unset (an initial assignment or rule may set it)
  double spatialDimensions = 3;  // 0 for 0-D compartments (size is then meaningless: treat as 1)
  bool constant = true;
};

struct Species {
  std::string id, name, compartment;
  double initialAmount = kNaN;         // exactly one of the two is set, or neither when an
  double initialConcentration = kNaN;  // initial assignment or rule gives the value
  bool hasOnlySubstanceUnits = false;
  bool boundaryCondition = false;
  bool constant = false;
  std::string conversionFactor;  // id of a parameter, empty when none
};

struct Parameter {
  std::string id, name;
  double value = kNaN;
  bool constant = true;
};

struct SpeciesReference {
  std::string species;
  std::string id;                      // optional SBML id (L3); may be used in math and rules
  double stoichiometry = kNaN;         // NaN when unset (L3 default semantics: see ode_builder)
  bool constant = true;                // L3 'constant' attribute; L2: true unless stoichiometryMath
  std::optional<Expr> stoichiometryMath;  // L2 stoichiometryMath
};

struct LocalParameter {
  std::string id;  // the local id as written; its symbol is localParameterSymbol(reaction, id)
  double value = kNaN;
};

struct Reaction {
  std::string id, name;
  bool reversible = true;
  std::vector<SpeciesReference> reactants, products;
  std::vector<std::string> modifiers;
  std::optional<Expr> rate;  // kinetic law math (extent per time); nullopt when absent
  std::vector<LocalParameter> localParameters;
  // SBML fast="true" (L2, L3V1): the reaction is taken to be at equilibrium at all times (rapid
  // equilibrium); core/symbolic/ode_builder turns it into an algebraic constraint (docs/dae.md).
  bool fast = false;
};

// Algebraic: 0 = math, with no variable of its own; the ODE builder determines which variable
// it fixes (docs/dae.md).
enum class RuleKind { Assignment, Rate, Algebraic };

struct Rule {
  RuleKind kind;
  std::string variable;  // id of a compartment, species, parameter or species reference
                         // (empty for an algebraic rule)
  Expr math;
  std::string id;  // for messages: the L3V2 id attribute, else "algebraic rule <n>" (1-based
                   // among the algebraic rules); the variable for the other kinds
};

struct InitialAssignment {
  std::string symbol;
  Expr math;
};

// An SBML event. Trigger, delay and priority are math over model symbols (csymbol time allowed);
// assignments give the new value of a species (in its SBML units: concentration unless
// hasOnlySubstanceUnits), compartment, parameter or species reference.
struct EventAssignment {
  std::string variable;
  Expr math;
};

struct Event {
  std::string id;  // the SBML id, or "event<n>" (1-based) when the file gives none
  Expr trigger;    // boolean-valued (non-zero = true)
  bool initialValue = true;  // the trigger's value just before t0
  bool persistent = true;    // false: a pending execution is cancelled when the trigger turns false
  bool useValuesFromTriggerTime = true;
  std::optional<Expr> delay;
  std::optional<Expr> priority;
  std::vector<EventAssignment> assignments;
};

struct Model {
  std::string file;  // where it came from (for error messages)
  std::string id, name;
  int level = 3, version = 2;
  std::shared_ptr<symbolic::ExprPool> pool = std::make_shared<symbolic::ExprPool>();
  std::vector<Compartment> compartments;
  std::vector<Species> species;
  std::vector<Parameter> parameters;
  std::vector<Reaction> reactions;
  std::vector<Rule> rules;  // assignment rules in the order the file gives; rate rules too
  std::vector<InitialAssignment> initialAssignments;
  std::vector<Event> events;  // in file order
  std::string conversionFactor;  // model-level conversion factor parameter id, empty if none
  // What the import assumed where the file is silent (one sentence each, naming the element),
  // for the front ends to show: e.g. a global parameter without any value taken as 1.
  std::vector<std::string> warnings;
};

}  // namespace sensode::model
