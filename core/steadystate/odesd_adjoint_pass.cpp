// SPDX-License-Identifier: MIT
#include "core/steadystate/odesd_adjoint_pass.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "core/common/errors.h"
#include "core/integrators/odesd_integrator.h"
#include "core/integrators/sparse_lu.h"
#include "core/integrators/step_arithmetic.h"

namespace sensode::steadystate {

namespace {

// The forward pass's rtol against the caller's (see forward()).
constexpr double kForwardToleranceFactor = 1.0 / 3.0;

// Beyond this many states CVODES's adjoint runs instead: the backward sweep factorises W_{k+1}ᵀ
// at every step, and J_J's fill (J² in it) makes that costly on large sparse networks. On the
// generated 500-species network (scripts/make-network-problem.py) the discrete adjoint took
// 37–60 s, most of it in KLU's refactorisations, against 7.1 s by CVODES's adjoint (objective
// 2.6 s); the collection's problems up to 75 states (SalazarCavazos, W dense) were faster by
// odeSD (performance.md §19).
// Solving each step by iterative refinement on an earlier step's factors instead lost the
// gradient's accuracy (Bachmann 4.5e-5 → 1.1e-3 of the reference, with corrections down to 2e-16
// of ν); a likely reason: odeSD's rule neither damps nor grows stiff modes (R(−∞) = 1), so no
// solve's error is damped on the way back.
constexpr int kMaxStates = 200;

// The forward pass keeps nx doubles per step; past this many (512 MB) CVODES's checkpointed
// adjoint, which recomputes instead of storing, runs instead.
constexpr double kMaxStoredValues = 64.0 * 1024 * 1024;
struct StorageExceeded {};  // thrown by the step observer past kMaxStoredValues

// The forward pass's points, nx values each, in blocks of about 64 kB: appending never moves
// what is stored. A growing vector copied all of it at each reallocation, into freshly mapped
// pages (a vector past malloc's mmap threshold is mapped anew), in every pass: 4.7 % of Bachmann's
// adjoint run (perf, the step observer's memcpy and its page faults). Blocks this small come
// from the heap, and the next pass reuses those the last one freed.
class PointStore {
 public:
  void reset(int nx) {
    if (static_cast<std::size_t>(nx) != nx_) blocks_.clear();  // blocks are sized for one nx
    nx_ = static_cast<std::size_t>(nx);
    perBlock_ = std::max<std::size_t>(1, 8192 / std::max<std::size_t>(1, nx_));
    count_ = 0;
  }
  void push(const double* x) {
    const std::size_t block = count_ / perBlock_, slot = count_ % perBlock_;
    if (block == blocks_.size()) {
      blocks_.push_back(std::make_unique_for_overwrite<double[]>(perBlock_ * nx_));
    }
    std::copy(x, x + nx_, blocks_[block].get() + slot * nx_);
    ++count_;
  }
  const double* operator[](std::size_t k) const {
    return blocks_[k / perBlock_].get() + (k % perBlock_) * nx_;
  }
  std::size_t values() const { return count_ * nx_; }

 private:
  std::size_t nx_ = 0, perBlock_ = 1, count_ = 0;
  std::vector<std::unique_ptr<double[]>> blocks_;
};

// Wᵀ = I − c1 Jᵀ + c2 J_Jᵀ on the union pattern of I, Jᵀ and J_Jᵀ (J's entry (r, c) is Wᵀ's
// (c, r)). For each entry of Wᵀ: the J and J_J entries it takes (jOfEntry, jjOfEntry; where it
// takes none, nnz(J) or nnz(J_J), one past the model's entries, where the sweep keeps a zero) and
// its identity part, so that assemble() is one gather pass instead of a fill and two scatters.
struct TransposedNewtonPattern {
  symbolic::SparsePattern pattern;
  std::vector<int> jOfEntry, jjOfEntry;
  std::vector<double> identity;

  void build(const symbolic::SparsePattern& jp, const symbolic::SparsePattern& jjp, int n) {
    std::vector<std::vector<int>> rowsOfColumn(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) rowsOfColumn[static_cast<std::size_t>(i)].push_back(i);
    for (const symbolic::SparsePattern* p : {&jp, &jjp})
      for (int c = 0; c < p->cols; ++c)
        for (int k = p->colPtr[static_cast<std::size_t>(c)];
             k < p->colPtr[static_cast<std::size_t>(c) + 1]; ++k)
          rowsOfColumn[static_cast<std::size_t>(p->rowIdx[static_cast<std::size_t>(k)])].push_back(
              c);
    pattern = {};
    pattern.rows = pattern.cols = n;
    pattern.colPtr.assign(static_cast<std::size_t>(n) + 1, 0);
    for (int c = 0; c < n; ++c) {
      auto& rows = rowsOfColumn[static_cast<std::size_t>(c)];
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      pattern.rowIdx.insert(pattern.rowIdx.end(), rows.begin(), rows.end());
      pattern.colPtr[static_cast<std::size_t>(c) + 1] = static_cast<int>(pattern.rowIdx.size());
    }
    const auto position = [&](int row, int col) {
      const auto b = pattern.rowIdx.begin() + pattern.colPtr[static_cast<std::size_t>(col)];
      const auto e = pattern.rowIdx.begin() + pattern.colPtr[static_cast<std::size_t>(col) + 1];
      return static_cast<int>(std::lower_bound(b, e, row) - pattern.rowIdx.begin());
    };
    const auto nnz = static_cast<std::size_t>(pattern.nnz());
    identity.assign(nnz, 0.0);
    for (int i = 0; i < n; ++i) identity[static_cast<std::size_t>(position(i, i))] = 1.0;
    for (auto [p, of] : {std::pair{&jp, &jOfEntry}, std::pair{&jjp, &jjOfEntry}}) {
      of->assign(nnz, p->nnz());
      for (int c = 0; c < p->cols; ++c)
        for (int k = p->colPtr[static_cast<std::size_t>(c)];
             k < p->colPtr[static_cast<std::size_t>(c) + 1]; ++k)
          (*of)[static_cast<std::size_t>(position(c, p->rowIdx[static_cast<std::size_t>(k)]))] = k;
    }
  }
  // Wᵀ's values for step size h from J, J_J (each with the zero past its model entries).
  void assemble(double h, const std::vector<double>& j, const std::vector<double>& jj,
                double* w) const {
    const double c1 = h / 2, c2 = h * h / 12;
    for (std::size_t e = 0; e < identity.size(); ++e)
      w[e] = identity[e] - c1 * j[static_cast<std::size_t>(jOfEntry[e])] +
             c2 * jj[static_cast<std::size_t>(jjOfEntry[e])];
  }
};

// out += s · Mᵀ v (M sparse CSC n × n).
void addTransposedProduct(const symbolic::SparsePattern& p, const double* m, const double* v,
                          double s, double* out) {
  for (int c = 0; c < p.cols; ++c) {
    double sum = 0;
    for (int k = p.colPtr[static_cast<std::size_t>(c)];
         k < p.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      sum += m[k] * v[p.rowIdx[static_cast<std::size_t>(k)]];
    out[c] += s * sum;
  }
}

// Column c of Mᵀ v for the columns in `cols` (M sparse CSC n × np).
double columnDot(const symbolic::SparsePattern& p, const double* m, const double* v, int c) {
  double sum = 0;
  for (int k = p.colPtr[static_cast<std::size_t>(c)]; k < p.colPtr[static_cast<std::size_t>(c) + 1];
       ++k)
    sum += m[k] * v[p.rowIdx[static_cast<std::size_t>(k)]];
  return sum;
}

// 0·x is 0 for finite x and NaN otherwise; four sums, not one chain of dependent additions
// (the sweep checks every point's derivatives: some 600 values a point on Bachmann).
bool allFinite(const std::vector<double>& v) {
  double acc[4] = {0, 0, 0, 0};
  const std::size_t n = v.size(), blocks = n - n % 4;
  for (std::size_t i = 0; i < blocks; i += 4)
    for (std::size_t k = 0; k < 4; ++k) acc[k] += 0.0 * v[i + k];
  for (std::size_t i = blocks; i < n; ++i) acc[0] += 0.0 * v[i];
  return acc[0] + acc[1] + acc[2] + acc[3] == 0;
}

}  // namespace

struct OdeSdAdjointPass::Impl {
  std::shared_ptr<const symbolic::CompiledModel> model;
  integrators::IntegratorOptions options;
  double t0 = 0;
  std::vector<double> x0, theta;
  ProgressMonitor monitor;
  int nx = 0;
  // The forward steps: point k is (pointTimes[k], points[k]); step k goes from point k to
  // point k + 1 with size stepSizes[k] (the rule's h, which for a landing is stopTime − t_k).
  std::vector<double> pointTimes, stepSizes;
  PointStore points;
  std::vector<std::size_t> pointOfTime;  // point index of each measurement time
  long steps = 0;
  TransposedNewtonPattern newtonPattern;  // Wᵀ's (forward() builds it)
  double leftLimitAt = std::numeric_limits<double>::infinity();
  double fixedStepSize = 0;
  double evalTimeLimit = std::numeric_limits<double>::infinity();

  // One point's derivatives: J, J_J, f_θ and a_θ's A_mix (model CSC values; a_θ = J f_θ + A_mix).
  struct Derivatives {
    std::vector<double> j, jj, fp, mix;
  };
  void evaluate(std::size_t k, Derivatives& d) const {
    // Point 0's f and ẍ were evaluated as right-hand limits at t0 (odeSD's start).
    const double t =
        std::min(k == 0 ? integrators::nextUp(pointTimes[0]) : pointTimes[k], evalTimeLimit);
    const double* x = points[k];
    model->jacobianPair(t, x, theta.data(), d.j.data(), d.jj.data());
    model->paramJacobian(t, x, theta.data(), d.fp.data());
    model->secondParamMixedTerm(t, x, theta.data(), d.mix.data());
  }
  static bool finite(const Derivatives& d) {
    return allFinite(d.j) && allFinite(d.jj) && allFinite(d.fp) && allFinite(d.mix);
  }
  // The last point (the sweep's order) whose derivatives are not finite, or none.
  std::optional<std::size_t> lastNotFinitePoint(Derivatives& scratch) const {
    for (std::size_t k = pointTimes.size(); k-- > 0;) {
      evaluate(k, scratch);
      if (!finite(scratch)) return k;
    }
    return std::nullopt;
  }
};

OdeSdAdjointPass::OdeSdAdjointPass(std::shared_ptr<const symbolic::CompiledModel> model,
                                   const integrators::IntegratorOptions& options, double t0,
                                   std::vector<double> x0, std::vector<double> theta,
                                   const ProgressMonitor& monitor)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.model = std::move(model);
  d.options = options;
  d.t0 = t0;
  d.x0 = std::move(x0);
  d.theta = std::move(theta);
  d.monitor = monitor;
  d.nx = d.model->nx();
}

OdeSdAdjointPass::~OdeSdAdjointPass() = default;

void OdeSdAdjointPass::setFixedStepSize(double h) { impl_->fixedStepSize = h; }

void OdeSdAdjointPass::setLeftLimitAt(double tEnd) {
  impl_->leftLimitAt = tEnd;
  impl_->evalTimeLimit = std::nextafter(tEnd, -std::numeric_limits<double>::infinity());
}

long OdeSdAdjointPass::forwardSteps() const { return impl_->steps; }

bool OdeSdAdjointPass::forward(const std::vector<double>& times,
                               std::vector<std::vector<double>>& states, std::string& whyNot) {
  Impl& d = *impl_;
  if (d.model->system().isDae()) {
    whyNot = "a differential-algebraic model (odeSD runs it by IDAS)";
    return false;
  }
  if (d.nx > kMaxStates) {
    whyNot = std::to_string(d.nx) + " states (beyond " + std::to_string(kMaxStates) +
             ", factorising odeSD's Newton matrix at every backward step costs more than CVODES's "
             "adjoint)";
    return false;
  }
  // A Newton matrix at least half full beyond kDenseLimit states is factorised densely (as odeSD
  // does, odesd_integrator.cpp): n³/3 at every backward step, where CVODES's adjoint factorises
  // I + γJᵀ on J's own pattern every few dozen steps. SalazarCavazos (75 states, W 96 % full):
  // the adjoint added 0.26–0.31 s to the objective's 1.05 s by odeSD, 0.03–0.05 s by CVODES.
  d.newtonPattern.build(d.model->jacobianPattern(), d.model->jacobianOfSecondPattern(), d.nx);
  if (d.nx > integrators::IntegratorOptions::kDenseLimit &&
      2.0 * d.newtonPattern.pattern.nnz() >= static_cast<double>(d.nx) * d.nx &&
      d.options.linearSolver != integrators::LinearSolverKind::Sparse) {
    whyNot = "odeSD's Newton matrix is at least half full (" +
             std::to_string(d.newtonPattern.pattern.nnz()) + " of " + std::to_string(d.nx) +
             "² entries): a dense LU at every backward step costs more than CVODES's adjoint";
    return false;
  }
  d.pointTimes.assign(1, d.t0);
  d.points.reset(d.nx);
  d.points.push(d.x0.data());
  d.stepSizes.clear();
  d.pointOfTime.clear();
  states.clear();
  integrators::OdeSdIntegrator odesd;
  // As with sensitivities (OdeSdOptions): x_{k+1} solved to a tenth of the tolerance, and
  // evaluated where it was solved, since every derivative of the backward sweep is taken there.
  integrators::OdeSdOptions sd;
  sd.newtonTolerance = sd.sensitivityNewtonTolerance;
  sd.iterateTolerance = 0;
  sd.maxBridges = 0;
  // The stiffness cap on the spectral radius, not ‖J‖₁: a hand-over to CVODES costs this pass
  // its discrete adjoint (Bachmann hands over with ‖J‖₁ and not with ρ(J): its adjoint gradient
  // 0.25 s by CVODES against 0.15–0.17 s so; Brannmark hands over either way).
  sd.stiffnessEstimate = integrators::OdeSdOptions::StiffnessEstimate::SpectralRadius;
  sd.fixedStepSize = d.fixedStepSize;
  odesd.setOdeSdOptions(sd);
  // The forward steps at a third of rtol. CVODES's adjoint controls the error of λ and of the
  // quadratures in its backward pass; the discrete adjoint has no error control of its own and
  // inherits the states' steps. Measured on the collection (performance.md §19): at rtol the
  // gradients of Bruno, Zhao and Bachmann were 2.8×, 6.7× and 1.3× further from the reference
  // than CVODES's adjoint; at rtol/3, 1.2×, 2.8× and 0.75×, at 3–5 % more time.
  integrators::IntegratorOptions options = d.options;
  options.rtol = d.options.rtol * kForwardToleranceFactor;
  odesd.initialize(d.model, options, d.t0, d.x0, d.theta);
  if (d.leftLimitAt < std::numeric_limits<double>::infinity()) odesd.setLeftLimitAt(d.leftLimitAt);
  bool contiguous = true;
  odesd.setStepObserver([&](const integrators::OdeSdStepInfo& s) {
    // Each step starts where the previous one ended (no bridge in between: maxBridges = 0), so
    // its start is the previous point's time; its own end is provisional (s.t + s.h may miss a
    // landing's stop time by an ulp) until the next step starts or the landing is known.
    const double previousEnd = d.pointTimes.back();
    if (std::abs(s.t - previousEnd) >
        4 * std::numeric_limits<double>::epsilon() * std::max(std::abs(previousEnd), 1.0))
      contiguous = false;
    d.pointTimes.back() = s.t;
    d.stepSizes.push_back(s.h);
    d.points.push(s.xEnd.data());
    d.pointTimes.push_back(s.t + s.h);
    // Past the budget the pass stops at once (the exception leaves advanceTo as it came).
    if (static_cast<double>(d.points.values()) > kMaxStoredValues) throw StorageExceeded{};
  });
  std::vector<double> x = d.x0;
  try {
    for (double tout : times) {
      if (tout > odesd.currentTime()) {
        odesd.setStopTime(tout);
        odesd.advanceTo(tout, x, d.monitor);
        if (!contiguous || odesd.handedOver() || odesd.stats().fallbackSteps > 0 ||
            d.pointTimes.size() < 2)
          break;
        // The step that landed ended exactly at tout (hs = tout − t_k).
        d.pointTimes.back() = tout;
      }
      d.pointOfTime.push_back(d.pointTimes.size() - 1);
      states.push_back(x);
    }
  } catch (const StorageExceeded&) {
    whyNot = "the forward steps would take more than 512 MB (" +
             std::to_string(d.stepSizes.size()) + " steps before t = " +
             std::to_string(d.pointTimes.back()) + ")";
    return false;
  } catch (const Cancelled&) {
    throw;
  } catch (const InvalidOptions&) {
    throw;
  } catch (const std::exception& e) {
    whyNot = std::string("odeSD failed in the adjoint's forward pass: ") + e.what();
    return false;
  }
  if (odesd.handedOver()) {
    // No time in the sentence: one line for all the passes (conditions) that hand over.
    whyNot = "odeSD handed the stiff tail to CVODES";
    return false;
  }
  if (odesd.stats().fallbackSteps > 0 || !contiguous || d.pointOfTime.size() != times.size()) {
    whyNot = "odeSD did not integrate the pass on its own (a bridge over a point it cannot step "
             "from)";
    return false;
  }
  d.steps = static_cast<long>(d.stepSizes.size());
  return true;
}

bool OdeSdAdjointPass::backward(const std::vector<std::vector<double>>& jumps,
                                const std::vector<int>& quadParams, std::vector<double>& lambda0,
                                std::vector<double>& quadrature, std::string& whyNot) {
  Impl& d = *impl_;
  const int n = d.nx;
  const auto un = static_cast<std::size_t>(n);
  const symbolic::CompiledModel& m = *d.model;
  const symbolic::SparsePattern &jp = m.jacobianPattern(), &jjp = m.jacobianOfSecondPattern(),
                                &fpp = m.paramJacobianPattern(),
                                &mixp = m.secondParamMixedPattern();
  const auto notFinite = [&](std::size_t k) {
    whyNot = "a derivative of the model is not finite at t = " + std::to_string(d.pointTimes[k]) +
             " in the discrete adjoint's backward sweep";
    return false;
  };
  std::vector<double> mu(un, 0.0), nu(un, 0.0);
  const std::size_t last = d.pointTimes.size() - 1;
  // Jumps per point: the measurement times are ascending, so walk them from the end.
  std::size_t nextJump = d.pointOfTime.size();
  const auto addJumps = [&](std::size_t point) {
    while (nextJump > 0 && d.pointOfTime[nextJump - 1] == point) {
      --nextJump;
      for (std::size_t i = 0; i < un; ++i) mu[i] += jumps[nextJump][i];
    }
  };
  addJumps(last);
  if (last > 0) {
    const TransposedNewtonPattern& wt = d.newtonPattern;
    const bool halfFull = 2.0 * wt.pattern.nnz() >= static_cast<double>(n) * n;
    const bool sparse = d.options.linearSolver == integrators::LinearSolverKind::Sparse ||
                        (d.options.linearSolver == integrators::LinearSolverKind::Auto &&
                         n > integrators::IntegratorOptions::kDenseLimit && !halfFull &&
                         !integrators::detail::SparseLu::denseIsFaster(wt.pattern));
    integrators::detail::SparseLu lu;
    lu.analyze(wt.pattern, sparse ? integrators::detail::SparseLu::Backend::Klu
                                  : integrators::detail::SparseLu::Backend::Dense);
    Impl::Derivatives upper, lower;
    for (Impl::Derivatives* dv : {&upper, &lower}) {
      dv->j.assign(static_cast<std::size_t>(jp.nnz()) + 1, 0.0);  // + the zero assemble() takes
      dv->jj.assign(static_cast<std::size_t>(jjp.nnz()) + 1, 0.0);
      dv->fp.resize(static_cast<std::size_t>(fpp.nnz()));
      dv->mix.resize(static_cast<std::size_t>(mixp.nnz()));
    }
    // Q += Σ_k P_kᵀ ν_k with P_k = c1_k (f_θ,k + f_θ,k+1) + c2_k (a_θ,k − a_θ,k+1), gathered
    // per point: point j's f_θ,j and a_θ,j meet ν_j (step j) and ν_(j−1) (step j − 1), so each
    // point's two products take byF = c1_j ν_j + c1_(j−1) ν_(j−1) and byA = c2_j ν_j −
    // c2_(j−1) ν_(j−1): two products per point instead of four per step. With a_θ = J f_θ +
    // A_mix (compiled_model.h), byAᵀ a_θ = (Jᵀ byA)ᵀ f_θ + byAᵀ A_mix: the f_θ product takes
    // byF + Jᵀ byA, and a_θ itself is never formed (its J f_θ part was most of its tape).
    std::vector<double> byF(un, 0.0), byA(un, 0.0), byFp(un, 0.0);
    const auto addPointQuadrature = [&](const Impl::Derivatives& at) {
      byFp = byF;
      addTransposedProduct(jp, at.j.data(), byA.data(), 1.0, byFp.data());
      for (int c : quadParams)
        quadrature[static_cast<std::size_t>(c)] += columnDot(fpp, at.fp.data(), byFp.data(), c) +
                                                   columnDot(mixp, at.mix.data(), byA.data(), c);
    };
    // The derivatives are not tested point by point (that was 1.5 % of Alkan's run): a value
    // that is not finite makes W's factorisation fail, or ν, μ and Q not finite, and only then
    // is the point looked for, for the message.
    d.evaluate(last, upper);
    for (std::size_t k = last; k-- > 0;) {
      if ((k & 63) == 0) d.monitor.check({d.pointTimes[k], d.t0, 0});
      const double h = d.stepSizes[k], c1 = h / 2, c2 = h * h / 12;
      // ν = W_{k+1}⁻ᵀ μ_{k+1}
      wt.assemble(h, upper.j, upper.jj, lu.values());
      if (!lu.factorize()) {
        if (!Impl::finite(upper)) return notFinite(k + 1);
        whyNot = "the Newton matrix of odeSD's step to t = " + std::to_string(d.pointTimes[k + 1]) +
                 " is singular in the discrete adjoint's backward sweep";
        return false;
      }
      nu = mu;
      lu.solve(nu.data());
      // Point k + 1 is complete: its step (k + 1) and this step (k) have met it.
      for (std::size_t i = 0; i < un; ++i) {
        byF[i] += c1 * nu[i];
        byA[i] -= c2 * nu[i];
      }
      addPointQuadrature(upper);
      for (std::size_t i = 0; i < un; ++i) {
        byF[i] = c1 * nu[i];
        byA[i] = c2 * nu[i];
      }
      d.evaluate(k, lower);
      // μ_k = B_kᵀ ν = ν + c1 J_kᵀ ν + c2 J_J,kᵀ ν
      mu = nu;
      addTransposedProduct(jp, lower.j.data(), nu.data(), c1, mu.data());
      addTransposedProduct(jjp, lower.jj.data(), nu.data(), c2, mu.data());
      addJumps(k);
      std::swap(upper, lower);
    }
    addPointQuadrature(upper);  // point 0, met by step 0 alone
  }
  if (!allFinite(mu) || !allFinite(quadrature)) {
    if (last > 0) {
      Impl::Derivatives scratch;
      scratch.j.resize(static_cast<std::size_t>(jp.nnz()) + 1);
      scratch.jj.resize(static_cast<std::size_t>(jjp.nnz()) + 1);
      scratch.fp.resize(static_cast<std::size_t>(fpp.nnz()));
      scratch.mix.resize(static_cast<std::size_t>(mixp.nnz()));
      if (const auto k = d.lastNotFinitePoint(scratch)) return notFinite(*k);
    }
    whyNot = "the discrete adjoint is not finite";
    return false;
  }
  lambda0 = mu;
  return true;
}

}  // namespace sensode::steadystate
