// SPDX-License-Identifier: MIT
// The pieces of the ODE builder that turn algebraic rules and fast reactions into a semi-explicit
// differential-algebraic system (docs/dae.md): which variable each algebraic rule determines (a
// maximum bipartite matching, as SBML's "the model must not be overdetermined" requires),
// whether a rule is linear in that variable with a constant coefficient (then it becomes an
// assignment rule and the system stays an ODE), and the conserved pools a set of fast
// reactions implies (the left null space of their stoichiometry).
#pragma once

#include <Eigen/Dense>

#include <optional>
#include <vector>

#include "core/symbolic/expression.h"

namespace sensode::symbolic {

// Rule r may determine the candidates candidatesOf[r] (indices into one list of variables, in the
// order of preference). Returns for every rule the candidate it determines, or -1 when no
// complete matching exists for that rule (the model is overdetermined there). Kuhn's augmenting
// paths: rules keep their preferred candidate whenever a complete matching allows it.
std::vector<int> matchRulesToVariables(const std::vector<std::vector<int>>& candidatesOf,
                                       int numCandidates);

// When e = a·z + r with a a non-zero number and r independent of z (z reached only through sums
// and through products with one factor depending on z), the solution z = −r/a; else nullopt.
// Conditions (piecewise, relationals) and functions of z are never solved for.
std::optional<Expr> solveLinear(ExprPool& pool, Expr e, Expr z);

// Conserved pools of the species a set of fast reactions changes: with N the stoichiometry
// (species × fast reactions), the rows of L span {l : l·N = 0}, so d(L·x)/dt is untouched by
// the fast reactions. `rank` is rank(N); L has rows() = N.rows() − rank. Coefficients below
// 1e-12 of the largest are set to zero.
struct ConservedPools {
  Eigen::MatrixXd L;
  int rank = 0;
};
ConservedPools conservedPools(const Eigen::MatrixXd& N);

}  // namespace sensode::symbolic
