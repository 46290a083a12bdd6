// SPDX-License-Identifier: MIT
#include "core/integrators/dense_lu.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

// One clone per instruction set, chosen once by the dynamic loader (an ifunc): AVX2's FMAs do
// four multiply-adds in one instruction where the baseline's SSE2 needs four for two.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define SENSODE_DENSE_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SENSODE_DENSE_KERNEL
#endif

namespace sensode::integrators::detail {

namespace {

constexpr int kBlock = 4;

inline double* column(double* a, int n, int j) { return a + static_cast<std::ptrdiff_t>(j) * n; }
inline const double* column(const double* a, int n, int j) {
  return a + static_cast<std::ptrdiff_t>(j) * n;
}

}  // namespace

SENSODE_DENSE_KERNEL bool denseLuFactor(double* a, int n, int* pivots, double* invDiag) {
  double maxPivot = 0;
  for (int k0 = 0; k0 < n; k0 += kBlock) {
    const int kb = std::min(k0 + kBlock, n);
    // The panel, columns k0 … kb−1, unblocked; the row interchanges swap whole rows.
    for (int k = k0; k < kb; ++k) {
      double* colK = column(a, n, k);
      double best = 0;
      for (int i = k; i < n; ++i) best = std::max(best, std::abs(colK[i]));  // vectorises
      if (!(best > 0) || !(best <= std::numeric_limits<double>::max())) return false;
      int p = k;
      while (p + 1 < n && std::abs(colK[p]) != best) ++p;
      maxPivot = std::max(maxPivot, best);
      pivots[k] = p;
      if (p != k) {
        for (int j = 0; j < n; ++j) std::swap(column(a, n, j)[k], column(a, n, j)[p]);
      }
      const double inv = 1.0 / colK[k];
      for (int i = k + 1; i < n; ++i) colK[i] *= inv;
      for (int j = k + 1; j < kb; ++j) {
        double* colJ = column(a, n, j);
        const double akj = colJ[k];
        if (akj == 0) continue;  // (see the zero test below)
        for (int i = k + 1; i < n; ++i) colJ[i] -= colK[i] * akj;
      }
    }
    if (kb - k0 < kBlock || kb == n) continue;
    // Each column j right of the panel: its four rows of U (the 4 × 4 unit lower solve, written
    // out), then its rows below the panel less L's four columns times them. A column whose four
    // rows of U are zero is left as it is: subtracting zeros changes no value (|l_ik| ≤ 1, so no
    // 0·∞; at most a zero entry keeps the sign that −0 − (±0) would have changed), and in the
    // sparse Newton matrices of biochemical networks many columns are such. Measured
    // on 1000 of the discrete adjoint's matrices each, µs per factorisation: Alkan's block of
    // 30 1.8–2.0 → 1.37–1.46, Laske's block of 26 1.19–1.23 → 0.68–0.69, Bachmann's 25 states
    // 1.25–1.36 → 0.95–1.22.
    const double* l0 = column(a, n, k0);
    const double* l1 = l0 + n;
    const double* l2 = l1 + n;
    const double* l3 = l2 + n;
    const double l10 = l0[k0 + 1], l20 = l0[k0 + 2], l30 = l0[k0 + 3];
    const double l21 = l1[k0 + 2], l31 = l1[k0 + 3], l32 = l2[k0 + 3];
    // Column j's four rows of U, written back; false when all four are zero.
    const auto upperRows = [&](double* c, double u[4]) {
      u[0] = c[k0];
      u[1] = c[k0 + 1] - l10 * u[0];
      u[2] = c[k0 + 2] - l20 * u[0] - l21 * u[1];
      u[3] = c[k0 + 3] - l30 * u[0] - l31 * u[1] - l32 * u[2];
      c[k0 + 1] = u[1];
      c[k0 + 2] = u[2];
      c[k0 + 3] = u[3];
      return u[0] != 0 || u[1] != 0 || u[2] != 0 || u[3] != 0;
    };
    const auto update = [&](double* __restrict c, const double u[4]) {
      for (int i = kb; i < n; ++i)
        c[i] -= l0[i] * u[0] + l1[i] * u[1] + l2[i] * u[2] + l3[i] * u[3];
    };
    double* pending = nullptr;  // a column to update, waiting for a second to share L's loads
    double pu[4];  // its rows of U
    for (int j = kb; j < n; ++j) {
      double* c = column(a, n, j);
      double u[4];
      if (!upperRows(c, u)) continue;
      if (pending == nullptr) {
        pending = c;
        std::copy(u, u + 4, pu);
        continue;
      }
      double* __restrict e = pending;  // two columns share the loads of L's four
      double* __restrict f = c;
      for (int i = kb; i < n; ++i) {
        e[i] -= l0[i] * pu[0] + l1[i] * pu[1] + l2[i] * pu[2] + l3[i] * pu[3];
        f[i] -= l0[i] * u[0] + l1[i] * u[1] + l2[i] * u[2] + l3[i] * u[3];
      }
      pending = nullptr;
    }
    if (pending != nullptr) update(pending, pu);
  }
  for (int k = 0; k < n; ++k) {
    const double ukk = column(a, n, k)[k];
    if (!(std::abs(ukk) > std::numeric_limits<double>::epsilon() * maxPivot) ||
        !std::isfinite(ukk)) {
      return false;
    }
    invDiag[k] = 1.0 / ukk;
  }
  return true;
}

SENSODE_DENSE_KERNEL void denseLuSolve(const double* lu, int n, const int* pivots,
                                       const double* invDiag, double* x) {
  for (int k = 0; k < n; ++k) {
    if (pivots[k] != k) std::swap(x[k], x[pivots[k]]);
  }
  const int blocked = n / kBlock * kBlock;
  for (int k0 = 0; k0 < blocked; k0 += kBlock) {  // L y = P b, four columns at a time
    const double* l0 = column(lu, n, k0);
    const double* l1 = l0 + n;
    const double* l2 = l1 + n;
    const double* l3 = l2 + n;
    const double x0 = x[k0], x1 = x[k0 + 1] - l0[k0 + 1] * x0,
                 x2 = x[k0 + 2] - l0[k0 + 2] * x0 - l1[k0 + 2] * x1,
                 x3 = x[k0 + 3] - l0[k0 + 3] * x0 - l1[k0 + 3] * x1 - l2[k0 + 3] * x2;
    x[k0 + 1] = x1;
    x[k0 + 2] = x2;
    x[k0 + 3] = x3;
    for (int i = k0 + kBlock; i < n; ++i) x[i] -= l0[i] * x0 + l1[i] * x1 + l2[i] * x2 + l3[i] * x3;
  }
  for (int k = blocked; k < n; ++k) {
    const double* l = column(lu, n, k);
    for (int i = k + 1; i < n; ++i) x[i] -= l[i] * x[k];
  }
  for (int k = n; k-- > blocked;) {  // U x = y: the rows past the last whole block first
    const double* u = column(lu, n, k);
    x[k] *= invDiag[k];
    for (int i = 0; i < k; ++i) x[i] -= u[i] * x[k];
  }
  for (int k0 = blocked - kBlock; k0 >= 0; k0 -= kBlock) {
    const double* u0 = column(lu, n, k0);
    const double* u1 = u0 + n;
    const double* u2 = u1 + n;
    const double* u3 = u2 + n;
    const double x3 = x[k0 + 3] * invDiag[k0 + 3];
    const double x2 = (x[k0 + 2] - u3[k0 + 2] * x3) * invDiag[k0 + 2];
    const double x1 = (x[k0 + 1] - u3[k0 + 1] * x3 - u2[k0 + 1] * x2) * invDiag[k0 + 1];
    const double x0 = (x[k0] - u3[k0] * x3 - u2[k0] * x2 - u1[k0] * x1) * invDiag[k0];
    x[k0] = x0;
    x[k0 + 1] = x1;
    x[k0 + 2] = x2;
    x[k0 + 3] = x3;
    for (int i = 0; i < k0; ++i) x[i] -= u0[i] * x0 + u1[i] * x1 + u2[i] * x2 + u3[i] * x3;
  }
}

void denseLuSolveRows(const double* lu, int n, const int* pivots, const double* invDiag,
                      double* t, int width) {
  const auto size = static_cast<std::size_t>(n), w = static_cast<std::size_t>(width);
  for (std::size_t k = 0; k < size; ++k) {
    const auto p = static_cast<std::size_t>(pivots[k]);
    if (p != k) std::swap_ranges(t + k * w, t + (k + 1) * w, t + p * w);
  }
  for (std::size_t k = 0; k < size; ++k) {  // L Y = P B (unit diagonal)
    const double* yk = t + k * w;
    const double* colK = lu + k * size;
    for (std::size_t i = k + 1; i < size; ++i) {
      const double l = colK[i];
      double* yi = t + i * w;
      for (std::size_t j = 0; j < w; ++j) yi[j] -= l * yk[j];
    }
  }
  for (std::size_t k = size; k-- > 0;) {  // U X = Y
    double* xk = t + k * w;
    const double d = invDiag[k];
    for (std::size_t j = 0; j < w; ++j) xk[j] *= d;
    const double* colK = lu + k * size;
    for (std::size_t i = 0; i < k; ++i) {
      const double u = colK[i];
      double* xi = t + i * w;
      for (std::size_t j = 0; j < w; ++j) xi[j] -= u * xk[j];
    }
  }
}

}  // namespace sensode::integrators::detail
