// SPDX-License-Identifier: MIT
// SBML semantics: model::Model → OdeSystem.
//
// Choices that follow the SBML L3V2 specification (and the Test Suite):
// - A species changed by reactions is integrated as an amount n; its value in math is
//   n / V (the compartment's current size) unless hasOnlySubstanceUnits. Reactions contribute
//   stoichiometry × rate (extent per time) × conversion factor to dn/dt.
// - A species with a rate rule is integrated in its own units: the amount when
//   hasOnlySubstanceUnits, else the concentration (the rate rule gives d[S]/dt).
// - A species that nothing changes (boundary, constant, or in no reaction) keeps a constant amount;
//   its concentration follows its compartment's size.
// - Assignment rules are substituted (they hold at all times, t0 included); cycles are an error.
// - Quantities with an initial assignment but no rule are constants defined by that assignment.
// - rateOf(X) is the total time derivative of X's value, Σ ∂X/∂x_j f_j + ∂X/∂t.
// - A parameter, compartment, species reference or species that an event assigns is a state
//   (dx/dt = 0 unless a rule or reactions change it), as AMICI does, so that f, J and S stay those
//   of one system between events. A species is always an amount state: a compartment event
//   keeps amounts (its concentration follows the new size, as SBML specifies), and a species
//   assigned in concentration gets amount = value × size.
// Every quantity that is a free constant becomes a parameter p_k (so that sensitivities and
// --set cover global and local parameters, species initial values and compartment sizes).
// - An algebraic rule 0 = g determines one variable that nothing else sets (a maximum matching
//   of rules to such variables; a rule left without one makes the model overdetermined). When g
//   is a·z + r with a a number, z = −r/a becomes an assignment rule and the system stays an ODE;
//   otherwise z is an algebraic state whose rhs row is g. Fast reactions are at equilibrium:
//   each gives the constraint rate = 0 on the species they change, whose conserved pools
//   (left null space of the fast stoichiometry) become differential states driven by the slow
//   reactions. docs/dae.md states the formulation.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/common/errors.h"
#include "core/symbolic/delays.h"
#include "core/symbolic/algebraic_rules.h"
#include "core/symbolic/ode_system.h"

namespace sensode::symbolic {

namespace {

using model::Model;

enum class SymKind { Compartment, Species, Parameter, SpeciesReference, Reaction, Local };

class Builder {
 public:
  Builder(const Model& m, FastReactionTreatment fast) : m_(m), pool_(*m.pool), fast_(fast) {}

  OdeSystem build() {
    sys_.modelFile = m_.file;
    sys_.pool = m_.pool;
    sys_.time = pool_.symbol(model::kTimeSymbol);
    indexSymbols();
    classify();
    determineAlgebraicVariables();
    createStatesAndParameters();
    buildRates();
    computeAllValues();
    buildEvents();
    resolveRateOf();
    buildInitialValues();
    buildOutputs();
    checkParameterValues();
    resolveDelays(sys_, [this] { return initialValuesOverTime(); });  // symbolic/delays.h
    if (!sys_.delays.empty()) sys_.delayFreeTwin = std::make_shared<const OdeSystem>(withoutDelays(sys_));
    return std::move(sys_);
  }

 private:
  [[noreturn]] void fail(const std::string& element, const std::string& reason) const {
    throw SbmlError(m_.file, element, reason);
  }

  // ---- symbol table -----------------------------------------------------------------------
  void indexSymbols() {
    for (std::size_t i = 0; i < m_.compartments.size(); ++i)
      kind_[m_.compartments[i].id] = {SymKind::Compartment, static_cast<int>(i)};
    for (std::size_t i = 0; i < m_.species.size(); ++i)
      kind_[m_.species[i].id] = {SymKind::Species, static_cast<int>(i)};
    for (std::size_t i = 0; i < m_.parameters.size(); ++i)
      kind_[m_.parameters[i].id] = {SymKind::Parameter, static_cast<int>(i)};
    for (std::size_t r = 0; r < m_.reactions.size(); ++r) {
      const auto& rx = m_.reactions[r];
      kind_[rx.id] = {SymKind::Reaction, static_cast<int>(r)};
      for (const auto* refs : {&rx.reactants, &rx.products})
        for (const auto& sr : *refs)
          if (!sr.id.empty()) {
            speciesRefs_[sr.id] = &sr;
            kind_[sr.id] = {SymKind::SpeciesReference, static_cast<int>(r)};
          }
      for (const auto& lp : rx.localParameters)
        kind_[model::localParameterSymbol(rx.id, lp.id)] = {SymKind::Local, static_cast<int>(r)};
    }
    for (const auto& rule : m_.rules) {
      if (rule.kind == model::RuleKind::Algebraic) {
        algebraicRules_.push_back(&rule);
        continue;
      }
      if (!kind_.count(rule.variable))
        fail(rule.variable, "rule variable '" + rule.variable + "' is not defined in the model");
      auto& slot = rule.kind == model::RuleKind::Assignment ? assignment_ : rateRule_;
      if (assignment_.count(rule.variable) || rateRule_.count(rule.variable))
        fail(rule.variable, "more than one rule sets '" + rule.variable + "'");
      slot[rule.variable] = rule.math;
    }
    for (const auto& ia : m_.initialAssignments) {
      if (!kind_.count(ia.symbol))
        fail(ia.symbol, "initial assignment to undefined symbol '" + ia.symbol + "'");
      initialAssignment_[ia.symbol] = ia.math;
    }
    for (const auto& ev : m_.events)
      for (const auto& a : ev.assignments) {
        auto it = kind_.find(a.variable);
        if (it == kind_.end() || it->second.first == SymKind::Reaction ||
            it->second.first == SymKind::Local)
          fail(ev.id, "event assigns '" + a.variable + "', which has no value to set");
        if (assignment_.count(a.variable))
          fail(ev.id, "event assigns '" + a.variable + "', which an assignment rule sets");
        eventAssigned_.insert(a.variable);
      }
  }

  const model::Species& species(const std::string& id) const {
    return m_.species[static_cast<std::size_t>(kind_.at(id).second)];
  }
  const model::Compartment& compartment(const std::string& id) const {
    auto it = kind_.find(id);
    if (it == kind_.end() || it->second.first != SymKind::Compartment)
      fail(id, "compartment '" + id + "' is not defined");
    return m_.compartments[static_cast<std::size_t>(it->second.second)];
  }
  // A 0-D compartment without any size has no volume to divide by: its species' concentrations
  // are their amounts. With a size (the Test Suite's 0-D cases give one) the usual rules apply.
  bool isZeroDimensional(const std::string& compartmentId) const {
    const auto& c = compartment(compartmentId);
    return c.spatialDimensions == 0 && std::isnan(c.size) && !ruled(c.id) &&
           !initialAssignment_.count(c.id);
  }

  // ---- which species reactions change ----------------------------------------------------
  void classify() {
    for (const auto& rx : m_.reactions)
      for (const auto* refs : {&rx.reactants, &rx.products})
        for (const auto& sr : *refs) {
          auto it = kind_.find(sr.species);
          if (it == kind_.end() || it->second.first != SymKind::Species)
            fail(rx.id, "reaction refers to undefined species '" + sr.species + "'");
          const auto& sp = species(sr.species);
          if (!sp.boundaryCondition && !sp.constant && !assignment_.count(sp.id) &&
              !rateRule_.count(sp.id))
            reactionDriven_.insert(sp.id);
        }
  }

  // ---- x and p ---------------------------------------------------------------------------
  void addState(const std::string& id, StateKind kind) {
    stateIndex_[id] = static_cast<int>(sys_.states.size());
    sys_.states.push_back({id, kind, pool_.symbol("@x:" + id)});
  }
  Expr addParam(const std::string& id, ParamKind kind, double nominal) {
    paramIndex_[id] = static_cast<int>(sys_.params.size());
    const Expr s = pool_.symbol("@p:" + id);
    sys_.params.push_back({id, kind, nominal, s});
    return s;
  }
  Expr paramSymbol(const std::string& id) const {
    return sys_.params[static_cast<std::size_t>(paramIndex_.at(id))].symbol;
  }
  Expr stateSymbol(const std::string& id) const {
    return sys_.states[static_cast<std::size_t>(stateIndex_.at(id))].symbol;
  }
  bool isState(const std::string& id) const { return stateIndex_.count(id) > 0; }
  bool isParam(const std::string& id) const { return paramIndex_.count(id) > 0; }
  bool ruled(const std::string& id) const {
    return assignment_.count(id) || rateRule_.count(id);
  }

  void createStatesAndParameters() {
    for (const auto& sp : m_.species) {
      if (determinedBy_.count(sp.id))
        addState(sp.id, sp.hasOnlySubstanceUnits || isZeroDimensional(sp.compartment)
                            ? StateKind::SpeciesAmount
                            : StateKind::SpeciesConcentration);
      else if (rateRule_.count(sp.id))
        addState(sp.id, sp.hasOnlySubstanceUnits || isZeroDimensional(sp.compartment)
                            ? StateKind::SpeciesAmount
                            : StateKind::SpeciesConcentration);
      else if (reactionDriven_.count(sp.id)) {
        addState(sp.id, StateKind::SpeciesAmount);
        sys_.states.back().byReactions = true;
      } else if (eventAssigned_.count(sp.id)) {
        addState(sp.id, StateKind::SpeciesAmount);
      }
    }
    auto dynamic = [this](const std::string& id) {
      return rateRule_.count(id) > 0 || eventAssigned_.count(id) > 0 ||
             determinedBy_.count(id) > 0;
    };
    for (const auto& c : m_.compartments)
      if (dynamic(c.id)) addState(c.id, StateKind::Compartment);
    for (const auto& p : m_.parameters)
      if (dynamic(p.id)) addState(p.id, StateKind::Parameter);
    for (const auto& [id, ref] : speciesRefs_)
      if (dynamic(id)) addState(id, StateKind::SpeciesReference);

    for (auto& st : sys_.states)
      if (auto it = determinedBy_.find(st.id); it != determinedBy_.end()) {
        st.algebraic = true;
        st.constraint = "algebraic rule '" + it->second->id + "'";
      }

    // Free constants: everything without an assignment rule or initial assignment. For rate-rule
    // states the parameter is the initial value.
    for (const auto& p : m_.parameters)
      if (!assignment_.count(p.id) && !initialAssignment_.count(p.id))
        addParam(p.id, ParamKind::GlobalParameter, p.value);
    for (const auto& rx : m_.reactions)
      for (const auto& lp : rx.localParameters)
        addParam(model::localParameterSymbol(rx.id, lp.id), ParamKind::LocalParameter, lp.value);
    for (const auto& sp : m_.species)
      if (!assignment_.count(sp.id) && !initialAssignment_.count(sp.id))
        addParam(sp.id, ParamKind::SpeciesInitial,
                 !std::isnan(sp.initialAmount) ? sp.initialAmount : sp.initialConcentration);
    for (const auto& c : m_.compartments)
      if (!assignment_.count(c.id) && !initialAssignment_.count(c.id))
        addParam(c.id, ParamKind::CompartmentSize,
                 c.spatialDimensions == 0 && std::isnan(c.size) ? 1.0 : c.size);
  }

  // ---- values over time (valueOf) and at t0 (initOf) ---------------------------------------
  // resolve() replaces every SBML symbol in an expression by its value; the lookup function
  // decides which (valueOf for dynamics, initOf for initial values).
  Expr resolveWith(Expr e, const std::string& context,
                   const std::function<Expr(const std::string&)>& lookup) {
    std::unordered_map<Expr, Expr> leaves;
    for (Expr s : pool_.dependencies(e)) {
      const std::string& name = pool_.symbolName(pool_.node(s).symbol);
      if (s == sys_.time || name.rfind("@rateOf:", 0) == 0 || name.rfind("@x:", 0) == 0 ||
          name.rfind("@p:", 0) == 0)
        continue;
      if (!kind_.count(name)) fail(context, "undefined symbol '" + name + "' in math");
      leaves[s] = lookup(name);
    }
    return pool_.substitute(e, leaves);
  }
  Expr resolve(Expr e, const std::string& context) {
    const Expr withHistory = attachDelayHistories(
        pool_, e, [&](Expr g) { return initialOverTime(g, context); });
    return resolveWith(withHistory, context, [this](const std::string& id) { return valueOf(id); });
  }
  // e at t0 with csymbol time kept: the history of delay(e, τ) before t0, where every quantity is
  // its initial value as a function of time (suite 00940: a species that nothing changes, whose
  // initial assignment is sin(10 t), echoes sin(10 (t − τ)) until t = τ).
  Expr initialOverTime(Expr e, const std::string& context) {
    std::swap(init_, initOverTime_);
    keepTimeInInit_ = true;
    const Expr v = resolveInit(e, context);
    keepTimeInInit_ = false;
    std::swap(init_, initOverTime_);
    return v;
  }
  // Initial values hold at SBML's time 0: csymbol time in them is 0, not the running time.
  Expr resolveInit(Expr e, const std::string& context) {
    const Expr v = resolveWith(e, context, [this](const std::string& id) { return initOf(id); });
    return keepTimeInInit_ ? v : pool_.substitute(v, {{sys_.time, pool_.zero()}});
  }

  Expr compartmentValue(const std::string& cId) {
    return isZeroDimensional(cId) ? pool_.one() : valueOf(cId);
  }

  // Constant amount of a species nothing changes: its initial amount.
  Expr constantAmount(const model::Species& sp) {
    const Expr v = initOf(sp.id);
    if (sp.hasOnlySubstanceUnits || isZeroDimensional(sp.compartment)) return v;
    return pool_.mul(v, initOf(sp.compartment));
  }

  Expr valueOf(const std::string& id) {
    if (auto it = value_.find(id); it != value_.end()) return it->second;
    if (!visiting_.insert(id).second)
      fail(id, "assignment rules or initial assignments form a cycle through '" + id + "'");
    const Expr v = computeValue(id);
    visiting_.erase(id);
    value_[id] = v;
    return v;
  }

  Expr computeValue(const std::string& id) {
    const auto [kind, index] = kind_.at(id);
    if (kind == SymKind::Reaction) {
      const auto& rx = m_.reactions[static_cast<std::size_t>(index)];
      return rx.rate ? resolve(*rx.rate, rx.id) : pool_.zero();
    }
    if (kind == SymKind::Local) return paramSymbol(id);
    if (auto it = assignment_.find(id); it != assignment_.end()) return resolve(it->second, id);
    if (kind == SymKind::Species) {
      const auto& sp = m_.species[static_cast<std::size_t>(index)];
      const bool amountUnits = sp.hasOnlySubstanceUnits || isZeroDimensional(sp.compartment);
      if (isState(id)) {
        const auto& st = sys_.states[static_cast<std::size_t>(stateIndex_.at(id))];
        if (st.kind == StateKind::SpeciesConcentration || amountUnits) return st.symbol;
        return pool_.div(st.symbol, compartmentValue(sp.compartment));
      }
      const Expr n = constantAmount(sp);
      return amountUnits ? n : pool_.div(n, compartmentValue(sp.compartment));
    }
    if (isState(id)) return stateSymbol(id);
    if (kind == SymKind::SpeciesReference) {
      // L2 stoichiometryMath, else a constant: the number given, or its initial assignment.
      const auto* ref = speciesRefs_.at(id);
      if (ref->stoichiometryMath)
        return resolve(*ref->stoichiometryMath, m_.reactions[static_cast<std::size_t>(index)].id);
      if (initialAssignment_.count(id)) return initOf(id);
      const double s = speciesRefs_.at(id)->stoichiometry;
      return pool_.constant(std::isnan(s) ? 1.0 : s);
    }
    // Compartments and parameters: a free constant, or a constant fixed by its initial assignment.
    if (isParam(id)) return paramSymbol(id);
    return initOf(id);
  }

  Expr initOf(const std::string& id) {
    if (auto it = init_.find(id); it != init_.end()) return it->second;
    const std::string key = "init:" + id;
    if (!visiting_.insert(key).second)
      fail(id, "initial assignments or assignment rules form a cycle through '" + id + "'");
    const Expr v = computeInit(id);
    visiting_.erase(key);
    init_[id] = v;
    return v;
  }

  Expr computeInit(const std::string& id) {
    const auto [kind, index] = kind_.at(id);
    if (auto it = initialAssignment_.find(id); it != initialAssignment_.end())
      return resolveInit(it->second, id);
    if (auto it = assignment_.find(id); it != assignment_.end()) return resolveInit(it->second, id);
    switch (kind) {
      case SymKind::Reaction: {
        const auto& rx = m_.reactions[static_cast<std::size_t>(index)];
        return rx.rate ? resolveInit(*rx.rate, rx.id) : pool_.zero();
      }
      case SymKind::Local: return paramSymbol(id);
      case SymKind::Species: {
        const auto& sp = m_.species[static_cast<std::size_t>(index)];
        const Expr p = paramSymbol(id);
        const bool amountUnits = sp.hasOnlySubstanceUnits || isZeroDimensional(sp.compartment);
        if (!std::isnan(sp.initialAmount))
          return amountUnits ? p : pool_.div(p, initOf(sp.compartment));
        if (!std::isnan(sp.initialConcentration))
          return amountUnits && !isZeroDimensional(sp.compartment)
                     ? pool_.mul(p, initOf(sp.compartment))
                     : p;
        return p;  // no value: the parameter is NaN and checkParameterValues() reports it
      }
      case SymKind::SpeciesReference: {
        const auto* ref = speciesRefs_.at(id);
        if (ref->stoichiometryMath) return resolveInit(*ref->stoichiometryMath, id);
        const double s = ref->stoichiometry;
        return pool_.constant(std::isnan(s) ? 1.0 : s);
      }
      case SymKind::Compartment:
        if (isZeroDimensional(id) && !isParam(id)) return pool_.one();
        [[fallthrough]];
      case SymKind::Parameter: return paramSymbol(id);
    }
    return pool_.nanExpr();
  }

  // ---- dx/dt ------------------------------------------------------------------------------
  Expr stoichiometry(const model::SpeciesReference& sr, const std::string& reactionId) {
    if (!sr.id.empty()) return valueOf(sr.id);  // rules, stoichiometryMath, assignments
    if (sr.stoichiometryMath) return resolve(*sr.stoichiometryMath, reactionId);
    return pool_.constant(std::isnan(sr.stoichiometry) ? 1.0 : sr.stoichiometry);
  }

  Expr conversionFactor(const model::Species& sp) {
    const std::string& cf = !sp.conversionFactor.empty() ? sp.conversionFactor : m_.conversionFactor;
    return cf.empty() ? pool_.one() : valueOf(cf);
  }

  void buildRates() {
    sys_.rhs.assign(sys_.states.size(), pool_.zero());
    // Reaction contributions to species amounts.
    std::vector<std::vector<Expr>> terms(sys_.states.size());
    for (std::size_t r = 0; r < m_.reactions.size(); ++r) {
      const auto& rx = m_.reactions[r];
      sys_.reactionIds.push_back(rx.id);
      const Expr rate = valueOf(rx.id);
      auto contribute = [&](const model::SpeciesReference& sr, double sign) {
        if (!reactionDriven_.count(sr.species)) return;
        const int i = stateIndex_.at(sr.species);
        const Expr nu = pool_.mul(std::vector<Expr>{pool_.constant(sign), stoichiometry(sr, rx.id),
                                                    conversionFactor(species(sr.species))});
        // A fast reaction whose rate is identically zero (ln(1)·k) never moves: no constraint.
        if (rx.fast && rate != pool_.zero() &&
            fast_ == FastReactionTreatment::Equilibrium) {
          addFastStoichiometry(rx, i, nu);
          return;
        }
        const Expr flux = rx.fast && fast_ == FastReactionTreatment::StiffSurrogate
                              ? pool_.mul(pool_.constant(kFastRateFactor), rate)
                              : rate;
        terms[static_cast<std::size_t>(i)].push_back(pool_.mul(nu, flux));
        recordStoichiometry(i, static_cast<int>(r), nu);
      };
      for (const auto& sr : rx.reactants) contribute(sr, -1.0);
      for (const auto& sr : rx.products) contribute(sr, +1.0);
    }
    for (std::size_t i = 0; i < sys_.states.size(); ++i) {
      const auto& st = sys_.states[i];
      if (auto it = determinedBy_.find(st.id); it != determinedBy_.end())
        sys_.rhs[i] = resolve(it->second->math, it->second->id);
      else if (auto rr = rateRule_.find(st.id); rr != rateRule_.end())
        sys_.rhs[i] = resolve(rr->second, st.id);
      else
        sys_.rhs[i] = pool_.add(terms[i]);
    }
    if (!fastReactions_.empty()) buildFastEquilibrium(terms);
  }

  // ---- algebraic rules ---------------------------------------------------------------------
  // Variables an algebraic rule may determine (SBML L3V2 §4.9.5): not constant, set by no
  // assignment or rate rule nor by events, and, for species, not changed by reactions.
  std::vector<std::string> algebraicCandidates() const {
    std::vector<std::string> out;
    auto free = [this](const std::string& id) { return !ruled(id) && !eventAssigned_.count(id); };
    for (const auto& sp : m_.species)
      if (!sp.constant && free(sp.id) && !reactionDriven_.count(sp.id)) out.push_back(sp.id);
    for (const auto& c : m_.compartments)
      if (!c.constant && free(c.id)) out.push_back(c.id);
    for (const auto& p : m_.parameters)
      if (!p.constant && free(p.id)) out.push_back(p.id);
    for (const auto& [id, ref] : speciesRefs_)
      if (!ref->constant && !ref->stoichiometryMath && free(id)) out.push_back(id);
    return out;
  }

  // SBML ids e depends on, through assignment rules and reaction rates (a species' value also
  // through its compartment's size).
  void collectIds(Expr e, std::set<std::string>& ids) const {
    for (Expr s : pool_.dependencies(e)) {
      const std::string& name = pool_.symbolName(pool_.node(s).symbol);
      auto k = kind_.find(name);
      if (k == kind_.end() || !ids.insert(name).second) continue;
      if (auto a = assignment_.find(name); a != assignment_.end()) collectIds(a->second, ids);
      if (k->second.first == SymKind::Reaction) {
        const auto& rx = m_.reactions[static_cast<std::size_t>(k->second.second)];
        if (rx.rate) collectIds(*rx.rate, ids);
      }
      if (k->second.first == SymKind::Species) {
        const std::string& c = species(name).compartment;
        if (ids.insert(c).second)
          if (auto a = assignment_.find(c); a != assignment_.end()) collectIds(a->second, ids);
      }
    }
  }

  void determineAlgebraicVariables() {
    if (algebraicRules_.empty()) return;
    const std::vector<std::string> candidates = algebraicCandidates();
    std::map<std::string, int> candidateIndex;
    for (std::size_t c = 0; c < candidates.size(); ++c)
      candidateIndex[candidates[c]] = static_cast<int>(c);
    // Preference: variables the rule can be solved for directly first, so that as many rules as
    // possible become assignment rules.
    std::vector<std::vector<int>> options(algebraicRules_.size());
    for (std::size_t r = 0; r < algebraicRules_.size(); ++r) {
      const model::Rule& rule = *algebraicRules_[r];
      std::set<std::string> ids;
      collectIds(rule.math, ids);
      std::vector<int> direct, indirect;
      for (const std::string& id : ids) {
        auto c = candidateIndex.find(id);
        if (c == candidateIndex.end()) continue;
        (solvableFor(rule, id) ? direct : indirect).push_back(c->second);
      }
      options[r] = std::move(direct);
      options[r].insert(options[r].end(), indirect.begin(), indirect.end());
    }
    const std::vector<int> match =
        matchRulesToVariables(options, static_cast<int>(candidates.size()));
    for (std::size_t r = 0; r < algebraicRules_.size(); ++r) {
      const model::Rule& rule = *algebraicRules_[r];
      if (match[r] < 0)
        fail(rule.id, "the algebraic rule '" + rule.id + "' (0 = " + pool_.toString(rule.math) +
                          ") determines no variable: every variable in it is constant, set by "
                          "another rule or by reactions, or determined by another algebraic "
                          "rule (the model is overdetermined)");
      const std::string& z = candidates[static_cast<std::size_t>(match[r])];
      if (auto solved = solvableFor(rule, z)) {
        // 0 = a·z + r with a a number: z = −r/a holds at all times, an assignment rule.
        assignment_[z] = *solved;
        initialAssignment_.erase(z);
      } else {
        determinedBy_[z] = &rule;
      }
    }
  }

  // z = −r/a when the rule is a·z + r with a a number and nothing else in it depends on z
  // through assignment rules (including rules solved before).
  std::optional<Expr> solvableFor(const model::Rule& rule, const std::string& z) {
    const Expr zs = pool_.symbol(z);
    auto solved = solveLinear(pool_, rule.math, zs);
    if (!solved) return std::nullopt;
    std::set<std::string> through;
    collectIds(*solved, through);
    if (through.count(z)) return std::nullopt;
    return solved;
  }

  // ---- fast reactions -----------------------------------------------------------------------
  void addFastStoichiometry(const model::Reaction& rx, int state, Expr nu) {
    if (!pool_.isConstant(nu))
      throw UnsupportedFeature(m_.file, rx.id,
                               "fast reaction with a variable or parameter stoichiometry (the "
                               "conserved pools of rapid equilibrium need numbers)");
    auto it = std::find(fastReactions_.begin(), fastReactions_.end(), &rx);
    if (it == fastReactions_.end()) {
      fastReactions_.push_back(&rx);
      it = fastReactions_.end() - 1;
    }
    fastStoichiometry_.push_back(
        {state, static_cast<int>(it - fastReactions_.begin()), pool_.node(nu).value});
  }

  // Rapid equilibrium (docs/dae.md): the species the fast reactions change become algebraic;
  // their constraints are rate_j = 0 for every fast reaction j and L·n = w for the conserved
  // pools w, which are differential states with dw/dt = L·(slow reaction terms).
  void buildFastEquilibrium(const std::vector<std::vector<Expr>>& slowTerms) {
    std::vector<int> fastSpecies;
    for (const auto& e : fastStoichiometry_)
      if (std::find(fastSpecies.begin(), fastSpecies.end(), e.state) == fastSpecies.end())
        fastSpecies.push_back(e.state);
    const auto nf = static_cast<Eigen::Index>(fastReactions_.size());
    Eigen::MatrixXd N = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(fastSpecies.size()), nf);
    for (const auto& e : fastStoichiometry_) {
      const auto row = std::find(fastSpecies.begin(), fastSpecies.end(), e.state) -
                       fastSpecies.begin();
      N(row, e.reaction) += e.coefficient;
    }
    const ConservedPools pools = conservedPools(N);
    if (pools.rank < nf) {
      std::string ids;
      for (const auto* rx : fastReactions_) ids += (ids.empty() ? "'" : ", '") + rx->id + "'";
      fail(fastReactions_.front()->id,
           "the fast reactions " + ids + " are not independent (their stoichiometry has rank " +
               std::to_string(pools.rank) + " < " + std::to_string(nf) +
               "): their equilibria would overdetermine the species");
    }
    sys_.fastStoichiometry = fastStoichiometry_;
    // Conservation-law reduction would see only the slow reactions of these species.
    sys_.stoichiometryIsConstant = false;
    sys_.stoichiometry.clear();
    std::vector<Expr> amounts;
    for (const int i : fastSpecies) amounts.push_back(sys_.states[static_cast<std::size_t>(i)].symbol);
    std::size_t row = 0;
    for (Eigen::Index j = 0; j < nf; ++j, ++row) {
      auto& st = sys_.states[static_cast<std::size_t>(fastSpecies[row])];
      st.algebraic = true;
      st.byReactions = false;
      st.constraint = "fast reaction '" + fastReactions_[static_cast<std::size_t>(j)]->id +
                      "' at equilibrium";
      sys_.rhs[static_cast<std::size_t>(fastSpecies[row])] =
          valueOf(fastReactions_[static_cast<std::size_t>(j)]->id);
      sys_.fastRateRow.push_back(fastSpecies[row]);
    }
    for (Eigen::Index k = 0; k < pools.L.rows(); ++k, ++row) {
      std::vector<Expr> total, slope;
      std::vector<std::pair<int, double>> coefficients;
      for (std::size_t c = 0; c < fastSpecies.size(); ++c) {
        const double l = pools.L(k, static_cast<Eigen::Index>(c));
        if (l == 0) continue;
        const auto i = static_cast<std::size_t>(fastSpecies[c]);
        coefficients.emplace_back(fastSpecies[c], l);
        total.push_back(pool_.mul(pool_.constant(l), amounts[c]));
        slope.push_back(pool_.mul(pool_.constant(l), pool_.add(slowTerms[i])));
      }
      const std::string id = "@pool" + std::to_string(k + 1);
      addState(id, StateKind::ConservedPool);
      sys_.rhs.push_back(pool_.add(slope));
      sys_.fastPools.push_back({sys_.numStates() - 1, coefficients});
      poolCoefficients_[sys_.numStates() - 1] = std::move(coefficients);
      auto& st = sys_.states[static_cast<std::size_t>(fastSpecies[row])];
      st.algebraic = true;
      st.byReactions = false;
      st.constraint = "conserved pool " + std::to_string(k + 1) + " of the fast reactions";
      sys_.rhs[static_cast<std::size_t>(fastSpecies[row])] =
          pool_.sub(pool_.add(total), sys_.states.back().symbol);
    }
  }

  // Numeric stoichiometry for conservation-law analysis: only when the coefficient does not vary
  // with time or state (parameters such as conversion factors are taken at their nominal values).
  void recordStoichiometry(int state, int reaction, Expr nu) {
    // The usual case, a number: no symbol table to scan (that scan per species reference made
    // this stage quadratic in model size).
    if (pool_.isConstant(nu)) {
      sys_.stoichiometry.push_back({state, reaction, pool_.node(nu).value});
      return;
    }
    bool constant = true;
    for (Expr s : pool_.dependencies(nu)) constant = constant && isParamSymbol(s);
    if (!constant) {
      sys_.stoichiometryIsConstant = false;
      return;
    }
    std::vector<double> values(pool_.numSymbols(), std::nan(""));
    for (const auto& p : sys_.params) values[pool_.node(p.symbol).symbol] = p.nominal;
    sys_.stoichiometry.push_back({state, reaction, pool_.evaluate(nu, values)});
  }
  bool isParamSymbol(Expr s) const {
    for (const auto& p : sys_.params)
      if (p.symbol == s) return true;
    return false;
  }

  // Values of every symbol, computed before rateOf is resolved so that a rateOf inside any of
  // them (not only inside f) is found.
  void computeAllValues() {
    for (const auto& [id, kind] : kind_)
      if (kind.first != SymKind::Local) valueOf(id);
  }

  // ---- events ------------------------------------------------------------------------------
  void buildEvents() {
    for (const auto& ev : m_.events) {
      EventDef d;
      d.id = ev.id;
      d.trigger = resolve(ev.trigger, ev.id);
      d.initialValue = ev.initialValue;
      d.persistent = ev.persistent;
      d.useValuesFromTriggerTime = ev.useValuesFromTriggerTime;
      if (ev.delay) d.delay = resolve(*ev.delay, ev.id);
      if (ev.priority) d.priority = resolve(*ev.priority, ev.id);
      for (const auto& a : ev.assignments) {
        const int i = stateIndex_.at(a.variable);
        const auto& st = sys_.states[static_cast<std::size_t>(i)];
        Expr scale = pool_.one();
        if (st.kind == StateKind::SpeciesAmount) {
          const auto& sp = species(st.id);
          if (!sp.hasOnlySubstanceUnits && !isZeroDimensional(sp.compartment))
            scale = compartmentValue(sp.compartment);
        }
        d.assignments.push_back({i, resolve(a.math, ev.id), scale});
      }
      for (const auto& a : ev.assignments) {
        if (kind_.at(a.variable).first != SymKind::Compartment) continue;
        for (const auto& st : sys_.states) {
          if (st.kind != StateKind::SpeciesConcentration || species(st.id).compartment != a.variable)
            continue;
          // Also when the event assigns the species: its value is a concentration in the old
          // size (suite case 01506), as for amount states (scale above).
          d.rescaled.push_back({stateIndex_.at(st.id), compartmentValue(a.variable)});
        }
      }
      sys_.events.push_back(std::move(d));
    }
  }
  // Every expression of every event, for passes that rewrite them all.
  template <class F>
  void forEachEventExpr(F&& f) {
    for (auto& d : sys_.events) {
      f(d.trigger);
      if (d.delay) f(*d.delay);
      if (d.priority) f(*d.priority);
      for (auto& a : d.assignments) {
        f(a.value);
        f(a.scale);
      }
      for (auto& r : d.rescaled) f(r.size);
    }
  }

  // rateOf(X) = Σ_j ∂value(X)/∂x_j · f_j + ∂value(X)/∂t, substituted until no rateOf remains;
  // a rate that depends on itself is an algebraic loop.
  void resolveRateOf() {
    std::map<Expr, std::string> placeholders;
    auto collect = [&](Expr e) {
      for (Expr s : pool_.dependencies(e)) {
        const std::string& name = pool_.symbolName(pool_.node(s).symbol);
        if (name.rfind("@rateOf:", 0) == 0) placeholders[s] = name.substr(8);
      }
    };
    for (Expr e : sys_.rhs) collect(e);
    for (const auto& [id, e] : value_) collect(e);
    forEachEventExpr([&](Expr& e) { collect(e); });
    if (placeholders.empty()) return;
    std::unordered_map<Expr, Expr> rate;
    for (const auto& [sym, id] : placeholders) {
      if (!kind_.count(id)) fail(id, "rateOf of undefined symbol '" + id + "'");
      rate[sym] = totalDerivative(valueOf(id));
    }
    for (std::size_t round = 0; round <= placeholders.size(); ++round) {
      bool pending = false;
      for (auto& [sym, e] : rate) {
        e = pool_.substitute(e, rate);
        for (const auto& [other, id] : placeholders) pending = pending || pool_.dependsOn(e, other);
      }
      if (!pending) break;
      if (round == placeholders.size())
        fail(placeholders.begin()->second, "rateOf forms an algebraic loop through '" +
                                                placeholders.begin()->second + "'");
    }
    // Before t0 a delayed rateOf(X) is ∂X/∂t alone: the states are frozen at x0 there.
    std::unordered_map<Expr, Expr> frozen;
    for (const auto& [sym, id] : placeholders) frozen[sym] = pool_.diff(valueOf(id), sys_.time);
    for (auto& e : sys_.rhs) e = pool_.substitute(withDelayHistoryBefore(pool_, e, frozen), rate);
    forEachEventExpr([&](Expr& e) {
      e = pool_.substitute(withDelayHistoryBefore(pool_, e, frozen), rate);
    });
    for (auto& [id, e] : value_) e = withDelayHistoryBefore(pool_, e, frozen);
    rateOf_ = std::move(rate);
  }

  Expr totalDerivative(Expr v) {
    std::vector<Expr> terms{pool_.diff(v, sys_.time)};
    for (std::size_t j = 0; j < sys_.states.size(); ++j) {
      const Expr d = pool_.diff(v, sys_.states[j].symbol);
      if (d != pool_.zero() && sys_.states[j].algebraic)
        throw UnsupportedFeature(m_.file, sys_.states[j].id,
                                 "rateOf of a quantity that depends on '" + sys_.states[j].id +
                                     "', which the " + sys_.states[j].constraint + " determines");
      if (d != pool_.zero()) terms.push_back(pool_.mul(d, sys_.rhs[j]));
    }
    return pool_.add(terms);
  }

  // ---- x(t0) ------------------------------------------------------------------------------
  Expr initialStateValue(const StateVar& st) {
    Expr x0 = initOf(st.id);
    if (st.kind == StateKind::SpeciesAmount) {
      const auto& sp = species(st.id);
      if (!sp.hasOnlySubstanceUnits && !isZeroDimensional(sp.compartment))
        x0 = pool_.mul(x0, initOf(sp.compartment));
    }
    return x0;
  }

  // The initial values with csymbol time kept (initialOverTime) of every state.
  std::vector<Expr> initialValuesOverTime() {
    std::swap(init_, initOverTime_);
    keepTimeInInit_ = true;
    std::vector<Expr> out;
    for (const auto& st : sys_.states) out.push_back(initialStateValue(st));
    keepTimeInInit_ = false;
    std::swap(init_, initOverTime_);
    return out;
  }

  void buildInitialValues() {
    for (const auto& st : sys_.states) {
      if (auto it = poolCoefficients_.find(static_cast<int>(sys_.initial.size()));
          it != poolCoefficients_.end()) {
        std::vector<Expr> terms;
        for (const auto& [i, l] : it->second)
          terms.push_back(pool_.mul(pool_.constant(l), sys_.initial[static_cast<std::size_t>(i)]));
        sys_.initial.push_back(pool_.add(terms));
        continue;
      }
      Expr x0 = initialStateValue(st);
      // An algebraic variable without a value in the file: any start will do for the
      // consistent-initial-value solve (dae_consistency.h); 1 avoids singular points at 0.
      if (st.algebraic && isParam(st.id) && pool_.isSymbol(x0) && x0 == paramSymbol(st.id) &&
          std::isnan(sys_.params[static_cast<std::size_t>(paramIndex_.at(st.id))].nominal))
        x0 = pool_.one();
      for (Expr s : pool_.dependencies(x0)) {
        const std::string& name = pool_.symbolName(pool_.node(s).symbol);
        if (name.rfind("@rateOf:", 0) == 0)
          throw UnsupportedFeature(m_.file, st.id, "rateOf in an initial value");
      }
      sys_.initial.push_back(x0);
    }
  }

  // ---- outputs ----------------------------------------------------------------------------
  Expr withRates(Expr e) { return rateOf_.empty() ? e : pool_.substitute(e, rateOf_); }


  void addOutput(const std::string& id, OutputKind kind, Expr value, Expr amount, Expr conc) {
    sys_.outputs.push_back({id, kind, withRates(value), withRates(amount), withRates(conc)});
  }

  void buildOutputs() {
    for (const auto& sp : m_.species) {
      const Expr v = valueOf(sp.id);
      const bool amountUnits = sp.hasOnlySubstanceUnits || isZeroDimensional(sp.compartment);
      const Expr size = compartmentValue(sp.compartment);
      Expr amount, conc;
      if (isState(sp.id) && sys_.states[static_cast<std::size_t>(stateIndex_.at(sp.id))].kind ==
                                StateKind::SpeciesAmount) {
        amount = stateSymbol(sp.id);
      } else {
        amount = amountUnits ? v : pool_.mul(v, size);
      }
      conc = isZeroDimensional(sp.compartment) ? amount : pool_.div(amount, size);
      addOutput(sp.id, OutputKind::Species, v, amount, conc);
    }
    for (const auto& c : m_.compartments) {
      const Expr v = compartmentValue(c.id);
      addOutput(c.id, OutputKind::Compartment, v, v, v);
    }
    for (const auto& p : m_.parameters) {
      const Expr v = valueOf(p.id);
      addOutput(p.id, OutputKind::Parameter, v, v, v);
    }
    for (const auto& [id, ref] : speciesRefs_) {
      const Expr v = valueOf(id);
      addOutput(id, OutputKind::SpeciesReference, v, v, v);
    }
    for (const auto& rx : m_.reactions) {
      const Expr v = valueOf(rx.id);
      addOutput(rx.id, OutputKind::Reaction, v, v, v);
    }
  }

  // A parameter without a value is an error only if something uses it.
  void checkParameterValues() {
    std::set<Expr> used;
    auto mark = [&](Expr e) {
      for (Expr s : pool_.dependencies(e)) used.insert(s);
    };
    for (Expr e : sys_.rhs) mark(e);
    for (Expr e : sys_.initial) mark(e);
    forEachEventExpr([&](Expr& e) { mark(e); });
    for (const auto& p : sys_.params) {
      if (std::isfinite(p.nominal) || !used.count(p.symbol)) continue;
      if (std::isnan(p.nominal))
        fail(p.id, std::string(toString(p.kind)) + " '" + p.id +
                       "' has no value (no value attribute, initial assignment or rule)");
      fail(p.id, std::string(toString(p.kind)) + " '" + p.id + "' has a non-finite value");
    }
  }

  const Model& m_;
  ExprPool& pool_;
  const FastReactionTreatment fast_;
  OdeSystem sys_;
  std::unordered_map<std::string, std::pair<SymKind, int>> kind_;
  std::map<std::string, const model::SpeciesReference*> speciesRefs_;
  std::unordered_map<std::string, Expr> assignment_, rateRule_, initialAssignment_;
  std::set<std::string> reactionDriven_, eventAssigned_;
  std::vector<const model::Rule*> algebraicRules_;
  std::map<std::string, const model::Rule*> determinedBy_;  // algebraic state → its rule
  std::vector<const model::Reaction*> fastReactions_;
  std::vector<OdeSystem::StoichEntry> fastStoichiometry_;  // (state, fast reaction #, coefficient)
  std::map<int, std::vector<std::pair<int, double>>> poolCoefficients_;  // pool state → Σ l·n
  std::unordered_map<std::string, int> stateIndex_, paramIndex_;
  std::unordered_map<std::string, Expr> value_, init_;
  std::unordered_map<std::string, Expr> initOverTime_;  // init_ with time kept (initialOverTime)
  bool keepTimeInInit_ = false;
  std::set<std::string> visiting_;
  std::unordered_map<Expr, Expr> rateOf_;
};

}  // namespace

// Rapid equilibrium is exact, so it is what the model is built for; the stiff surrogate comes
// along for the tasks to fall back on when the equilibrium turns degenerate during a run
// (CompiledModel::fastReactionSurrogate).
OdeSystem buildOdeSystem(const model::Model& model, FastReactionTreatment fast) {
  const bool hasFast = std::any_of(model.reactions.begin(), model.reactions.end(),
                                   [](const model::Reaction& rx) { return rx.fast; });
  OdeSystem sys = Builder(model, fast).build();
  if (hasFast && fast == FastReactionTreatment::Equilibrium && !sys.fastRateRow.empty())
    sys.fastSurrogate = std::make_shared<const OdeSystem>(
        Builder(model, FastReactionTreatment::StiffSurrogate).build());
  return sys;
}

}  // namespace sensode::symbolic
