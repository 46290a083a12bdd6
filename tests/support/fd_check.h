// SPDX-License-Identifier: MIT
// Finite-difference checker for every derivative a CompiledModel provides (Ceres'
// GradientChecker idea): each sparse quantity is compared entry by entry with central
// differences of the quantity it differentiates, and entries outside the sparsity pattern must
// be zero by finite differences too (the pattern is complete).
#pragma once

#include <string>
#include <vector>

#include "core/symbolic/compiled_model.h"

namespace sensode::test {

struct FdMismatch {
  std::string quantity;  // "J", "fp", "a", "JJ", "ap", "S0", "ft"
  int row = 0, col = 0;
  double analytic = 0, finiteDifference = 0;
  std::string describe(const symbolic::CompiledModel& m) const;
};

struct FdReport {
  long entriesChecked = 0;
  std::vector<FdMismatch> mismatches;
};

// Checks the derivatives at (t, x, p). Entries agree when
// |analytic − fd| ≤ atol·scale + rtol·|fd| with scale the magnitude of the row's values; an
// entry that disagrees is re-tried with a smaller step (kinks of piecewise functions) before it
// counts as a mismatch.
FdReport checkDerivatives(const symbolic::CompiledModel& model, double t,
                          const std::vector<double>& x, const std::vector<double>& p,
                          double rtol = 1e-5, double atol = 1e-7);

// A point near the initial state where all states are comfortably non-zero, deterministic.
std::vector<double> samplePoint(const symbolic::CompiledModel& model, const std::vector<double>& p,
                                unsigned seed);

}  // namespace sensode::test
