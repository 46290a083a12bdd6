// SPDX-License-Identifier: MIT
// odeSD: staggered direct sensitivities (§3): S, Ṡ = J S + f_p, S̈ = J_J S + a_p after each
// converged step, with their error estimate.
#include "core/integrators/odesd_impl.h"

#include <tuple>

namespace sensode::integrators {

void OdeSdIntegrator::Impl::allocateSensitivities() {
  const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
  for (auto* v : {&S, &Sd, &Sdd, &Sm1, &Sdm1, &Sddm1, &S1, &Sd1, &Sdd1, &FP, &AP, &DS,
                  &sOut, &rowMajorX, &rowMajorJ, &rowMajorJJ}) {
    v->assign(len, 0.0);
  }
  fpv.assign(static_cast<size_t>(model->paramJacobianPattern().nnz()), 0.0);
  apv.assign(static_cast<size_t>(model->secondParamJacobianPattern().nnz()), 0.0);
  jv1.assign(jv.size(), 0.0);
  jjv1.assign(jjv.size(), 0.0);
  ++jacobianWrites;  // jv1 zeroed
  lu.reserveRightHandSides(ns);
  luDense.reserveRightHandSides(ns);
}

bool OdeSdIntegrator::Impl::evalParamDerivatives(double tt, const double* xx,
                                                  const double* jvals) {
  model->paramJacobian(std::min(tt, evalTimeLimit), xx, p.data(), fpv.data());
  model->secondParamJacobian(std::min(tt, evalTimeLimit), xx, p.data(), jvals, fpv.data(),
                             apv.data());
  ++own.sensitivityRhsEvals;
  for (auto [pat, vals, out] : {std::tuple{&model->paramJacobianPattern(), fpv.data(), FP.data()},
                                std::tuple{&model->secondParamJacobianPattern(), apv.data(), AP.data()}}) {
    if (const auto bad = scatterColumns(*pat, vals, out); bad.first >= 0) {
      cause = {Cause::Kind::NonFiniteParam, bad.first, bad.second, tt};
      return false;
    }
  }
  return true;
}

std::pair<int, int> OdeSdIntegrator::Impl::scatterColumns(const symbolic::SparsePattern& pat,
                                                         const double* vals, double* out) const {
  // Only the pattern's entries: the rest of `out` is zero since allocateSensitivities() and no
  // one else writes it (filling the n × ns block each time cost as much as the scatter). The
  // finiteness check rides along, over the selected columns' entries only.
  double nonFinite = 0;
  for (int j = 0; j < ns; ++j) {
    const int col = paramIdx[static_cast<size_t>(j)];
    double* o = out + static_cast<size_t>(j) * static_cast<size_t>(n);
    for (int k = pat.colPtr[static_cast<size_t>(col)]; k < pat.colPtr[static_cast<size_t>(col) + 1];
         ++k) {
      o[pat.rowIdx[static_cast<size_t>(k)]] = vals[k];
      nonFinite += 0.0 * vals[k];
    }
  }
  if (nonFinite == 0) return {-1, -1};
  for (int j = 0; j < ns; ++j) {
    const int col = paramIdx[static_cast<size_t>(j)];
    for (int k = pat.colPtr[static_cast<size_t>(col)]; k < pat.colPtr[static_cast<size_t>(col) + 1];
         ++k) {
      if (!std::isfinite(vals[k])) return {pat.rowIdx[static_cast<size_t>(k)], col};
    }
  }
  return {-1, -1};
}

namespace {

// outT += M·XT on row-major n × ns blocks: each entry of M updates one contiguous row of ns
// values from another, a loop the compiler vectorises.
void addSparseTimesRowMajor(const symbolic::SparsePattern& pat, const double* mvals,
                            const double* XT, int ns, double* outT) {
  const auto width = static_cast<size_t>(ns);
  for (int j = 0; j < pat.cols; ++j) {
    const double* xj = XT + static_cast<size_t>(j) * width;
    for (int k = pat.colPtr[static_cast<size_t>(j)]; k < pat.colPtr[static_cast<size_t>(j) + 1];
         ++k) {
      const double v = mvals[k];
      double* o = outT + static_cast<size_t>(pat.rowIdx[static_cast<size_t>(k)]) * width;
      for (size_t s = 0; s < width; ++s) o[s] += v * xj[s];
    }
  }
}

}  // namespace

void OdeSdIntegrator::Impl::sensitivityDerivatives(const double* jvals, const double* jjvals,
                                                   const double* X, double* outJ,
                                                   double* outJJ) {
  // Ṡ = J S + f_p and S̈ = J_J S + a_p, the products in row-major layout: a column-major product
  // walks M's index arrays once per parameter, one scattered update per entry (35 % of Zheng's
  // sensitivity run in the profile of 2026-11-28), while here each entry of M is read once and
  // updates ns contiguous values (Zheng, 62 parameters: the sensitivity run 0.82×; models with
  // fewer parameters per state unchanged). Each sum starts from f_p or a_p and takes M's entries
  // in the column-major product's order, so the results are that product's to the bit.
  const auto rows = static_cast<size_t>(n), width = static_cast<size_t>(ns);
  for (size_t s = 0; s < width; ++s) {
    const size_t off = s * rows;
    for (size_t i = 0; i < rows; ++i) {
      rowMajorX[i * width + s] = X[off + i];
      rowMajorJ[i * width + s] = FP[off + i];
      rowMajorJJ[i * width + s] = AP[off + i];
    }
  }
  addSparseTimesRowMajor(model->jacobianPattern(), jvals, rowMajorX.data(), ns, rowMajorJ.data());
  addSparseTimesRowMajor(model->jacobianOfSecondPattern(), jjvals, rowMajorX.data(), ns,
                         rowMajorJJ.data());
  for (size_t s = 0; s < width; ++s) {
    const size_t off = s * rows;
    for (size_t i = 0; i < rows; ++i) {
      outJ[off + i] = rowMajorJ[i * width + s];
      outJJ[off + i] = rowMajorJJ[i * width + s];
    }
  }
}

void OdeSdIntegrator::Impl::startSensitivities() {
  // Ṡ0 = J0 S0 + f_p,0, S̈0 = J_J,0 S0 + a_p,0.
  // Right-hand limits at t0, like f0 and a0 (see rightOf).
  if (!evalJacobians(rightOf(t), x.data(), jv1.data(), jjv1.data()) ||
      !evalParamDerivatives(rightOf(t), x.data(), jv1.data())) {
    cause.t = t;
    fail(plain(cause), t, 0, technical(cause) + " (at the start of the integration)");
  }
  sensitivityDerivatives(jv1.data(), jjv1.data(), S.data(), Sd.data(), Sdd.data());
  for (const std::vector<double>* v : {&Sd, &Sdd}) {
    if (const int k = firstNonFinite(v->data(), n * ns); k >= 0) {
      cause = {Cause::Kind::NonFiniteSens, k % n, paramIdx[static_cast<size_t>(k / n)], t};
      fail(plain(cause), t, 0, technical(cause) + " (at the start of the integration)");
    }
  }
  jacobiansAtFrontier = true;  // J(x0) can serve as the first Newton Jacobian
  luAtFrontier = false;
}

double OdeSdIntegrator::Impl::sensitivityStep(double tNew, double hs, int q) {
  if (!evalJacobians(tNew, y.data(), jv1.data(), jjv1.data())) return kInf;
  if (!evalParamDerivatives(tNew, y.data(), jv1.data())) return kInf;
  if (!factorW(hs, jv1.data(), jjv1.data())) return kInf;
  const auto len = static_cast<size_t>(n) * static_cast<size_t>(ns);
  const double c1 = hs / 2, c2 = hs * hs / 12;
  for (size_t k = 0; k < len; ++k) {
    S1[k] = S[k] + c1 * (Sd[k] + FP[k]) + c2 * (Sdd[k] - AP[k]);
  }
  lu.solve(S1.data(), ns);
  sensitivityDerivatives(jv1.data(), jjv1.data(), S1.data(), Sd1.data(), Sdd1.data());
  // D_S with the same coefficients as the states, ε_S = W_s⁻¹ D_S. The same pass checks that
  // S1, Ṡ1, S̈1 are finite: 0·v is 0 for finite v and NaN otherwise (one pass over the n × ns
  // block instead of three scans).
  double nonFinite = 0;
  if (q == 5) {
    const auto k = odesd::errorWeights(hs / hm1);
    const double h2 = hs * hs;
    for (size_t i = 0; i < len; ++i) {
      nonFinite += 0.0 * (S1[i] + Sd1[i] + Sdd1[i]);
      DS[i] = k.dx * (S[i] - Sm1[i]) + hs * (k.f0 * Sd[i] + k.f1 * Sd1[i]) +
              h2 * (k.a0 * Sdd[i] + k.a1 * Sdd1[i]);
    }
  } else {
    const double h2 = hs * hs / 2;
    for (size_t i = 0; i < len; ++i) {
      nonFinite += 0.0 * (S1[i] + Sd1[i] + Sdd1[i]);
      DS[i] = S1[i] - (S[i] + hs * Sd[i] + h2 * Sdd[i]);
    }
  }
  if (nonFinite != 0 || !std::isfinite(nonFinite)) {
    cause = {Cause::Kind::NonFiniteSens, -1, -1, tNew};
    for (size_t i = 0; i < len; ++i) {
      if (!std::isfinite(S1[i] + Sd1[i] + Sdd1[i])) {
        cause.row = static_cast<int>(i % static_cast<size_t>(n));
        cause.col = paramIdx[i / static_cast<size_t>(n)];
        break;
      }
    }
    return kInf;
  }
  // Without S in the error test ε_S is not needed: skip its solve and norm.
  if (!sensErrorControl) return 0;
  lu.solve(DS.data(), ns);
  // max over columns of the weighted RMS norm, weights rtol·max(|S|, |S1|) + atol/p̄ with
  // p̄ = |p| (1 for p = 0): CVODES's CVodeSensEEtolerances, i.e. the states' tolerances applied
  // to p·S, the change of x that a relative change of p makes. A plain atol on S asks for
  // 1e-12 absolute accuracy of dx/dp however small p is, which on SalazarCavazos cost odeSD
  // over 100 times CVODES's 879 steps.
  double err = 0;
  for (int s = 0; s < ns; ++s) {
    const size_t off = static_cast<size_t>(s) * static_cast<size_t>(n);
    const double pk = std::abs(p[static_cast<size_t>(paramIdx[static_cast<size_t>(s)])]);
    const double perP = 1.0 / (pk > 0 && std::isfinite(pk) ? pk : 1.0);
    double sum = 0;
    for (size_t i = off; i < off + static_cast<size_t>(n); ++i) {
      const double q2 = DS[i] / (options.rtol * std::max(std::abs(S[i]), std::abs(S1[i])) +
                                 atol[i - off] * perP);
      sum += q2 * q2;
    }
    err = std::max(err, sum);
  }
  return std::sqrt(err / n);
}

void OdeSdIntegrator::Impl::acceptSensitivities() {
  std::swap(Sm1, S);
  std::swap(Sdm1, Sd);
  std::swap(Sddm1, Sdd);
  std::swap(S, S1);
  std::swap(Sd, Sd1);
  std::swap(Sdd, Sdd1);
  jacobiansAtFrontier = true;
  luAtFrontier = true;  // W_s(hm1) at x_{n+1}
}

}  // namespace sensode::integrators
