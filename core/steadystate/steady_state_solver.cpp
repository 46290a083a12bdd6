// SPDX-License-Identifier: MIT
#include "core/integrators/absolute_tolerances.h"
#include "core/steadystate/steady_state_solver.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include <Eigen/Eigenvalues>
#include <Eigen/SparseLU>

#include "core/common/errors.h"

namespace sensode::steadystate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool allFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double d) { return std::isfinite(d); });
}

// sqrt((1/n) Σ (v_i / (rtol|x_i| + atol))²), the criterion's weighted RMS norm.
double weightedNorm(const double* v, const std::vector<double>& x, double rtol,
                    const std::vector<double>& atol) {
  if (x.empty()) return 0;
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double q = v[i] / (rtol * std::abs(x[i]) + atol[i]);
    s += q * q;
  }
  return std::sqrt(s / static_cast<double>(x.size()));
}

double maxAbs(const std::vector<double>& v) {
  double m = 0;
  for (double d : v) m = std::max(m, std::abs(d));
  return m;
}

bool isSpecies(const symbolic::StateVar& s) {
  return s.kind == symbolic::StateKind::SpeciesAmount ||
         s.kind == symbolic::StateKind::SpeciesConcentration;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Options and enums

const char* toString(SteadyStateMethod m) {
  switch (m) {
    case SteadyStateMethod::Auto: return "auto";
    case SteadyStateMethod::Newton: return "newton";
    case SteadyStateMethod::Simulation: return "simulation";
  }
  return "unknown";
}

std::optional<SteadyStateMethod> steadyStateMethodFromString(const std::string& s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (l == "auto") return SteadyStateMethod::Auto;
  if (l == "newton") return SteadyStateMethod::Newton;
  if (l == "simulation") return SteadyStateMethod::Simulation;
  return std::nullopt;
}

const char* toString(FoundBy f) {
  switch (f) {
    case FoundBy::None: return "none";
    case FoundBy::Newton: return "newton";
    case FoundBy::Simulation: return "simulation";
    case FoundBy::Fallback: return "fallback";
  }
  return "unknown";
}

const char* toString(SteadyStateSensitivityMethod m) {
  switch (m) {
    case SteadyStateSensitivityMethod::Auto: return "auto";
    case SteadyStateSensitivityMethod::LinearSolve: return "linear solve";
    case SteadyStateSensitivityMethod::Integration: return "integration";
  }
  return "unknown";
}

std::optional<std::string> SteadyStateOptions::validate() const {
  const auto bad = [](const char* field, double v, const char* constraint) {
    return std::string("SteadyStateOptions::") + field + " = " + num(v) +
           ". Violated constraint: " + constraint;
  };
  if (!(rtol > 0) || !std::isfinite(rtol)) return bad("rtol", rtol, "rtol > 0");
  if (!(atol > 0) || !std::isfinite(atol)) return bad("atol", atol, "atol > 0");
  if (maxNewtonIterations < 1)
    return bad("maxNewtonIterations", maxNewtonIterations, "maxNewtonIterations >= 1");
  if (!(minDamping > 0 && minDamping <= 1))
    return bad("minDamping", minDamping, "0 < minDamping <= 1");
  if (!(maxSimulationTime >= 10) || !std::isfinite(maxSimulationTime))
    return bad("maxSimulationTime", maxSimulationTime, "finite and >= 10");
  if (maxEigenDimension < 0)
    return bad("maxEigenDimension", maxEigenDimension, "maxEigenDimension >= 0");
  if (auto m = integrator.validate()) return "SteadyStateOptions::integrator: " + *m;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The solver

namespace {

struct NewtonOutcome {
  bool converged = false;
  std::string failure;  // why not
  int iterations = 0;
};

class Solver {
 public:
  Solver(const ConservedModel& m, const std::vector<double>& theta, const SteadyStateOptions& o,
         const ProgressMonitor& monitor, const Eigen::MatrixXd* dxStart)
      : m_(m), theta_(theta), o_(o), monitor_(monitor), dxStart_(dxStart) {}

  SteadyStateSolution run(const std::vector<double>* xStart);

 private:
  std::vector<double> rhs(const std::vector<double>& xI) const {
    std::vector<double> f(xI.size());
    if (!xI.empty()) m_.reduced().rhs(0.0, xI.data(), pr_.data(), f.data());
    return f;
  }
  double fNorm(const std::vector<double>& f, const std::vector<double>& x) const {
    return weightedNorm(f.data(), x, o_.rtol, atolI_);
  }
  NewtonOutcome newton(std::vector<double>& xI);
  // Column scale of J_r for ScaledLu: each state's magnitude, not below the criterion's atol
  // (the units in which the criterion measures it).
  Eigen::VectorXd stateScale(const std::vector<double>& xI) const {
    Eigen::VectorXd c(static_cast<Eigen::Index>(xI.size()));
    for (std::size_t i = 0; i < xI.size(); ++i)
      c(static_cast<Eigen::Index>(i)) = std::max(std::abs(xI[i]), atolI_[i]);
    return c;
  }
  // Checks a converged root: sign of the full state and stability. Empty = accepted.
  std::string acceptRoot(const std::vector<double>& xI);
  bool simulate(bool newtonAtCheckpoints, std::vector<double>& xI);
  void finishFound(const std::vector<double>& xI);
  // dx*/dθ by forward sensitivities of the full model from (x₀, S₀) until ẋ and every column of
  // Ṡ = J S + ∂f/∂θ meet the criterion; empty on success (s_.sensitivities set), else why not.
  std::string integrateSensitivities();
  std::string describeNoSteadyState() const;
  std::string stateId(int reducedIndex) const {
    return m_.reduced().system().states[static_cast<std::size_t>(reducedIndex)].id;
  }

  const ConservedModel& m_;
  const std::vector<double>& theta_;
  const SteadyStateOptions& o_;
  const ProgressMonitor& monitor_;
  const Eigen::MatrixXd* dxStart_;
  std::vector<double> pr_;
  SteadyStateSolution s_;

  // Simulation record for the diagnosis.
  struct Checkpoint {
    double t, maxAbs, fNorm;
  };
  std::vector<Checkpoint> checkpoints_;
  std::string simulationFailure;
  std::vector<std::vector<double>> window_;  // samples of x_I over the last simulated decade
  std::vector<double> windowTimes_;
  std::string lastNewtonFailure_;
  std::string unstableRoot_;  // description of an unstable root Newton found, if any
  std::vector<double> x0I_;
  // atol per state (absolute_tolerances.h: atol × size for a species read in concentration), of
  // the full and of the independent states: the criteria hold for concentrations, not amounts.
  std::vector<double> atolFull_, atolI_;
  std::vector<double> x0Full_;  // the full start state (x₀(θ) or xStart)
};

NewtonOutcome Solver::newton(std::vector<double>& xI) {
  NewtonOutcome out;
  ++s_.newtonRuns;
  const auto n = xI.size();
  if (n == 0) {
    out.converged = true;
    return out;
  }
  std::vector<double> f = rhs(xI);
  if (!allFinite(f)) {
    out.failure = "the rates are not finite at the start point";
    return out;
  }
  SparseLu lu;
  for (int it = 0; it < o_.maxNewtonIterations; ++it) {
    monitor_.check({0.0, 0.0, it});
    const Eigen::SparseMatrix<double> j = m_.jacobian(xI, pr_);
    if (!factorize(lu, j)) {
      out.failure = "the Jacobian J_r is singular at the iterate (after " +
                    std::to_string(out.iterations) + " iterations)";
      return out;
    }
    const Eigen::Map<const Eigen::VectorXd> fv(f.data(), static_cast<Eigen::Index>(n));
    const Eigen::VectorXd delta = -lu.solve(fv);
    if (!delta.allFinite()) {
      out.failure = "the Newton step is not finite (J_r numerically singular)";
      return out;
    }
    const double fn = fNorm(f, xI);
    const double dn = weightedNorm(delta.data(), xI, o_.rtol, atolI_);
    if (fn < 1 && dn < 1) {
      out.converged = true;
      return out;
    }
    // Damped step: the first λ = 1, ½, ¼, ... that decreases ‖f_r‖_w (same weights).
    double lambda = 1.0;
    bool accepted = false;
    std::vector<double> xTry(n), fTry;
    while (lambda >= o_.minDamping) {
      for (std::size_t i = 0; i < n; ++i)
        xTry[i] = xI[i] + lambda * delta(static_cast<Eigen::Index>(i));
      fTry = rhs(xTry);
      if (allFinite(fTry) && allFinite(xTry) &&
          weightedNorm(fTry.data(), xI, o_.rtol, atolI_) < fn) {
        accepted = true;
        break;
      }
      lambda *= 0.5;
    }
    ++out.iterations;
    ++s_.newtonIterations;
    if (!accepted) {
      out.failure = "the line search found no decrease of the weighted rate norm (" + num(fn) +
                    ") along the Newton direction down to damping " + num(o_.minDamping);
      return out;
    }
    xI = xTry;
    f = fTry;
  }
  out.failure = "no convergence in " + std::to_string(o_.maxNewtonIterations) +
                " Newton iterations (weighted rate norm " + num(fNorm(f, xI)) + ")";
  return out;
}

std::string Solver::acceptRoot(const std::vector<double>& xI) {
  const std::vector<double> x = m_.expandState(xI, pr_);
  double scale = 0;
  const auto& states = m_.full().system().states;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (isSpecies(states[i])) scale = std::max(scale, std::abs(x[i]));
  if (!o_.acceptNegative) {
    for (std::size_t i = 0; i < x.size(); ++i)
      if (isSpecies(states[i]) && x[i] < -(atolFull_[i] + o_.rtol * scale))
        return "non-physical root: species '" + states[i].id + "' = " + num(x[i]) +
               " < 0 (rejected; accept with acceptNegative)";
  }
  if (!o_.acceptUnstable && !xI.empty() &&
      static_cast<int>(xI.size()) <= o_.maxEigenDimension) {
    const Eigen::MatrixXd j(m_.jacobian(xI, pr_));
    Eigen::EigenSolver<Eigen::MatrixXd> es(j, false);
    if (es.info() == Eigen::Success) {
      const double maxRe = es.eigenvalues().real().maxCoeff();
      const double size = es.eigenvalues().cwiseAbs().maxCoeff();
      if (maxRe > 1e-10 * std::max(1.0, size)) {
        std::string where;
        for (std::size_t i = 0; i < x.size() && i < 6; ++i)
          where += (i ? ", " : "") + states[i].id + " = " + num(x[i]);
        if (x.size() > 6) where += ", ...";
        unstableRoot_ = "an unstable fixed point exists at (" + where +
                        ") with max Re(eigenvalue) = " + num(maxRe);
        return "unstable root: J_r has an eigenvalue with real part " + num(maxRe) +
               " > 0, so trajectories leave it (accept with acceptUnstable)";
      }
    }
  }
  return {};
}

bool Solver::simulate(bool newtonAtCheckpoints, std::vector<double>& xI) {
  std::vector<double> x = x0I_;
  if (x.empty()) return false;
  auto integrator = integrators::makeIntegrator(integrators::Method::Cvodes);
  integrator->initialize(m_.reducedPtr(), o_.integrator, 0.0, x, pr_);
  checkpoints_.push_back({0.0, maxAbs(x), fNorm(rhs(x), x)});
  double tPrev = 0;
  for (double t = 10; t <= o_.maxSimulationTime * (1 + 1e-12); t *= 10) {
    const bool last = t * 10 > o_.maxSimulationTime * (1 + 1e-12);
    try {
      if (last) {
        // Sample the last decade for the diagnosis (oscillation vs slow approach).
        constexpr int kSamples = 2000;
        window_.clear();
        windowTimes_.clear();
        for (int k = 1; k <= kSamples; ++k) {
          const double tk = tPrev + (t - tPrev) * k / kSamples;
          integrator->advanceTo(tk, x, monitor_);
          window_.push_back(x);
          windowTimes_.push_back(tk);
        }
      } else {
        integrator->advanceTo(t, x, monitor_);
      }
    } catch (const IntegrationFailure& e) {
      simulationFailure = e.what();
      s_.integratorStats = integrator->stats();
      s_.simulationSteps = integrator->stats().steps;
      s_.simulatedTime = integrator->currentTime();
      return false;
    }
    s_.integratorStats = integrator->stats();
    s_.simulationSteps = integrator->stats().steps;
    s_.simulatedTime = t;
    const std::vector<double> f = rhs(x);
    const double fn = fNorm(f, x);
    checkpoints_.push_back({t, maxAbs(x), fn});
    tPrev = t;
    if (fn < 1) {
      // Newton-step check with J_r at hand.
      const Eigen::VectorXd xs = stateScale(x);
      const ScaledLu lu(m_.jacobian(x, pr_), &xs);
      if (lu.ok()) {
        const Eigen::VectorXd d = lu.solve(
            Eigen::Map<const Eigen::VectorXd>(f.data(), static_cast<Eigen::Index>(f.size())));
        if (d.allFinite() && weightedNorm(d.data(), x, o_.rtol, atolI_) < 1 &&
            acceptRoot(x).empty()) {
          xI = x;
          s_.path = "simulation to t = " + num(t);
          return true;
        }
      } else if (acceptRoot(x).empty()) {
        // No Jacobian at hand (J_r singular): the rate criterion alone (§8.1).
        xI = x;
        s_.path = "simulation to t = " + num(t) + " (J_r singular: Newton-step check skipped)";
        return true;
      }
    }
    if (newtonAtCheckpoints) {
      std::vector<double> xn = x;
      const NewtonOutcome r = newton(xn);
      if (r.converged) {
        const std::string why = acceptRoot(xn);
        if (why.empty()) {
          xI = xn;
          s_.path = "simulation to t = " + num(t) + ", then Newton";
          return true;
        }
        lastNewtonFailure_ = why;
      } else {
        lastNewtonFailure_ = r.failure;
      }
    }
  }
  return false;
}

std::string Solver::describeNoSteadyState() const {
  const std::size_t nc = checkpoints_.size();
  // Unbounded growth: the largest component grew at least tenfold over the last decade, or the
  // integration failed after growing.
  if (!simulationFailure.empty()) {
    if (nc >= 2 && checkpoints_[nc - 1].maxAbs > 2 * checkpoints_[nc - 2].maxAbs &&
        checkpoints_[nc - 1].maxAbs > 1e3 * (1 + checkpoints_[0].maxAbs))
      return "unbounded growth: max |x| rose from " + num(checkpoints_[nc - 2].maxAbs) +
             " at t = " + num(checkpoints_[nc - 2].t) + " to " + num(checkpoints_[nc - 1].maxAbs) +
             " at t = " + num(checkpoints_[nc - 1].t) + ", then the simulation failed (" +
             simulationFailure + ")";
    return "the simulation failed before a steady state was reached: " + simulationFailure;
  }
  if (nc >= 3) {
    const Checkpoint& a = checkpoints_[nc - 2];
    const Checkpoint& b = checkpoints_[nc - 1];
    if (b.maxAbs > 5 * a.maxAbs && a.maxAbs > 2 * checkpoints_[nc - 3].maxAbs)
      return "unbounded growth: max |x| rose from " + num(a.maxAbs) + " at t = " + num(a.t) +
             " to " + num(b.maxAbs) + " at t = " + num(b.t) + " and keeps rising";
  }
  // Oscillation: bounded, a component keeps turning with non-decaying amplitude.
  if (window_.size() >= 8) {
    const std::size_t ns = window_.size(), half = ns / 2;
    const std::size_t n = window_[0].size();
    for (std::size_t i = 0; i < n; ++i) {
      double lo1 = kInf, hi1 = -kInf, lo2 = kInf, hi2 = -kInf, mean = 0;
      for (std::size_t k = 0; k < ns; ++k) mean += window_[k][i];
      mean /= static_cast<double>(ns);
      int crossings = 0;
      for (std::size_t k = 0; k < ns; ++k) {
        const double v = window_[k][i];
        if (k < half) {
          lo1 = std::min(lo1, v);
          hi1 = std::max(hi1, v);
        } else {
          lo2 = std::min(lo2, v);
          hi2 = std::max(hi2, v);
        }
        if (k > 0 && (window_[k - 1][i] - mean) * (v - mean) < 0) ++crossings;
      }
      const double amp1 = hi1 - lo1, amp2 = hi2 - lo2;
      const double scale = atolI_[i] + o_.rtol * std::abs(mean);
      if (crossings >= 10 && amp2 > 1e3 * scale && amp2 >= 0.5 * amp1) {
        std::string m = "oscillation: the state stays bounded but '" + stateId(static_cast<int>(i)) +
                        "' keeps oscillating (amplitude " + num(amp2) + " around " + num(mean) +
                        ", " + std::to_string(crossings) + " crossings of its mean between t = " +
                        num(windowTimes_.front()) + " and " + num(windowTimes_.back()) + ")";
        if (!unstableRoot_.empty()) m += "; " + unstableRoot_;
        return m;
      }
    }
  }
  if (nc >= 1) {
    std::string m = "no convergence by t = " + num(checkpoints_[nc - 1].t) +
                    ": the weighted rate norm is still " + num(checkpoints_[nc - 1].fNorm) +
                    " (criterion < 1)";
    if (!lastNewtonFailure_.empty()) m += "; Newton from the simulated state: " + lastNewtonFailure_;
    return m;
  }
  return lastNewtonFailure_.empty() ? std::string("no steady state found") : lastNewtonFailure_;
}

void Solver::finishFound(const std::vector<double>& xI) {
  s_.found = true;
  s_.reducedState = xI;
  s_.state = m_.expandState(xI, pr_);
  const std::vector<double> f = rhs(xI);
  s_.residualNorm = fNorm(f, xI);
  s_.newtonStepNorm = kNaN;
  const std::vector<double> x = s_.state;
  const auto& states = m_.full().system().states;
  double scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (isSpecies(states[i])) scale = std::max(scale, std::abs(x[i]));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (isSpecies(states[i]) && x[i] < -(atolFull_[i] + o_.rtol * scale)) s_.negative = true;
  if (xI.empty()) {
    s_.conditionEstimate = 1;
    s_.maxRealEigenvalue = kNaN;
    s_.stable = true;
  } else {
    const Eigen::SparseMatrix<double> j = m_.jacobian(xI, pr_);
    s_.conditionEstimate = conditionEstimate1(j);
    const Eigen::VectorXd xs = stateScale(xI);
    const ScaledLu lu(j, &xs);
    s_.scaledConditionEstimate = lu.condition();
    // States below the criterion's atol are 0 to it, so J_r must be regular there too: on a
    // curve of steady states (an enzyme that decayed to 1e-15 keeps A → B going at rate 1e-15)
    // J_r(x*) in the states' units can look regular while the linear solve's answer is noise.
    bool ok = lu.ok();
    {
      std::vector<double> xz = xI;
      bool clamped = false;
      for (std::size_t i = 0; i < xz.size(); ++i)
        if (std::abs(xz[i]) < atolI_[i] && xz[i] != 0) {
          xz[i] = 0;
          clamped = true;
        }
      if (clamped) {
        const ScaledLu atZero(m_.jacobian(xz, pr_), &xs);
        s_.scaledConditionEstimate = std::max(s_.scaledConditionEstimate, atZero.condition());
        ok = ok && atZero.ok();
      }
    }
    if (ok) {
      const Eigen::VectorXd d = lu.solve(
          Eigen::Map<const Eigen::VectorXd>(f.data(), static_cast<Eigen::Index>(f.size())));
      s_.newtonStepNorm = weightedNorm(d.data(), xI, o_.rtol, atolI_);
    }
    if (static_cast<int>(xI.size()) <= o_.maxEigenDimension) {
      Eigen::EigenSolver<Eigen::MatrixXd> es(Eigen::MatrixXd(j), false);
      if (es.info() == Eigen::Success) {
        const Eigen::VectorXcd ev = es.eigenvalues();
        for (Eigen::Index k = 0; k < ev.size(); ++k) {
          s_.eigenReal.push_back(ev(k).real());
          s_.eigenImag.push_back(ev(k).imag());
        }
        s_.maxRealEigenvalue = ev.real().maxCoeff();
        s_.stable = s_.maxRealEigenvalue < 0;
      } else {
        s_.maxRealEigenvalue = kNaN;
      }
    } else {
      s_.maxRealEigenvalue = kNaN;
    }
    if (o_.sensitivities &&
        (!ok || o_.sensitivityMethod == SteadyStateSensitivityMethod::Integration)) {
      const std::string singular = "J_r is singular at x* (condition estimate " +
                                   num(s_.scaledConditionEstimate) +
                                   " with J_r scaled to the states' units)";
      if (o_.sensitivityMethod == SteadyStateSensitivityMethod::LinearSolve) {
        s_.sensitivityMessage = "no steady-state sensitivities: " + singular;
      } else {
        const std::string why = integrateSensitivities();
        const std::string what = ok ? std::string("dx*/dθ by forward sensitivities (requested)")
                                    : singular + ": dx*/dθ by forward sensitivities";
        if (why.empty()) {
          s_.sensitivityFallback =
              what + " integrated to t = " + num(s_.sensitivityIntegrationTime) +
              (!o_.sensitivityParameters
                   ? std::string()
                   : " (" + std::to_string(o_.sensitivityParameters->size()) + " of " +
                         std::to_string(m_.np()) + " parameters)");
          return;
        }
        s_.sensitivityMessage = "no steady-state sensitivities: " + what + " failed: " + why;
      }
    }
  }
  if (o_.sensitivities && s_.sensitivityMessage.empty()) {
    const Eigen::MatrixXd s0 = dxStart_ ? *dxStart_ : m_.initialSensitivity(theta_);
    const Eigen::MatrixXd dT = m_.totalsSensitivity(s0);
    Eigen::MatrixXd sI = Eigen::MatrixXd::Zero(m_.nr(), m_.np());
    if (!xI.empty()) {
      const Eigen::VectorXd xs = stateScale(xI);
      const ScaledLu lu(m_.jacobian(xI, pr_), &xs);
      const Eigen::MatrixXd fTheta = m_.totalParamJacobian(xI, pr_, dT);
      sI = -lu.solve(fTheta);
    }
    s_.sensitivities = m_.expandSensitivity(sI, dT);
  }
}

std::string Solver::integrateSensitivities() {
  const symbolic::CompiledModel& full = m_.full();
  const int nx = full.nx(), np = full.np();
  const Eigen::MatrixXd s0 = dxStart_ ? *dxStart_ : m_.initialSensitivity(theta_);
  std::vector<int> columns;
  if (o_.sensitivityParameters)
    columns = *o_.sensitivityParameters;
  else
    for (int k = 0; k < np; ++k) columns.push_back(k);
  const int ns = static_cast<int>(columns.size());
  std::vector<double> x = x0Full_, sv(static_cast<std::size_t>(nx) * columns.size());
  for (int c = 0; c < ns; ++c)
    for (int i = 0; i < nx; ++i)
      sv[static_cast<std::size_t>(c) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i)] =
          s0(i, columns[static_cast<std::size_t>(c)]);
  auto integrator = integrators::makeIntegrator(integrators::Method::Cvodes);
  integrator->initialize(m_.fullPtr(), o_.integrator, 0.0, x, theta_);
  // S in the error test: on a curve of steady states, x* and dx*/dθ depend on the whole
  // transient, not only on where it ends.
  if (ns > 0) integrator->enableSensitivities(columns, sv, true);
  const symbolic::SparsePattern& jp = full.jacobianPattern();
  const symbolic::SparsePattern& fp = full.paramJacobianPattern();
  std::vector<double> f(static_cast<std::size_t>(nx)), jv(static_cast<std::size_t>(jp.nnz())),
      fv(static_cast<std::size_t>(fp.nnz())), sdot(static_cast<std::size_t>(nx)),
      sk(static_cast<std::size_t>(nx));
  double fn = kInf, worstS = kInf;
  for (double t = 10; t <= o_.maxSimulationTime * (1 + 1e-12); t *= 10) {
    try {
      integrator->advanceTo(t, x, monitor_);
    } catch (const IntegrationFailure& e) {
      return std::string("the integration failed: ") + e.what();
    }
    if (ns > 0) integrator->sensitivities(sv);
    full.rhs(t, x.data(), theta_.data(), f.data());
    fn = weightedNorm(f.data(), x, o_.rtol, atolFull_);
    if (!(fn < 1)) continue;
    // Ṡ_k = J S_k + ∂f/∂θ_k with the criterion's weights relative to S_k.
    full.jacobian(t, x.data(), theta_.data(), jv.data());
    full.paramJacobian(t, x.data(), theta_.data(), fv.data());
    worstS = 0;
    for (int c = 0; c < ns; ++c) {
      const int k = columns[static_cast<std::size_t>(c)];
      std::fill(sdot.begin(), sdot.end(), 0.0);
      const double* s = sv.data() + static_cast<std::size_t>(c) * static_cast<std::size_t>(nx);
      for (int col = 0; col < jp.cols; ++col)
        for (int e = jp.colPtr[static_cast<std::size_t>(col)];
             e < jp.colPtr[static_cast<std::size_t>(col) + 1]; ++e)
          sdot[static_cast<std::size_t>(jp.rowIdx[static_cast<std::size_t>(e)])] +=
              jv[static_cast<std::size_t>(e)] * s[col];
      for (int e = fp.colPtr[static_cast<std::size_t>(k)];
           e < fp.colPtr[static_cast<std::size_t>(k) + 1]; ++e)
        sdot[static_cast<std::size_t>(fp.rowIdx[static_cast<std::size_t>(e)])] +=
            fv[static_cast<std::size_t>(e)];
      sk.assign(s, s + nx);
      worstS = std::max(worstS, weightedNorm(sdot.data(), sk, o_.rtol, atolFull_));
    }
    if (!(worstS < 1)) continue;
    // It must be the steady state the solver found (not another one of a multistable system).
    // On a curve of steady states the end point carries the trajectory's integration error, so
    // the weights use the looser of the criterion's and the integrator's tolerances.
    const double rtol = std::max(o_.rtol, o_.integrator.rtol);
    const double atolFactor = std::max(1.0, o_.integrator.atol / o_.atol);
    double dist = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      dist = std::max(dist, std::abs(x[i] - s_.state[i]) /
                                (rtol * std::abs(s_.state[i]) + atolFactor * atolFull_[i]));
    if (!(dist < 100))
      return "the trajectory from the initial state ends at another steady state than x* "
             "(weighted distance " + num(dist) + " at t = " + num(t) + ")";
    s_.sensitivityIntegrationTime = t;
    s_.sensitivities = Eigen::MatrixXd::Zero(nx, np);
    for (int c = 0; c < ns; ++c)
      for (int i = 0; i < nx; ++i)
        s_.sensitivities(i, columns[static_cast<std::size_t>(c)]) =
            sv[static_cast<std::size_t>(c) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i)];
    return {};
  }
  return "no convergence by t = " + num(o_.maxSimulationTime) + " (weighted norm of ẋ " +
         num(fn) + ", of Ṡ " + num(worstS) + "; criterion < 1)";
}

SteadyStateSolution Solver::run(const std::vector<double>* xStart) {
  const symbolic::CompiledModel& full = m_.full();
  if (static_cast<int>(theta_.size()) != full.np())
    throw InvalidOptions("steady state: " + std::to_string(theta_.size()) +
                         " parameter values for a model with " + std::to_string(full.np()));
  if (auto why = o_.validate()) throw InvalidOptions(*why);

  std::vector<double> x0(static_cast<std::size_t>(full.nx()));
  if (xStart) {
    x0 = *xStart;
  } else {
    full.initialState(0.0, theta_.data(), x0.data());
  }
  x0Full_ = x0;
  pr_ = m_.reducedParameters(theta_, x0);
  atolFull_ = integrators::absoluteTolerances(full, o_.atol, 0.0, x0, theta_);
  atolI_.clear();
  for (int i : m_.independentStates()) atolI_.push_back(atolFull_[static_cast<std::size_t>(i)]);
  {
    const Eigen::VectorXd t = m_.totals(x0);
    for (int r = 0; r < m_.nc(); ++r)
      s_.conservationLaws.push_back(m_.analysis().descriptions[static_cast<std::size_t>(r)] +
                                    " = " + num(t(r)));
  }
  x0I_ = m_.reduceState(x0);
  s_.state = x0;
  s_.reducedState = x0I_;
  s_.reducedParameters = pr_;
  s_.maxRealEigenvalue = kNaN;
  s_.newtonStepNorm = kNaN;
  if (!allFinite(x0)) {
    s_.reason = "the initial state is not finite";
    return s_;
  }
  if (!m_.reduced().isAutonomous()) {
    s_.reason = "the model depends explicitly on time, so it has no steady state in the usual "
                "sense";
    return s_;
  }

  const auto tryNewtonFrom = [&](const std::vector<double>& start, std::vector<double>& out,
                                 std::string& failure) {
    out = start;
    const NewtonOutcome r = newton(out);
    if (!r.converged) {
      failure = "Newton: " + r.failure;
      return false;
    }
    const std::string why = acceptRoot(out);
    if (!why.empty()) {
      failure = "Newton: " + why;
      return false;
    }
    return true;
  };

  std::vector<double> xI;
  std::string firstFailure;
  switch (o_.method) {
    case SteadyStateMethod::Auto:
    case SteadyStateMethod::Newton: {
      if (tryNewtonFrom(x0I_, xI, firstFailure)) {
        s_.foundBy = FoundBy::Newton;
        s_.path = "Newton from the initial state";
        break;
      }
      lastNewtonFailure_ = firstFailure;
      if (o_.method == SteadyStateMethod::Newton) {
        s_.reason = firstFailure;
        return s_;
      }
      s_.fallbackReason = firstFailure;
      if (simulate(true, xI)) {
        s_.foundBy = FoundBy::Fallback;
        break;
      }
      s_.reason = describeNoSteadyState();
      if (s_.reason.rfind("no convergence", 0) == 0 ||
          s_.reason.rfind("the simulation failed", 0) == 0)
        s_.reason += "; first attempt: " + firstFailure;
      return s_;
    }
    case SteadyStateMethod::Simulation: {
      if (simulate(false, xI)) {
        s_.foundBy = FoundBy::Simulation;
        break;
      }
      const std::string simulationWhy = describeNoSteadyState();
      s_.fallbackReason = "simulation: " + simulationWhy;
      // The reverse order: Newton from the last simulated state, then from x0.
      std::string failure;
      const std::vector<double> last = window_.empty() ? x0I_ : window_.back();
      if (!window_.empty() && tryNewtonFrom(last, xI, failure)) {
        s_.foundBy = FoundBy::Fallback;
        s_.path = "simulation to t = " + num(s_.simulatedTime) + ", then Newton (fallback)";
        break;
      }
      if (tryNewtonFrom(x0I_, xI, failure)) {
        s_.foundBy = FoundBy::Fallback;
        s_.path = "Newton from the initial state (fallback)";
        break;
      }
      s_.reason = simulationWhy;
      if (simulationWhy.rfind("no convergence", 0) == 0) s_.reason += "; " + failure;
      return s_;
    }
  }
  finishFound(xI);
  return s_;
}

}  // namespace

SteadyStateSolution solveSteadyState(const ConservedModel& model, const std::vector<double>& theta,
                                     const SteadyStateOptions& options,
                                     const ProgressMonitor& monitor,
                                     const std::vector<double>* xStart,
                                     const Eigen::MatrixXd* dxStart) {
  if (dxStart && (dxStart->rows() != model.nx() || dxStart->cols() != model.np()))
    throw InvalidOptions("solveSteadyState: dxStart must be nx x np");
  for (int k : options.sensitivityParameters.value_or(std::vector<int>{}))
    if (k < 0 || k >= model.np())
      throw InvalidOptions("solveSteadyState: sensitivityParameters holds " + std::to_string(k) +
                           ", not a parameter index of the model");
  Solver solver(model, theta, options, monitor, dxStart);
  return solver.run(xStart);
}

}  // namespace sensode::steadystate
