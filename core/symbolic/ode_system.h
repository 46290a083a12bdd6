// SPDX-License-Identifier: MIT
// dx/dt = f(t, x, p) as expressions: stage 2 of the pipeline. Built from a model::Model by
// buildOdeSystem() (ode_builder.cpp), which applies SBML semantics: amounts vs concentrations,
// compartment-size factors, conversion factors, assignment rules (substituted in dependency
// order), rate rules, initial assignments, rateOf and events.
//
// Algebraic rules and fast reactions make it a semi-explicit differential-algebraic system
// (docs/dae.md): the states marked `algebraic` have no derivative; their row of `rhs` is a
// constraint 0 = g_i(t, x, p) instead of dx_i/dt. So f, J = ∂f/∂x and ∂f/∂p of the compiled
// model are [f_d; g], [∂f_d/∂x; ∂g/∂x] and [∂f_d/∂p; ∂g/∂p], which is everything the DAE
// residual F(t, x, ẋ) = [ẋ_d − f_d; g] and its Jacobians need. Only IDAS integrates such a
// system (OdeSystem::isDae(); the other integrators hand it over and say so).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/symbolic/expression.h"

namespace sensode::symbolic {

// What a state variable x_i is.
enum class StateKind {
  SpeciesAmount,         // amount of a species changed by reactions (or an amount rate rule)
  SpeciesConcentration,  // concentration of a species with a rate rule and !hasOnlySubstanceUnits
  Compartment,           // size of a compartment with a rate rule
  Parameter,             // parameter with a rate rule
  SpeciesReference,      // stoichiometry with a rate rule
  ConservedPool,         // Σ l_i·n_i over the species of fast reactions (docs/dae.md)
};

// What a parameter p_k is. All of them can be differentiated against.
enum class ParamKind {
  GlobalParameter,  // constant global parameter (no rule, no initial assignment)
  LocalParameter,   // kinetic-law parameter, id "<reaction>.<local>"
  SpeciesInitial,   // initial value of a species (amount or concentration, as the file gives it)
  CompartmentSize,  // size of a constant compartment (no initial assignment)
  Stoichiometry,    // constant stoichiometry of a species reference that has an id
};

const char* toString(StateKind k);
const char* toString(ParamKind k);

struct StateVar {
  std::string id;  // SBML id of the species, compartment, parameter or species reference
  StateKind kind;
  Expr symbol;     // the symbol node x_i
  bool byReactions = false;  // a species amount whose rate is stoichiometry × reaction rates
  bool algebraic = false;    // no derivative: rhs holds the constraint 0 = g(t, x, p)
  std::string constraint{};  // algebraic: what the constraint is, for messages ("algebraic rule
                             // 'r1'", "fast reaction 'R1' at equilibrium", ...)
};

struct ParamVar {
  std::string id;  // SBML id ("<reaction>.<local>" for local parameters)
  ParamKind kind;
  double nominal;  // value in the file
  Expr symbol;     // the symbol node p_k
};

// A quantity users can ask for: every SBML symbol with a value, and reaction rates.
enum class OutputKind { Species, Compartment, Parameter, SpeciesReference, Reaction };

struct OutputVar {
  std::string id;
  OutputKind kind;
  Expr value;   // value in SBML semantics: species in concentration unless hasOnlySubstanceUnits
  Expr amount;  // species: amount; others: same as value
  Expr concentration;  // species: concentration (amount / size; amount for 0-D); others: value
};

// One assignment of an event: the state it sets and the value, as functions of (t, x, p) just
// before the event. The state becomes value × scale, scale evaluated before the execution too:
// for a species assigned in concentration it is its compartment's size (amount = concentration
// × size; a compartment assigned by the same event then changes the concentration, not the
// amount), otherwise 1.
struct EventAssignmentDef {
  int state;
  Expr value;
  Expr scale;
};

// A species integrated in concentration (rate rule) whose compartment an event resizes: its
// amount is kept, so the concentration is multiplied by size before / size after.
struct ConcentrationRescale {
  int state;
  Expr size;  // the compartment's size as a function of (t, x, p)
};

// An SBML event in terms of (t, x, p). Every quantity an event assigns is a state (with dx/dt = 0
// where no rule sets it), so assignments only ever change x.
struct EventDef {
  std::string id;
  Expr trigger;  // non-zero = true
  bool initialValue = true;
  bool persistent = true;
  bool useValuesFromTriggerTime = true;
  std::optional<Expr> delay, priority;
  std::vector<EventAssignmentDef> assignments;
  std::vector<ConcentrationRescale> rescaled;
};

// One distinct delay(g, τ) of the model's math (SBML csymbol delay), resolved into input symbols
// that a simulation driver fills from its history of the solution (symbolic/delays.h). With
// G(s) = g(s, x(s), p) along the solution and s = t − τ(t, x, p):
//   z = G(s), w = dG/ds(s), q = d²G/ds²(s), sigma_k = ∂G/∂p_k(s), omega_k = ∂²G/∂s∂p_k(s)
// (the derivatives along the solution: ∂G/∂p_k = ∂g/∂x·S(s) + ∂g/∂p_k). Before t0,
// G(s) = before(s, p).
struct DelayDef {
  Expr node;            // the delay(g, τ) node as the model wrote it (for messages)
  std::string element;  // id of the first state, output or event whose math holds it
  Expr value;           // g(t, x, p)
  Expr tau;             // τ(t, x, p)
  // g's history before t0 as a function of (s, p): every state is its initial value as a
  // function of time there (suite cases 00937, 00940: delay(sin(10 t), 0.2) at t = 0 is sin(−2));
  // a rateOf inside g is its ∂/∂t with the states frozen.
  Expr before;
  Expr z, w, q;         // input symbols
  std::vector<Expr> sigma, omega;  // input symbols, one per parameter
};

struct OdeSystem {
  std::string modelFile;
  std::shared_ptr<ExprPool> pool;
  Expr time;                     // the symbol for t
  std::vector<StateVar> states;  // x
  std::vector<ParamVar> params;  // p
  std::vector<Expr> rhs;         // f_i(t, x, p), one per state
  std::vector<Expr> initial;     // x_i(t0) as functions of p (and t at t0), one per state
  std::vector<OutputVar> outputs;
  std::vector<EventDef> events;  // in file order
  // delay() terms, replaced in rhs, outputs and events by their input symbols; `delayInputs`
  // lists those symbols in the order the tapes read them after p: (z, w, q) of every delay,
  // then sigma of every delay, then omega of every delay.
  std::vector<DelayDef> delays;
  std::vector<Expr> delayInputs;
  // Fast reactions (empty without): stoichiometry (state, fast reaction j, coefficient) and the
  // state whose rhs row is rate_j. Relaxing dx/dt = N_fast·rate from the file's values finds the
  // equilibrium the fast reactions run into (dae_consistency.cpp).
  std::vector<int> fastRateRow;
  // The conserved pools: state index of w_k and its coefficients (species state, l) in
  // w_k = Σ l·n. IDAS recomputes w (and its sensitivities) from the species at every (re)start,
  // so an event that changes a species of a fast reaction changes its pool.
  struct Pool {
    int state;
    std::vector<std::pair<int, double>> coefficients;
  };
  std::vector<Pool> fastPools;
  // Models with fast reactions at rapid equilibrium: the same model with its fast reactions as
  // ordinary reactions kFastRateFactor times faster (a stiff ODE with the same parameters and
  // outputs), which the tasks run instead when the equilibrium turns degenerate during a run
  // (a fast rate k·A while k = 0: ∂g/∂z singular, index > 1). Null otherwise.
  std::shared_ptr<const OdeSystem> fastSurrogate;
  // Models with delays: the same system with delay(g, τ) read as g (symbolic/delays.h,
  // withoutDelays), whose steady states are the delay model's. Null otherwise.
  std::shared_ptr<const OdeSystem> delayFreeTwin;

  // Stoichiometry of the species-amount states changed by reactions with constant
  // stoichiometry (for conservation laws): triplets (state index, reaction index, coefficient),
  // already multiplied by conversion factors. Empty when some stoichiometry is not constant;
  // `stoichiometryIsConstant` says which.
  struct StoichEntry {
    int state, reaction;
    double coefficient;
  };
  std::vector<StoichEntry> stoichiometry;
  std::vector<StoichEntry> fastStoichiometry;  // see fastRateRow
  std::vector<std::string> reactionIds;  // every reaction, fast ones included
  bool stoichiometryIsConstant = true;

  int numStates() const { return static_cast<int>(states.size()); }
  bool isDae() const;  // some state is algebraic
  int numParams() const { return static_cast<int>(params.size()); }
  int findState(const std::string& id) const;   // -1 when absent
  int findParam(const std::string& id) const;   // -1 when absent
  int findOutput(const std::string& id) const;  // -1 when absent
};

// How SBML fast reactions enter the system (docs/dae.md). Equilibrium is exact: algebraic
// constraints rate = 0 and conserved pools. StiffSurrogate makes them ordinary reactions whose
// rates are multiplied by kFastRateFactor: the equilibrium is reached within ~1/(10^8·k) of the
// model's time, an error of that relative order, and it holds where rapid equilibrium turns
// degenerate (∂g/∂z singular).
enum class FastReactionTreatment { Equilibrium, StiffSurrogate };
inline constexpr double kFastRateFactor = 1e8;
inline constexpr const char* kFastRateFactorText = "10^8";

// Applies SBML semantics; throws SbmlError naming the element on anything it cannot give
// meaning to (cyclic assignment rules, rateOf cycles, undefined symbols, NaN initial values).
// With fast reactions and Equilibrium, the result also carries the stiff surrogate
// (OdeSystem::fastSurrogate).
OdeSystem buildOdeSystem(const model::Model& model,
                         FastReactionTreatment fast = FastReactionTreatment::Equilibrium);

}  // namespace sensode::symbolic
