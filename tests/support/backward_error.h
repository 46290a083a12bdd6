// SPDX-License-Identifier: MIT
// The normwise backward error of solutions of A X = B, for tests of the linear solvers
// (tst_odesd_linear_solvers, tst_block_dense_lu): what partial pivoting guarantees in practice is
// a backward error of a small multiple of ε, whatever the conditioning of A.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace sensode::test {

// max over the columns of ‖A x − b‖∞ / (‖A‖∞ ‖x‖∞); A column-major n × n, X and B n × nrhs.
inline double backwardError(const std::vector<double>& a, const std::vector<double>& x,
                            const std::vector<double>& b, int n, int nrhs) {
  const auto un = static_cast<std::size_t>(n);
  double normA = 0;
  for (std::size_t i = 0; i < un; ++i) {
    double row = 0;
    for (std::size_t j = 0; j < un; ++j) row += std::abs(a[j * un + i]);
    normA = std::max(normA, row);
  }
  double worst = 0;
  for (std::size_t c = 0; c < static_cast<std::size_t>(nrhs); ++c) {
    double residual = 0, normX = 0;
    for (std::size_t i = 0; i < un; ++i) {
      double r = -b[c * un + i];
      for (std::size_t j = 0; j < un; ++j) r += a[j * un + i] * x[c * un + j];
      residual = std::max(residual, std::abs(r));
      normX = std::max(normX, std::abs(x[c * un + i]));
    }
    worst = std::max(worst, residual / (normA * normX));
  }
  return worst;
}

}  // namespace sensode::test
