// SPDX-License-Identifier: MIT
// odeSD: dense output (§2.7): quintic Hermite on non-stiff steps, an implicit sub-step of the same
// rule on stiff ones.
#include "core/integrators/odesd_impl.h"

#include <algorithm>

namespace sensode::integrators {

void OdeSdIntegrator::Impl::dense(double tq, double* out, double* outS) {
  const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
  const bool withS = sens && outS != nullptr;
  if (tq == t || history == 0) {
    std::copy(x.begin(), x.end(), out);
    if (withS) std::copy(S.begin(), S.begin() + static_cast<long>(len), outS);
    return;
  }
  const double th = (tq - tPrev) / hm1;
  if (zLast >= sd.denseSwitch) {
    SubStepMemo& memo = subStepMemo;
    if (memo.generation != stepGeneration) {
      memo.generation = stepGeneration;
      memo.count = 0;
    }
    const auto un = static_cast<std::size_t>(n);
    if (!withS) {
      for (std::size_t k = 0; k < memo.count; ++k) {
        if (memo.tq[k] != tq) continue;
        std::copy_n(memo.x.begin() + static_cast<long>(k * un), n, out);
        return;
      }
    }
    if (subStep(th, out, outS)) {
      if (memo.count < SubStepMemo::kEntries) {
        memo.tq[memo.count] = tq;
        std::copy_n(out, n, memo.x.begin() + static_cast<long>(memo.count * un));
        ++memo.count;
      }
      return;
    }
  }
  hermite(th, out);
  if (withS) {
    const auto k = odesd::hermiteDense(th);
    const double h2 = hm1 * hm1;
    for (size_t i = 0; i < len; ++i) {
      outS[i] = k.x0 * Sm1[i] + k.x1 * S[i] + hm1 * (k.f0 * Sdm1[i] + k.f1 * Sd[i]) +
                h2 * (k.a0 * Sddm1[i] + k.a1 * Sdd[i]);
    }
  }
}

void OdeSdIntegrator::Impl::hermite(double th, double* out) const {
  const auto k = odesd::hermiteDense(th);
  const double h2 = hm1 * hm1;
  for (int i = 0; i < n; ++i) {
    out[i] = k.x0 * xm1[i] + k.x1 * x[i] + hm1 * (k.f0 * fm1[i] + k.f1 * f[i]) +
             h2 * (k.a0 * am1[i] + k.a1 * a[i]);
  }
}

bool OdeSdIntegrator::Impl::subStep(double th, double* out, double* outS) {
  const double hs = th * hm1, tq = tPrev + hs;
  const double c1 = hs / 2, c2 = hs * hs / 12;
  for (int i = 0; i < n; ++i) c[i] = xm1[i] + c1 * fm1[i] + c2 * am1[i];
  weights(xm1.data(), x.data(), w.data());
  luAtFrontier = false;
  bool converged = false, factored = false;
  for (int attempt = 0; attempt < 3 && !converged; ++attempt) {
    bool haveFA = false;
    if (attempt == 0) {
      hermite(th, out);
      if (firstNonFinite(out, n) >= 0) continue;
      // The Hermite value is often already the sub-step's solution: its residual G of the rule
      // within the Newton tolerance leaves an error W⁻¹G no larger (W = I − (θh/2)J +
      // (θh²/12)J_J ≈ I on non-stiff components, and it only damps dissipative stiff ones), so
      // it is kept without an LU of W(θh). Otherwise Newton starts from it with these f and ẍ
      // (no extra evaluation). Measured (bench_integrators, rtol 1e-6): LUs 0.63 → 0.53× and
      // Newton iterations 1.19 → 1.07× of the fresh-every-attempt scheme, errors unchanged;
      // Blasi 132 → 93 LU. With sensitivities too: W_s below is built at the kept x with a
      // fresh J, so the Newton's own LU of W(θh) (kept J) would be a second one (Zheng, 101
      // output times to t = 100: LU 556 → 456; dS/dp within 1.4e-10 of the column maxima).
      {
        if (!evalFA(tq, out, fy.data(), ay.data())) continue;
        for (int i = 0; i < n; ++i) g[i] = c[i] + c1 * fy[i] - c2 * ay[i] - out[i];
        if (wnorm(g.data(), w.data(), n) <= newtonTolerance()) {
          converged = true;
          break;
        }
        // The raw G overstates stiff components by W(θh) ~ (θhλ)²/12; filtered through the
        // step's LU (denseTolerance, no new LU) the Hermite value passes far more often: Blasi
        // 93 → 32 LU, Beer 778 → 667, errors within the bench's scatter (2026-11-26c).
        if (sd.denseTolerance > 0 && stepLuSize > 0) {
          std::copy(g.begin(), g.end(), gFiltered.begin());
          lu.solve(gFiltered.data());
          const double r = std::min(1.0, hs / stepLuSize);
          if (wnorm(gFiltered.data(), w.data(), n) <= sd.denseTolerance * r * r) {
            converged = true;
            break;
          }
        }
        haveFA = true;
      }
    } else {
      for (int i = 0; i < n; ++i) out[i] = xm1[i] + th * (x[i] - xm1[i]);
    }
    if (attempt == 2) {
      jacKept = false;  // jv, jjv no longer match the steps' kept W
      if (!evalJacobians(tq, out, jv.data(), jjv.data(), true)) break;
      factored = false;
    }
    if (!factored && !(factored = factorW(hs, jv.data(), jjv.data(), luDense))) continue;
    converged = newton(tq, hs, out, newtonTolerance(), 6, luDense, haveFA).converged;
  }
  if (!converged) {
    cause = {};
    return false;
  }
  if (sens && outS != nullptr) {
    jacKept = false;
    if (!evalJacobians(tq, out, jv.data(), jjv.data())) return false;
    if (!evalParamDerivatives(tq, out, jv.data())) return false;
    if (!factorW(hs, jv.data(), jjv.data(), luDense)) return false;
    const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
    for (size_t k = 0; k < len; ++k) {
      outS[k] = Sm1[k] + c1 * (Sdm1[k] + FP[k]) + c2 * (Sddm1[k] - AP[k]);
    }
    luDense.solve(outS, ns);
  }
  return true;
}

}  // namespace sensode::integrators
