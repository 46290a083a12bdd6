// SPDX-License-Identifier: MIT
// ODE systems built by hand (no SBML) for the integrator and sensitivity tests: a small builder
// and the NUMERICS.md §11 catalogue (decay, Michaelis–Menten, Robertson, the repressilator, the
// stiff linear pair, Chua's circuit) with the parameters and initial values §11 tabulates.
// States are species amounts reported as their own values; parameters are global parameters
// unless a kind is given.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>

#include "core/symbolic/compiled_model.h"
#include "core/symbolic/expression.h"
#include "core/symbolic/ode_system.h"

namespace sensode::testing {

using HandBuiltModel = std::shared_ptr<const symbolic::CompiledModel>;

class SystemBuilder {
 public:
  SystemBuilder();
  symbolic::ExprPool& e() { return *sys_.pool; }
  symbolic::Expr t() const { return sys_.time; }
  symbolic::Expr c(double v) { return sys_.pool->constant(v); }

  symbolic::Expr param(const std::string& id, double nominal,
                       symbolic::ParamKind kind = symbolic::ParamKind::GlobalParameter);
  symbolic::Expr state(const std::string& id, symbolic::Expr initial);
  symbolic::Expr state(const std::string& id, double initial) { return state(id, c(initial)); }
  // Sets d(state)/dt; a symbol that is not a state fails the running test.
  void rhs(symbolic::Expr stateSymbol, symbolic::Expr f);
  void output(const symbolic::OutputVar& o) { sys_.outputs.push_back(o); }
  HandBuiltModel compile();

 private:
  symbolic::OdeSystem sys_;
};

// n-ary product and sum.
symbolic::Expr mul(symbolic::ExprPool& e, std::initializer_list<symbolic::Expr> f);
symbolic::Expr add(symbolic::ExprPool& e, std::initializer_list<symbolic::Expr> f);

HandBuiltModel decayModel();            // x' = −k x, x(0) = 2, k = 0.7
HandBuiltModel michaelisMentenModel();  // E + S ⇌ C → E + P, k = (1e3, 1e2, 1)
HandBuiltModel robertsonModel();        // k = (0.04, 1e4, 3e7), y(0) = (1, 0, 0)
HandBuiltModel repressilatorModel();    // alpha0 0.216, alpha 216, beta 5, n 2
HandBuiltModel linear2Model();          // y0' = −p0 y0 + p1 y1, y1' = −p1 y1; p = (1000, 1)
HandBuiltModel chuaModel();             // p1 = 7, p2 = 15, x(0) = (0, 0, −0.1)

}  // namespace sensode::testing
