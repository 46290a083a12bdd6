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
  // Γ in RREF, one row per law, columns in the order of the species passed in.
  Eigen::MatrixXd gamma;
  std::vector<int> dependent;    // column index of each law's pivot (dependent species), per row
  std::vector<int> independent;  // the remaining columns, ascending
  bool exact = true;             // computed in exact rational arithmetic (else numeric+verified)
  int count() const { return static_cast<int>(gamma.rows()); }

  // Human-readable laws, e.g. "E + C = T0" for the report, using the given species ids.
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
// subtraction with less cancellation). Throws sensode::Error if the result fails verification.
ConservationLaws findConservationLaws(const Eigen::MatrixXd& stoichiometry,
                                      const std::vector<double>& abundance = {});

}  // namespace sensode::model
