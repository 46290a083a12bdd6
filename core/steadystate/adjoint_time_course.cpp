// SPDX-License-Identifier: MIT
#include "core/integrators/absolute_tolerances.h"
#include "core/steadystate/adjoint_time_course.h"

#include <cvodes/cvodes.h>
#include <cvodes/cvodes_ls.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>

#include "core/common/errors.h"
#include "core/integrators/sundials_linear_system.h"
#include "core/integrators/sundials_solver.h"
#include "core/steadystate/odesd_adjoint_pass.h"

namespace sensode::steadystate {

using integrators::sundials::checkCreated;
using CvodeApi = integrators::sundials::CvodeApi;
inline void checkCvode(int flag, const char* function) {
  integrators::sundials::check<CvodeApi>(flag, function);
}

namespace {

// Forward steps between CVODES's checkpoints. The backward pass recomputes every interval but
// the last from its checkpoint, about one more forward pass in all, unless one interval holds the
// whole run; CVODES allocates an interval's interpolation data (2 vectors per step) up front, at
// every pass. Measured: the generated 500-state network's adjoint took 10.7–13.5 s with 5000
// steps against 16–21 s with 200 (objective 3.5–4.4 s); on Bachmann, Alkan, Boehm and Zheng
// anything from 20 to 1000 steps was within the machine's ±30 % noise. So CVODES's usual 200
// for small models and 12 per state for large ones, within 64 MB.
long stepsPerCheckpoint(int nx) {
  constexpr long kBudgetBytes = 64L << 20;
  const long n = std::max(nx, 1);
  return std::clamp(12 * n, 200L, std::max(200L, kBudgetBytes / (2 * n * static_cast<long>(sizeof(double)))));
}

}  // namespace

struct AdjointTimeCourse::Impl {
  std::shared_ptr<const symbolic::CompiledModel> model;
  integrators::IntegratorOptions options;
  double t0 = 0;
  // Right-hand side evaluations take t = min(t, tEvalMax) (setLeftLimitAt).
  double tEvalMax = std::numeric_limits<double>::infinity();
  double at(double t) const { return std::min(t, tEvalMax); }
  std::vector<double> x0, theta;
  std::vector<double> times;
  std::vector<double> stateAtol;  // per-state absolute tolerances of the forward pass (or empty)
  int nx = 0, np = 0;
  // The model parameters whose quadratures are integrated (setQuadratureParameters; all np by
  // default): component k of qB is parameter quadParams[k].
  std::vector<int> quadParams;
  std::vector<double> jValues, fpValues;  // scratch (CSC values)
  // Both passes factorise their Newton matrices as the forward integrators do: dense LU for a
  // few states, KLU on the model's sparse pattern beyond (sundials_linear_system.h). The dense
  // 124×124 LU of Lang was 52 % of its adjoint gradient (GETRF and GETRS), which took 198 s.
  bool sparse = false;
  integrators::sundials::MergedPattern forwardPattern, backwardPattern;
  // Jᵀ's pattern, and for each of its entries the index of that entry in J's CSC values.
  symbolic::SparsePattern transposedPattern;
  std::vector<int> transposedSource;
  std::vector<double> jTransposedValues;
  ProgressMonitor monitor;
  // Set by a right-hand side that saw the token (or the callback) ask to stop; CVODES then fails
  // with a right-hand-side error, which the pass turns into Cancelled.
  bool cancelled = false;
  long rhsCalls = 0;

  // Declaration order = reverse destruction order (context first, cvode memory last).
  integrators::sundials::ContextPtr ctx;
  integrators::sundials::VectorPtr y, yB, qB, atolVector;
  integrators::sundials::MatrixPtr a, aB;
  integrators::sundials::LinearSolverPtr ls, lsB;
  integrators::sundials::CvodeMemPtr mem;
  int which = -1;

  // The discrete adjoint of odeSD (preferOdeSd), while it is the pass's method.
  std::unique_ptr<OdeSdAdjointPass> odesd;
  bool odesdPreferred = false;
  bool leftLimit = false;
  double leftLimitEnd = 0;  // setLeftLimitAt's tEnd
  std::string fallback;

  static Impl& self(void* p) { return *static_cast<Impl*>(p); }

  std::string cvodeMessage;  // CVODES's last error message (never printed), for details()

  // Called by both right-hand sides: the token every call (a relaxed atomic load), the
  // callback every 64th call (it may post to a GUI), which is still several times per step.
  bool stopRequested(double t) {
    if (monitor.token.cancelled()) cancelled = true;
    else if (monitor.callback && (++rhsCalls & 63) == 0 &&
             monitor.callback({t, times.empty() ? t : times.back(), 0}) == Decision::Abort)
      cancelled = true;
    return cancelled;
  }

  // J (forward pass) or −Jᵀ (backward pass) into the solver's matrix, dense or sparse.
  void writeJacobian(double t, const double* x, SUNMatrix m, bool transposedNegated) {
    model->jacobian(at(t), x, theta.data(), jValues.data());
    if (!transposedNegated) {
      integrators::sundials::scatterJacobian(m, sparse, forwardPattern, model->jacobianPattern(),
                                             jValues, 1.0);
      return;
    }
    for (std::size_t k = 0; k < transposedSource.size(); ++k)
      jTransposedValues[k] = jValues[static_cast<std::size_t>(transposedSource[k])];
    integrators::sundials::scatterJacobian(m, sparse, backwardPattern, transposedPattern,
                                           jTransposedValues, -1.0);
  }

  static int rhs(double t, N_Vector y, N_Vector ydot, void* user) {
    try {
      Impl& d = self(user);
      if (d.stopRequested(t)) return -1;
      // A NaN time (a NaN step size) or a NaN iterate is what SUNDIALS 6.4's Newton solver
      // retries without end (cvodes_integrator_impl.h, guardInputs): fatal here, where no
      // evaluation budget bounds the retries.
      if (!std::isfinite(t)) return -1;
      for (int i = 0; i < d.nx; ++i)
        if (!std::isfinite(N_VGetArrayPointer(y)[i])) return -1;
      d.model->rhs(d.at(t), N_VGetArrayPointer(y), d.theta.data(), N_VGetArrayPointer(ydot));
      const double* f = N_VGetArrayPointer(ydot);
      for (int i = 0; i < d.nx; ++i)
        if (!std::isfinite(f[i])) return 1;
      return 0;
    } catch (...) {
      return -1;
    }
  }
  static int jac(double t, N_Vector y, N_Vector, SUNMatrix j, void* user, N_Vector, N_Vector,
                 N_Vector) {
    try {
      self(user).writeJacobian(t, N_VGetArrayPointer(y), j, false);
      return 0;
    } catch (...) {
      return -1;
    }
  }
  // λ̇ = −Jᵀ λ.
  static int rhsB(double t, N_Vector y, N_Vector yB, N_Vector yBdot, void* user) {
    try {
      Impl& d = self(user);
      if (d.stopRequested(t) || !std::isfinite(t)) return -1;  // NaN time: as in rhs
      const symbolic::SparsePattern& pat = d.model->jacobianPattern();
      d.model->jacobian(d.at(t), N_VGetArrayPointer(y), d.theta.data(), d.jValues.data());
      const double* l = N_VGetArrayPointer(yB);
      double* out = N_VGetArrayPointer(yBdot);
      for (int i = 0; i < d.nx; ++i) out[i] = 0;
      for (int c = 0; c < pat.cols; ++c)
        for (int k = pat.colPtr[static_cast<std::size_t>(c)];
             k < pat.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
          out[c] -= d.jValues[static_cast<std::size_t>(k)] * l[pat.rowIdx[static_cast<std::size_t>(k)]];
      return 0;
    } catch (...) {
      return -1;
    }
  }
  static int jacB(double t, N_Vector y, N_Vector, N_Vector, SUNMatrix jb, void* user, N_Vector,
                  N_Vector, N_Vector) {
    try {
      self(user).writeJacobian(t, N_VGetArrayPointer(y), jb, true);
      return 0;
    } catch (...) {
      return -1;
    }
  }
  // q̇B = −f_θᵀ λ, so that qB(t0) = ∫_{t0}^{tN} λᵀ f_θ dt when integrated backward from 0
  // (only the columns of quadParams).
  static int quadB(double t, N_Vector y, N_Vector yB, N_Vector qBdot, void* user) {
    try {
      Impl& d = self(user);
      const symbolic::SparsePattern& pat = d.model->paramJacobianPattern();
      d.model->paramJacobian(d.at(t), N_VGetArrayPointer(y), d.theta.data(), d.fpValues.data());
      const double* l = N_VGetArrayPointer(yB);
      double* out = N_VGetArrayPointer(qBdot);
      for (std::size_t k = 0; k < d.quadParams.size(); ++k) {
        const auto c = static_cast<std::size_t>(d.quadParams[k]);
        double sum = 0;
        for (int e = pat.colPtr[c]; e < pat.colPtr[c + 1]; ++e)
          sum += d.fpValues[static_cast<std::size_t>(e)] * l[pat.rowIdx[static_cast<std::size_t>(e)]];
        out[k] = -sum;
      }
      return 0;
    } catch (...) {
      return -1;
    }
  }
};

AdjointTimeCourse::AdjointTimeCourse(std::shared_ptr<const symbolic::CompiledModel> model,
                                     const integrators::IntegratorOptions& options, double t0,
                                     std::vector<double> x0, std::vector<double> theta,
                                     const ProgressMonitor& monitor)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.monitor = monitor;
  d.model = std::move(model);
  d.options = options;
  d.t0 = t0;
  d.x0 = std::move(x0);
  d.theta = std::move(theta);
  d.nx = d.model->nx();
  d.np = d.model->np();
  d.quadParams.resize(static_cast<std::size_t>(d.np));
  std::iota(d.quadParams.begin(), d.quadParams.end(), 0);
  d.jValues.resize(static_cast<std::size_t>(d.model->jacobianPattern().nnz()));
  d.sparse = integrators::sundials::usesSparseSolver(d.options, d.nx);
  const symbolic::SparsePattern& jp = d.model->jacobianPattern();
  d.forwardPattern.build(jp, d.nx);
  // Jᵀ in CSC: column r of Jᵀ holds row r of J (rows sorted within a column, as J's are).
  symbolic::SparsePattern& tp = d.transposedPattern;
  const auto nnz = jp.rowIdx.size();
  tp.rows = jp.cols;
  tp.cols = jp.rows;
  tp.colPtr.assign(static_cast<std::size_t>(jp.rows) + 1, 0);
  for (int r : jp.rowIdx) ++tp.colPtr[static_cast<std::size_t>(r) + 1];
  for (std::size_t r = 0; r + 1 < tp.colPtr.size(); ++r) tp.colPtr[r + 1] += tp.colPtr[r];
  tp.rowIdx.assign(nnz, 0);
  d.transposedSource.assign(nnz, 0);
  std::vector<int> next(tp.colPtr.begin(), tp.colPtr.end() - 1);
  for (int c = 0; c < jp.cols; ++c) {
    const auto cc = static_cast<std::size_t>(c);
    for (int k = jp.colPtr[cc]; k < jp.colPtr[cc + 1]; ++k) {
      const auto row = static_cast<std::size_t>(jp.rowIdx[static_cast<std::size_t>(k)]);
      const auto pos = static_cast<std::size_t>(next[row]++);
      tp.rowIdx[pos] = c;
      d.transposedSource[pos] = k;
    }
  }
  d.jTransposedValues.assign(nnz, 0.0);
  d.backwardPattern.build(tp, d.nx);
  d.fpValues.resize(static_cast<std::size_t>(d.model->paramJacobianPattern().nnz()));
}

AdjointTimeCourse::~AdjointTimeCourse() = default;

void AdjointTimeCourse::setStateAbsoluteTolerances(std::vector<double> atol) {
  if (static_cast<int>(atol.size()) != impl_->nx)
    throw InvalidOptions("adjoint pass: " + std::to_string(atol.size()) +
                         " absolute tolerances for " + std::to_string(impl_->nx) + " states");
  for (double a : atol)
    if (!(a > 0) || !std::isfinite(a))
      throw InvalidOptions("adjoint pass: absolute tolerance " + std::to_string(a) +
                           " is not a positive number");
  impl_->stateAtol = std::move(atol);
}

void AdjointTimeCourse::setQuadratureParameters(std::vector<int> parameters) {
  for (int k : parameters)
    if (k < 0 || k >= impl_->np)
      throw InvalidOptions("adjoint pass: quadrature parameter index " + std::to_string(k) +
                           " is outside [0, " + std::to_string(impl_->np) + ")");
  std::sort(parameters.begin(), parameters.end());
  parameters.erase(std::unique(parameters.begin(), parameters.end()), parameters.end());
  impl_->quadParams = std::move(parameters);
}

void AdjointTimeCourse::preferOdeSd() { impl_->odesdPreferred = true; }

std::string AdjointTimeCourse::method() const {
  // A pass with nothing to integrate ran neither; it counts as the method asked for.
  const bool odesd = impl_->odesd || (impl_->odesdPreferred && impl_->fallback.empty() && !impl_->mem);
  return odesd ? "odeSD, discrete adjoint" : "CVODES, checkpointing, quadratures";
}

const std::string& AdjointTimeCourse::fallback() const { return impl_->fallback; }

std::vector<std::vector<double>> AdjointTimeCourse::forward(const std::vector<double>& times) {
  Impl& d = *impl_;
  d.times = times;
  std::vector<std::vector<double>> states;
  if (d.nx == 0 || times.empty() || times.back() <= d.t0) {
    states.assign(times.size(), d.x0);
    return states;
  }
  if (d.odesdPreferred) {
    if (!d.stateAtol.empty()) {
      d.fallback = "CVODES's adjoint: the pass has its own absolute tolerances per state";
    } else {
      d.odesd = std::make_unique<OdeSdAdjointPass>(d.model, d.options, d.t0, d.x0, d.theta,
                                                   d.monitor);
      if (d.leftLimit) d.odesd->setLeftLimitAt(d.leftLimitEnd);
      std::string whyNot;
      if (d.odesd->forward(times, states, whyNot)) {
        forwardSteps_ = d.odesd->forwardSteps();
        return states;
      }
      d.odesd.reset();
      d.fallback = "CVODES's adjoint instead of odeSD's: " + whyNot;
    }
  }
  return cvodesForward();
}

std::vector<std::vector<double>> AdjointTimeCourse::cvodesForward() {
  Impl& d = *impl_;
  const std::vector<double>& times = d.times;
  std::vector<std::vector<double>> states;
  d.ctx = integrators::sundials::newContext();
  d.y = integrators::sundials::newVector(d.x0, d.ctx.get());
  d.mem.reset(checkCreated(CVodeCreate(CV_BDF, d.ctx.get()), "CVodeCreate"));
  void* mem = d.mem.get();
  integrators::sundials::installMessageSink<CvodeApi>(mem, &d.cvodeMessage);
  checkCvode(CVodeInit(mem, &Impl::rhs, d.t0, d.y.get()), "CVodeInit");
  // atol per state as every forward integration has it (absolute_tolerances.h), unless the
  // caller set its own.
  if (d.stateAtol.empty())
    d.stateAtol = integrators::absoluteTolerances(*d.model, d.options.atol, d.t0, d.x0, d.theta);
  {
    d.atolVector = integrators::sundials::newVector(d.stateAtol, d.ctx.get());
    checkCvode(CVodeSVtolerances(mem, d.options.rtol, d.atolVector.get()), "CVodeSVtolerances");
  }
  checkCvode(CVodeSetUserData(mem, &d), "CVodeSetUserData");
  checkCvode(CVodeSetMaxNumSteps(mem, d.options.maxSteps), "CVodeSetMaxNumSteps");
  integrators::sundials::createLinearSystem(d.sparse, d.nx, d.forwardPattern, d.y.get(),
                                            d.ctx.get(), d.a, d.ls);
  checkCvode(CVodeSetLinearSolver(mem, d.ls.get(), d.a.get()), "CVodeSetLinearSolver");
  checkCvode(CVodeSetJacFn(mem, &Impl::jac), "CVodeSetJacFn");
  checkCvode(CVodeAdjInit(mem, stepsPerCheckpoint(d.nx), CV_HERMITE), "CVodeAdjInit");
  // The pass ends exactly at the last time instead of stepping past it: the caller may end a
  // pass where the right-hand side jumps (objective.cpp splits time courses there), and a step
  // across the jump pollutes the forward data the backward pass interpolates.
  checkCvode(CVodeSetStopTime(mem, times.back()), "CVodeSetStopTime");
  double t = d.t0;
  for (double tout : times) {
    if (tout > t) {
      int ncheck = 0;
      double tret = t;
      const int flag = CVodeF(mem, tout, d.y.get(), &tret, CV_NORMAL, &ncheck);
      if (flag < 0 && d.cancelled) throw Cancelled(tret);
      if (flag < 0)
        throw IntegrationFailure("adjoint forward pass: CVodeF failed at t = " + std::to_string(tret) +
                                     ": " + integrators::sundials::flagName<CvodeApi>(flag),
                                 tret, 0,
                                 integrators::sundials::flagDetails<CvodeApi>(flag, d.cvodeMessage));
      t = tout;
    }
    const double* y = N_VGetArrayPointer(d.y.get());
    states.emplace_back(y, y + d.nx);
  }
  long steps = 0;
  CVodeGetNumSteps(mem, &steps);
  forwardSteps_ = steps;
  return states;
}

void AdjointTimeCourse::setLeftLimitAt(double tEnd) {
  impl_->leftLimit = true;
  impl_->leftLimitEnd = tEnd;
  impl_->tEvalMax = std::nextafter(tEnd, -std::numeric_limits<double>::infinity());
}

void AdjointTimeCourse::backward(const std::vector<std::vector<double>>& jumps,
                                 std::vector<double>& lambda0, std::vector<double>& quadrature) {
  Impl& d = *impl_;
  const std::size_t n = d.times.size();
  lambda0.assign(static_cast<std::size_t>(d.nx), 0.0);
  // Continue the caller's sum (a time course split into passes): the quadrature's error test
  // weighs rtol·|Q| + atol, and a pass started from Q = 0 asks the first steps for an absolute
  // accuracy of atol on an integral of order one (Weber's pass before t = 24: too much work).
  if (quadrature.size() != static_cast<std::size_t>(d.np))
    quadrature.assign(static_cast<std::size_t>(d.np), 0.0);
  if (n == 0) return;
  if (d.odesd) {
    std::string whyNot;
    std::vector<double> q = quadrature;
    if (d.odesd->backward(jumps, d.quadParams, lambda0, q, whyNot)) {
      quadrature = std::move(q);
      backwardSteps_ = d.odesd->forwardSteps();
      return;
    }
    // The backward sweep failed (a singular Newton matrix, a non-finite derivative): the pass
    // again by CVODES, forward and backward. The caller's jumps stay those of odeSD's states,
    // which differ from CVODES's by the tolerances.
    d.odesd.reset();
    d.fallback = "CVODES's adjoint instead of odeSD's: " + whyNot;
    lambda0.assign(static_cast<std::size_t>(d.nx), 0.0);
    cvodesForward();
  }
  if (!d.mem) {  // every time equals t0: no integration
    for (const auto& jmp : jumps)
      for (int i = 0; i < d.nx; ++i) lambda0[static_cast<std::size_t>(i)] += jmp[static_cast<std::size_t>(i)];
    return;
  }
  void* mem = d.mem.get();
  d.yB = integrators::sundials::newVector(d.nx, d.ctx.get());
  const int nq = static_cast<int>(d.quadParams.size());
  d.qB = integrators::sundials::newVector(std::max(nq, 1), d.ctx.get());
  double* l = N_VGetArrayPointer(d.yB.get());
  double* q = N_VGetArrayPointer(d.qB.get());
  for (int i = 0; i < d.nx; ++i) l[i] = jumps[n - 1][static_cast<std::size_t>(i)];
  for (int k = 0; k < nq; ++k) q[k] = quadrature[static_cast<std::size_t>(d.quadParams[static_cast<std::size_t>(k)])];
  double t = d.times[n - 1];
  checkCvode(CVodeCreateB(mem, CV_BDF, &d.which), "CVodeCreateB");
  checkCvode(CVodeInitB(mem, d.which, &Impl::rhsB, t, d.yB.get()), "CVodeInitB");
  checkCvode(CVodeSStolerancesB(mem, d.which, d.options.rtol, d.options.atol), "CVodeSStolerancesB");
  checkCvode(CVodeSetUserDataB(mem, d.which, &d), "CVodeSetUserDataB");
  checkCvode(CVodeSetMaxNumStepsB(mem, d.which, d.options.maxSteps), "CVodeSetMaxNumStepsB");
  integrators::sundials::createLinearSystem(d.sparse, d.nx, d.backwardPattern, d.yB.get(),
                                            d.ctx.get(), d.aB, d.lsB);
  checkCvode(CVodeSetLinearSolverB(mem, d.which, d.lsB.get(), d.aB.get()), "CVodeSetLinearSolverB");
  checkCvode(CVodeSetJacFnB(mem, d.which, &Impl::jacB), "CVodeSetJacFnB");
  const bool quad = nq > 0;
  if (quad) {
    checkCvode(CVodeQuadInitB(mem, d.which, &Impl::quadB, d.qB.get()), "CVodeQuadInitB");
    checkCvode(CVodeQuadSStolerancesB(mem, d.which, d.options.rtol, d.options.atol),
               "CVodeQuadSStolerancesB");
    checkCvode(CVodeSetQuadErrConB(mem, d.which, SUNTRUE), "CVodeSetQuadErrConB");
  }
  for (std::size_t jj = n; jj-- > 0;) {
    const double target = jj > 0 ? d.times[jj - 1] : d.t0;
    if (target < t) {
      const int flag = CVodeB(mem, target, CV_NORMAL);
      if (flag < 0 && d.cancelled) throw Cancelled(target);
      if (flag < 0)
        throw IntegrationFailure("adjoint backward pass: CVodeB failed towards t = " +
                                     std::to_string(target) + ": " +
                                     integrators::sundials::flagName<CvodeApi>(flag),
                                 target, 0,
                                 integrators::sundials::flagDetails<CvodeApi>(flag, d.cvodeMessage));
      double tret = target;
      checkCvode(CVodeGetB(mem, d.which, &tret, d.yB.get()), "CVodeGetB");
      if (quad) checkCvode(CVodeGetQuadB(mem, d.which, &tret, d.qB.get()), "CVodeGetQuadB");
      t = target;
    }
    if (jj == 0) break;
    for (int i = 0; i < d.nx; ++i) l[i] += jumps[jj - 1][static_cast<std::size_t>(i)];
    if (target > d.t0) {
      checkCvode(CVodeReInitB(mem, d.which, t, d.yB.get()), "CVodeReInitB");
      if (quad) checkCvode(CVodeQuadReInitB(mem, d.which, d.qB.get()), "CVodeQuadReInitB");
    }
  }
  lambda0.assign(l, l + d.nx);
  if (quad)
    for (int k = 0; k < nq; ++k) quadrature[static_cast<std::size_t>(d.quadParams[static_cast<std::size_t>(k)])] = q[k];
  long steps = 0;
  if (CVodeGetAdjCVodeBmem(mem, d.which)) CVodeGetNumSteps(CVodeGetAdjCVodeBmem(mem, d.which), &steps);
  backwardSteps_ = steps;
}

}  // namespace sensode::steadystate
