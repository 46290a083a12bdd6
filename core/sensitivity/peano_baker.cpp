// SPDX-License-Identifier: MIT
#include "core/sensitivity/peano_baker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/common/errors.h"

namespace sensode::sensitivity {

namespace {

// Exponential shifting (exponential()), where it is cheaper than a fresh e^{ΔtA} (θ_m: the largest
// 1-norm for Padé degree m without squaring, matrix_exponential.cpp): 0 < δ = Δt − Δt_c ≤ Δt/16
// with Δt‖A‖₁ ≥ 16·θ₁₃ (≥ 4 squarings saved), or δ‖A‖₁ ≤ θ₅ (degree ≤ 5) with Δt‖A‖₁ ≥ θ₉ (13).
constexpr double kMaxShift = 1.0 / 16, kMinShiftedNorm = 16 * 5.371920351148152,
                 kCheapShift = 2.539398330063230e-1, kPade13Norm = 2.097847961257068;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string violation(const char* field, const std::string& value, const char* constraint) {
  return std::string("PeanoBakerOptions::") + field + " = " + value +
         ". Violated constraint: " + constraint;
}

// Induced 1-norm (largest absolute column sum); an expression, so a difference is not stored.
template <class Derived>
double norm1(const Eigen::MatrixBase<Derived>& m) {
  if (m.size() == 0) return 0;
  return m.cwiseAbs().colwise().sum().maxCoeff();
}

// Same shape and the same bits (so that anything computed from them is bit-identical; == on
// doubles would equate 0 and −0).
bool bitwiseEqual(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) {
  return x.rows() == y.rows() && x.cols() == y.cols() &&
         std::memcmp(x.data(), y.data(), sizeof(double) * static_cast<std::size_t>(x.size())) == 0;
}

// ‖right − left‖₁ ≤ tol·max(‖left‖₁, tiny): true for two zero matrices.
bool nearlyEqual(const Eigen::MatrixXd& left, const Eigen::MatrixXd& right, double tol) {
  const double scale = std::max(norm1(left), std::numeric_limits<double>::min());
  return norm1(right - left) <= tol * scale;
}

}  // namespace

std::optional<std::string> PeanoBakerOptions::validate() const {
  if (!(refinement > 0) || !std::isfinite(refinement)) {
    return violation("refinement", num(refinement), "0 < refinement < inf");
  }
  if (maxSubintervals < 1) {
    return violation("maxSubintervals", std::to_string(maxSubintervals), "maxSubintervals >= 1");
  }
  if (!(constantTolerance >= 0) || !std::isfinite(constantTolerance)) {
    return violation("constantTolerance", num(constantTolerance), "0 <= constantTolerance < inf");
  }
  if (!(mergeTolerance >= 0) || !std::isfinite(mergeTolerance)) {
    return violation("mergeTolerance", num(mergeTolerance), "0 <= mergeTolerance < inf");
  }
  return std::nullopt;
}

PeanoBakerPropagator::PeanoBakerPropagator(std::shared_ptr<const symbolic::CompiledModel> model,
                                           std::vector<double> p, std::vector<int> paramIndices,
                                           const PeanoBakerOptions& options)
    : model_(std::move(model)), p_(std::move(p)), params_(std::move(paramIndices)),
      options_(options) {
  if (!model_) throw Error("PeanoBakerPropagator: no model");
  if (auto why = options_.validate()) throw InvalidOptions(*why);
  nx_ = model_->nx();
  ns_ = static_cast<int>(params_.size());
  for (const int k : params_) {
    if (k < 0 || k >= model_->np()) {
      throw InvalidOptions("PeanoBakerPropagator: parameter index " + std::to_string(k) +
                           " outside [0, " + std::to_string(model_->np()) + ")");
    }
  }
  jValues_.assign(static_cast<std::size_t>(model_->jacobianPattern().nnz()), 0.0);
  fpValues_.assign(static_cast<std::size_t>(model_->paramJacobianPattern().nnz()), 0.0);
}

void PeanoBakerPropagator::start(double t0, const std::vector<double>& x0,
                                 const std::vector<double>& s0) {
  restart(t0, x0, s0);
  cacheValid_ = false;
  stats_ = {};
}

void PeanoBakerPropagator::restart(double t0, const std::vector<double>& x0,
                                   const std::vector<double>& s0) {
  const auto n = static_cast<std::size_t>(nx_);
  if (x0.size() != n || s0.size() != n * static_cast<std::size_t>(ns_)) {
    throw Error("PeanoBakerPropagator::start: x0 has " + std::to_string(x0.size()) +
                " values and s0 " + std::to_string(s0.size()) + ", expected " +
                std::to_string(n) + " and " + std::to_string(n * static_cast<std::size_t>(ns_)));
  }
  t_ = t0;
  x_ = x0;
  s_ = Eigen::Map<const Eigen::MatrixXd>(s0.data(), nx_, ns_);
  leftValid_ = false;
  pending_ = false;
}

void PeanoBakerPropagator::sensitivities(std::vector<double>& s) {
  flush();
  s.assign(s_.data(), s_.data() + s_.size());
}

void PeanoBakerPropagator::evaluate(double t, const std::vector<double>& x, Eigen::MatrixXd& a,
                                    Eigen::MatrixXd& b) {
  const symbolic::CompiledModel& m = *model_;
  m.jacobian(t, x.data(), p_.data(), jValues_.data());
  m.paramJacobian(t, x.data(), p_.data(), fpValues_.data());
  ++stats_.jacobianEvals;
  // The matrices given here hold nothing but the structural non-zeros of an earlier evaluation
  // (they are only written here, and swapped among themselves), so they are zeroed once, when
  // they get their shape, and afterwards only the non-zeros are written: zeroing and scanning
  // the dense n × (n + ns) values on every call was a fifth of Exp's time on the 52-species
  // suite models.
  bool finite = true;
  const symbolic::SparsePattern& jp = m.jacobianPattern();
  if (a.rows() != nx_ || a.cols() != nx_) a.setZero(nx_, nx_);
  for (int c = 0; c < nx_; ++c) {
    for (int k = jp.colPtr[static_cast<std::size_t>(c)];
         k < jp.colPtr[static_cast<std::size_t>(c) + 1]; ++k) {
      const double v = jValues_[static_cast<std::size_t>(k)];
      finite = finite && std::isfinite(v);
      a(jp.rowIdx[static_cast<std::size_t>(k)], c) = v;
    }
  }
  const symbolic::SparsePattern& fp = m.paramJacobianPattern();
  if (b.rows() != nx_ || b.cols() != ns_) b.setZero(nx_, ns_);
  for (int j = 0; j < ns_; ++j) {
    const auto col = static_cast<std::size_t>(params_[static_cast<std::size_t>(j)]);
    for (int k = fp.colPtr[col]; k < fp.colPtr[col + 1]; ++k) {
      const double v = fpValues_[static_cast<std::size_t>(k)];
      finite = finite && std::isfinite(v);
      b(fp.rowIdx[static_cast<std::size_t>(k)], j) = v;
    }
  }
  if (!finite) {
    throw IntegrationFailure("Peano-Baker sensitivities: non-finite Jacobian or parameter "
                             "Jacobian at t = " + num(t),
                             t, 0);
  }
}

void PeanoBakerPropagator::ensureLeft() {
  if (leftValid_) return;
  evaluate(t_, x_, aLeft_, bLeft_);
  leftValid_ = true;
}

void PeanoBakerPropagator::exponentialInterval(const Eigen::MatrixXd& a,
                                               const Eigen::MatrixXd& b, double t1) {
  const double tol = options_.mergeTolerance;
  if (tol <= 0) {
    exponential(a, b, t_, t1 - t_);
    return;
  }
  const double dt = t1 - t_;
  if (pending_) {
    // Extended to t1, does the merged step stay within the bound of the header comment, for
    // every parameter? Per column: the columns differ in scale by orders of magnitude (S0 = I
    // columns next to rate constants), and a common norm let the large ones hide the small ones'
    // error (suite 00036: 6.8e-5 → 8.7e-4 with one norm at tolerance 1e-6).
    // An A (B) bitwise equal to the first interval's (constant Jacobians, a state at rest)
    // leaves the spreads and norms as they are: only the O(ns) bound is evaluated then.
    const bool sameA = bitwiseEqual(a, aFirst_);
    const bool sameB = bitwiseEqual(b, bFirst_);
    const double h = t1 - pendingStart_;
    const double dA = sameA ? spreadA_ : std::max(spreadA_, norm1(a - aFirst_));
    const double aMax = sameA ? aNormMax_ : std::max(aNormMax_, norm1(a));
    if (sameB) {
      colSpread_ = spreadB_;
      colNorms_ = bNormMax_;
    } else {
      colSpread_ = (b - bFirst_).cwiseAbs().colwise().sum().transpose();
      colSpread_ = colSpread_.max(spreadB_);
      colNorms_ = b.cwiseAbs().colwise().sum().transpose();
      colNorms_ = colNorms_.max(bNormMax_);
    }
    const bool fits =
        (0.5 * h * h * (2 * aMax * dA * sNorm_ + aMax * colSpread_ + dA * colNorms_) <=
         tol * (sNorm_ + h * colNorms_))
            .all();
    if (fits) {
      spreadA_ = dA;
      spreadB_ = colSpread_;
      aNormMax_ = aMax;
      bNormMax_ = colNorms_;
      if (sameA) {
        aFirstWeight_ += dt;
      } else {
        if (aConstant_) aSum_.setZero(nx_, nx_);
        aSum_ += dt * a;
        aConstant_ = false;
      }
      if (sameB) {
        bFirstWeight_ += dt;
      } else {
        if (bConstant_) bSum_.setZero(nx_, ns_);
        bSum_ += dt * b;
        bConstant_ = false;
      }
      ++stats_.mergedIntervals;
      return;
    }
    flush();
  }
  pending_ = true;
  pendingStart_ = t_;
  aFirst_ = a;
  bFirst_ = b;
  aFirstWeight_ = bFirstWeight_ = dt;
  aConstant_ = bConstant_ = true;
  spreadA_ = 0;
  spreadB_.setZero(ns_);
  aNormMax_ = norm1(a);
  bNormMax_ = b.cwiseAbs().colwise().sum().transpose();
  sNorm_ = s_.cwiseAbs().colwise().sum().transpose();
}

void PeanoBakerPropagator::flush() {
  if (!pending_) return;
  pending_ = false;
  const double h = t_ - pendingStart_;
  // Constant samples are used as they are (not Σ Δt_k A / h, which rounds): a merged step on a
  // constant Jacobian is then exact and its E, Φ₁ reusable. Otherwise the Δt-weighted mean,
  // Σ Δt_k A_k over the differing intervals plus the first interval's A times its weight.
  if (!aConstant_) aSum_ = (aSum_ + aFirstWeight_ * aFirst_) / h;
  if (!bConstant_) bSum_ = (bSum_ + bFirstWeight_ * bFirst_) / h;
  exponential(aConstant_ ? aFirst_ : aSum_, bConstant_ ? bFirst_ : bSum_, pendingStart_, h);
}

void PeanoBakerPropagator::requireFiniteS(double tStart, double tEnd) const {
  if (s_.allFinite()) return;
  throw IntegrationFailure("Peano-Baker sensitivities: S is not finite after the step from t = " +
                               num(tStart) + " to t = " + num(tEnd),
                           tEnd, tEnd - tStart);
}

void PeanoBakerPropagator::exponential(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                                       double tStart, double dt) {
  ++stats_.exponentialSteps;
  if (a.rows() == 0 || b.cols() == 0 || dt == 0) return;
  // E, Φ₁ depend on A and Δt only (not on B or S).
  const bool sameA = options_.reuseExponential && cacheValid_ && bitwiseEqual(a, cacheA_);
  const bool shiftable = sameA && options_.shiftExponential;
  const double shift = dt - cacheDt_;
  const double norm = shiftable ? dt * norm1(a) : 0;  // ‖ΔtA‖₁
  if (sameA && dt == cacheDt_) {
    // reused as they are
  } else if (shiftable && std::abs(shift) <= 8 * std::numeric_limits<double>::epsilon() * dt) {
    // Δt differs by rounding only (output intervals of equal intended length, e.g. 0.3 − 0.2 vs
    // 0.2 − 0.1): E and Φ₁ of Δt_c are those of Δt to working precision (relative changes
    // |δ|‖A‖ and |δ|/Δt ≤ 2e-15). Δt_c is kept, so such differences cannot accumulate.
    ++stats_.expmShifted;
  } else if (shiftable && shift > 0 &&
             ((shift <= kMaxShift * dt && norm >= kMinShiftedNorm) ||
              (shift * norm <= kCheapShift * dt && norm >= kPade13Norm))) {
    // Same A, a slightly longer Δt: e^{ΔtA} = e^{Δt_c A} e^{δA}, Φ₁(Δt) = Φ₁(Δt_c) +
    // e^{Δt_c A} Φ₁(δ), δ = Δt − Δt_c > 0: e^{δA} needs ≥ 4 squarings fewer than e^{ΔtA}, or
    // Padé degree ≤ 5 where e^{ΔtA} needs 13. Never δ < 0: e^{δA} then grows like e^{|δ|·|λ|} on
    // the stiff modes (it overflows at |δ|‖A‖ ≈ 1800) instead of decaying.
    integratedExponential(a, shift, shiftE_, shiftPhi_, expWork_);
    expWork_.product.noalias() = expWork_.e * shiftPhi_;
    expWork_.phi += expWork_.product;
    expWork_.product.noalias() = expWork_.e * shiftE_;
    expWork_.e.swap(expWork_.product);
    cacheDt_ = dt;
    ++stats_.expmShifted;
  } else {
    integratedExponential(a, dt, expWork_.e, expWork_.phi, expWork_);
    cacheValid_ = true;
    cacheDt_ = dt;
    cacheA_ = a;
    ++stats_.expmEvaluations;
  }
  // S ← E S + Φ₁ B, as exponentialStep.
  expWork_.product.noalias() = expWork_.e * s_;
  expWork_.product.noalias() += expWork_.phi * b;
  s_.swap(expWork_.product);
  requireFiniteS(tStart, tStart + dt);
}

void PeanoBakerPropagator::pbs(const Eigen::MatrixXd& aLeft, const Eigen::MatrixXd& bLeft,
                               const Eigen::MatrixXd& aRight, const Eigen::MatrixXd& bRight,
                               double h) {
  // (4.6): Φ̂(t_b; t_a) = I + Î₁ + Î₂, Φ̂(t_a; t_b) = I − Î₁ + Î₂ (the printed form, §7.1).
  sumA_ = aLeft + aRight;
  i2_.noalias() = (0.25 * h * h) * (aRight * sumA_);
  phi_ = i2_ - (0.5 * h) * sumA_;
  phi_.diagonal().array() += 1.0;  // Φ̂(t_a; t_b)
  rhs_ = bLeft;
  rhs_.noalias() += phi_ * bRight;
  rhs_ = s_ + (0.5 * h) * rhs_;
  phi_ = i2_ + (0.5 * h) * sumA_;
  phi_.diagonal().array() += 1.0;  // Φ̂(t_b; t_a)
  s_.noalias() = phi_ * rhs_;
  ++stats_.subintervals;
}

void PeanoBakerPropagator::advance(double t1, const StateSource& states) {
  if (!(t1 >= t_)) {
    throw Error("PeanoBakerPropagator::advance: t1 = " + num(t1) + " is before t = " + num(t_));
  }
  if (t1 == t_) return;
  const double t0 = t_;
  const double dt = t1 - t0;
  const double tMid = t0 + 0.5 * dt;
  ++stats_.intervals;
  auto request = [&](double t, std::vector<double>& x) {
    states(t, x);
    ++stats_.stateRequests;
    if (x.size() != static_cast<std::size_t>(nx_)) {
      throw Error("PeanoBakerPropagator: the trajectory returned " + std::to_string(x.size()) +
                  " states, expected " + std::to_string(nx_));
    }
  };
  auto finish = [&](bool rightValid) {
    t_ = t1;
    x_ = xRight_;
    if (rightValid) {
      aLeft_.swap(aRight_);
      bLeft_.swap(bRight_);
    }
    leftValid_ = rightValid;
  };

  if (ns_ == 0 || nx_ == 0) {
    request(t1, xRight_);
    finish(false);
    return;
  }

  // Exp, or PBSR on an interval the refinement rule finds too stiff: the exponential formula.
  int nInt = 1;
  bool exponentialOnly = options_.method == PeanoBakerMethod::Exp;
  if (!exponentialOnly) {
    ensureLeft();
    const double want = std::ceil(options_.refinement * dt * norm1(aLeft_));
    exponentialOnly = !(want <= options_.maxSubintervals);  // also NaN
    nInt = exponentialOnly ? 1 : std::max(1, static_cast<int>(want));
  }
  if (exponentialOnly) {
    if (options_.midpoint) {
      request(tMid, xMid_);
      evaluate(tMid, xMid_, aMid_, bMid_);
      request(t1, xRight_);
      exponentialInterval(aMid_, bMid_, t1);
    } else {
      ensureLeft();
      request(t1, xRight_);
      exponentialInterval(aLeft_, bLeft_, t1);
    }
    finish(false);
    return;
  }
  flush();  // the PBS and nearly-constant paths below start from S at t0

  // PBSR with n_int ≤ maxSubintervals: states at the sub-grid points (and the midpoint, which is
  // one of them when n_int is even), in increasing time, then the right end.
  const double h = dt / nInt;
  if (subStates_.size() < static_cast<std::size_t>(nInt)) subStates_.resize(static_cast<std::size_t>(nInt));
  const bool midIsSubPoint = nInt % 2 == 0;
  for (int j = 1; j < nInt; ++j) {
    const double tj = t0 + j * h;
    if (!midIsSubPoint && j == (nInt + 1) / 2) request(tMid, xMid_);
    request(tj, subStates_[static_cast<std::size_t>(j)]);
  }
  if (nInt == 1) request(tMid, xMid_);
  if (midIsSubPoint) xMid_ = subStates_[static_cast<std::size_t>(nInt / 2)];
  request(t1, xRight_);
  evaluate(t1, xRight_, aRight_, bRight_);

  if (options_.constantTolerance > 0 &&
      nearlyEqual(aLeft_, aRight_, options_.constantTolerance) &&
      nearlyEqual(bLeft_, bRight_, options_.constantTolerance)) {
    if (options_.midpoint) {
      evaluate(tMid, xMid_, aMid_, bMid_);
      exponential(aMid_, bMid_, t0, dt);
    } else {
      exponential(aLeft_, bLeft_, t0, dt);
    }
    finish(true);
    return;
  }

  ++stats_.refinedIntervals;
  // aSub_/bSub_ hold the current sub-interval's right end; the left end starts at (t0, x0).
  Eigen::MatrixXd aPrev = aLeft_, bPrev = bLeft_;
  for (int j = 1; j <= nInt; ++j) {
    if (j < nInt) {
      evaluate(t0 + j * h, subStates_[static_cast<std::size_t>(j)], aSub_, bSub_);
      pbs(aPrev, bPrev, aSub_, bSub_, h);
      aPrev.swap(aSub_);
      bPrev.swap(bSub_);
    } else {
      pbs(aPrev, bPrev, aRight_, bRight_, h);
    }
  }
  requireFiniteS(t0, t1);
  finish(true);
}

}  // namespace sensode::sensitivity
