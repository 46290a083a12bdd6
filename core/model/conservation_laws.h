// SPDX-License-Identifier: MIT
// Conservation laws (moieties): the left null space Γ of the stoichiometry N of the species
// reactions change, Γ·N = 0, computed exactly (fraction-free rational elimination, vectors scaled
// to coprime integers, RREF) with a verified numeric fallback when stoichiometries are not
// rational. The RREF pivots are the dependent species; a reduced state keeps only the
// independent ones: x_D = T − Γ_I·x_I with totals T = Γ·x₀. NUMERICS.md §8.2.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Dense>

namespace sensode::model {

struct ConservationLaws {
  // Γ (count × species), columns in the order of the species passed in. In RREF with respect to
  // the elimination order (descending abundance, ties in species order): row i has 1 at its
  // dependent species, 0 at the other laws' dependent species and at every species before it in
  // that order. Rows are sorted by that position. Exact path: entries are rationals a/b
  // (|a|, b < 2³⁰) rounded to double once.
  Eigen::MatrixXd gamma;
  std::vector<int> dependent;    // column index of each law's pivot (dependent species), per row
  std::vector<int> independent;  // the remaining columns, ascending
  bool exact = true;             // verified Γ·N = 0 in exact integer arithmetic (else numeric,
                                 // verified to ‖Γ·N‖ ≤ 1e-10·‖|Γ|·|N|‖)
  int count() const { return static_cast<int>(gamma.rows()); }

  // Human-readable laws, one per row, e.g. "E + C" or "2 A - B + C": the dependent species first,
  // then the others in species order; coefficients are the row scaled to coprime integers when
  // it is rational, else decimals. Missing ids print as x<index>. The report appends "= T0" etc.
  std::vector<std::string> describe(const std::vector<std::string>& ids) const;
  // Totals T = Γ·x.
  Eigen::VectorXd totals(const Eigen::VectorXd& x) const;
  // x_I from a full x.
  Eigen::VectorXd reduce(const Eigen::VectorXd& x) const;
  // Full x from x_I and totals: x_D = T − Γ_I x_I.
  Eigen::VectorXd expand(const Eigen::VectorXd& xIndependent, const Eigen::VectorXd& totals) const;
};

// N is species × reactions. `abundance` (optional, same length as rows) orders the columns before
// elimination so that abundant species become dependent first (they are recovered by
// subtraction with less cancellation). A species in no reaction is its own law (unit row); with
// no reactions Γ = I. Throws sensode::Error for a non-finite N, an abundance of the wrong length,
// or a result that fails verification.
ConservationLaws findConservationLaws(const Eigen::MatrixXd& stoichiometry,
                                      const std::vector<double>& abundance = {});

}  // namespace sensode::model
