// SPDX-License-Identifier: MIT
#include "core/petab/objective.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numbers>
#include <unordered_map>

#include <Eigen/SparseLU>

#include "core/common/errors.h"
#include "core/petab/objective_evaluator.h"
#include "core/steadystate/adjoint_time_course.h"

namespace sensode::petab {

using symbolic::Expr;

const char* toString(GradientMethod m) {
  switch (m) {
    case GradientMethod::None: return "none";
    case GradientMethod::Ssasa: return "ssasa";
    case GradientMethod::Adjoint: return "adjoint";
    case GradientMethod::Forward: return "forward";
    case GradientMethod::FiniteDifferences: return "fd";
  }
  return "unknown";
}

std::optional<GradientMethod> gradientMethodFromString(const std::string& s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (l == "ssasa") return GradientMethod::Ssasa;
  if (l == "forward") return GradientMethod::Forward;
  if (l == "adjoint") return GradientMethod::Adjoint;
  if (l == "fd") return GradientMethod::FiniteDifferences;
  if (l == "none") return GradientMethod::None;
  return std::nullopt;
}

std::vector<int> estimatedParameters(const Problem& problem) {
  std::vector<int> est;
  for (std::size_t j = 0; j < problem.parameters.size(); ++j)
    if (problem.parameters[j].estimate) est.push_back(static_cast<int>(j));
  return est;
}

std::vector<double> nominalScaledParameters(const Problem& problem) {
  std::vector<double> q;
  for (int j : estimatedParameters(problem)) {
    const Parameter& p = problem.parameters[static_cast<std::size_t>(j)];
    q.push_back(toScale(p.scale, p.nominalValue));
  }
  return q;
}

namespace {

// J_r singular at a steady state: ssASA's linear system has no solution.
class SingularJacobian : public Error {
 public:
  using Error::Error;
};

// The standard adjoint's equilibration horizon may exceed the steady-state solver's simulation
// limit by this factor (slow modes need it; beyond it, the method gives up with a message).
constexpr double kEquilibrationHorizonFactor = 1e3;
// Largest weighted distance max_i |x_i(T) − x_i*| / (rtol|x_i*| + atol) (steady-state rtol and
// atol) between the end of the adjoint's forward trajectory and the steady state the data were
// evaluated at. Measured ≤ 0.5 on Blasi and Zheng; another steady state is orders beyond.
constexpr double kTrajectoryMismatch = 100;
// Lower bound of the per-state absolute tolerances of that trajectory, relative to the option's
// atol (see equilibrationAdjoint).
constexpr double kAtolFloor = 1e-12;

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

namespace detail {

void Evaluator::conditionParameters(int c, std::vector<double>& theta, Eigen::MatrixXd& d) const {
  theta = model_.nominalParameters();
  d = Eigen::MatrixXd::Zero(model_.np(), nq_);
  for (std::size_t j = 0; j < pr_.parameters.size(); ++j) {
    const int k = sys_.findParam(pr_.parameters[j].id);
    if (k < 0) continue;
    theta[static_cast<std::size_t>(k)] = values_[j];
    if (estIndex_[j] >= 0) d(k, estIndex_[j]) = dvalue_[j];
  }
  if (c < 0) return;
  for (const auto& [k, v] : pr_.conditions[static_cast<std::size_t>(c)].overrides) {
    d.row(k).setZero();
    if (!v.isParameter()) {
      theta[static_cast<std::size_t>(k)] = v.number;
      continue;
    }
    const int j = pr_.findParameter(v.parameterId);
    if (j >= 0) {
      theta[static_cast<std::size_t>(k)] = values_[static_cast<std::size_t>(j)];
      if (estIndex_[static_cast<std::size_t>(j)] >= 0)
        d(k, estIndex_[static_cast<std::size_t>(j)]) = dvalue_[static_cast<std::size_t>(j)];
    } else {
      const int k2 = sys_.findParam(v.parameterId);
      theta[static_cast<std::size_t>(k)] = theta[static_cast<std::size_t>(k2)];
      d.row(k) = d.row(k2);
    }
  }
}

void Evaluator::setPlaceholders(const Measurement& m) {
  extraValue_.clear();
  for (std::size_t j = 0; j < pr_.parameters.size(); ++j)
    extraValue_[pr_.parameters[j].id] = {values_[j], static_cast<int>(j)};
  const Observable& o = pr_.observables[static_cast<std::size_t>(m.observable)];
  const auto put = [&](const std::string& prefix, const std::vector<Value>& list) {
    for (std::size_t n = 0; n < list.size(); ++n) {
      const std::string id = prefix + std::to_string(n + 1) + "_" + o.id;
      const Value& v = list[n];
      if (v.isParameter()) {
        const int j = pr_.findParameter(v.parameterId);
        extraValue_[id] = {values_[static_cast<std::size_t>(j)], j};
      } else {
        extraValue_[id] = {v.number, -1};
      }
    }
  };
  put("observableParameter", m.observableParameters);
  put("noiseParameter", m.noiseParameters);
  for (const auto& [id, e] : pr_.extraSymbols) {
    auto it = extraValue_.find(id);
    symbolValues_[pool_.node(e).symbol] =
        it == extraValue_.end() ? std::numeric_limits<double>::quiet_NaN() : it->second.first;
  }
}

Evaluator::Partial Evaluator::evaluate(Expr e, const Eigen::MatrixXd& dTheta, bool derivatives) {
  Partial p;
  p.value = pool_.evaluate(e, symbolValues_);
  if (!derivatives) return p;
  p.dx = Eigen::RowVectorXd::Zero(model_.nx());
  p.dq = Eigen::RowVectorXd::Zero(nq_);
  for (Expr s : pool_.dependencies(e)) {
    const double d = pool_.evaluate(pool_.diff(e, s), symbolValues_);
    if (d == 0.0) continue;
    if (auto it = stateOf_.find(s); it != stateOf_.end()) {
      p.dx(it->second) += d;
    } else if (auto ip = paramOf_.find(s); ip != paramOf_.end()) {
      p.dq += d * dTheta.row(ip->second);
    } else if (auto ie = extraOf_.find(s); ie != extraOf_.end()) {
      auto iv = extraValue_.find(ie->second);
      if (iv != extraValue_.end() && iv->second.second >= 0) {
        const auto j = static_cast<std::size_t>(iv->second.second);
        if (estIndex_[j] >= 0) p.dq(estIndex_[j]) += d * dvalue_[j];
      }
    }
  }
  return p;
}

void Evaluator::addMeasurement(const Measurement& m, const std::vector<double>& x,
                               const std::vector<double>& theta, double t,
                               const Eigen::MatrixXd& dTheta, const Eigen::MatrixXd* dxdq,
                               Eigen::RowVectorXd* gState, Eigen::RowVectorXd* gExplicit) {
  for (std::size_t i = 0; i < x.size(); ++i)
    symbolValues_[pool_.node(sys_.states[i].symbol).symbol] = x[i];
  for (std::size_t k = 0; k < theta.size(); ++k)
    symbolValues_[pool_.node(sys_.params[k].symbol).symbol] = theta[k];
  symbolValues_[pool_.node(sys_.time).symbol] = t;
  setPlaceholders(m);
  const Observable& o = pr_.observables[static_cast<std::size_t>(m.observable)];
  const bool derivs = anyGradient();
  const Partial h = evaluate(o.formula, dTheta, derivs);
  const Partial s = evaluate(o.noise, dTheta, derivs);
  const double y = h.value, sigma = s.value;
  const auto row = static_cast<std::size_t>(&m - pr_.measurements.data());
  result_.simulated[row] = y;
  result_.sigma[row] = sigma;
  const std::string where = "measurement row " + std::to_string(m.row) + " (observable '" + o.id + "')";
  if (!std::isfinite(y)) throw Error(where + ": simulated value " + num(y) + " is not finite");
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw Error(where + ": noise " + num(sigma) + " is not a positive number");
  double r = 0, ay = 0, extra = 0;
  constexpr double kTwoPi = 2 * std::numbers::pi;
  switch (o.transformation) {
    case Transformation::Lin:
      r = (m.value - y) / sigma;
      ay = -r / sigma;
      break;
    case Transformation::Log:
      if (!(y > 0)) throw Error(where + ": simulated value " + num(y) + " <= 0 under log");
      r = (std::log(m.value) - std::log(y)) / sigma;
      ay = -r / (sigma * y);
      extra = std::log(m.value);
      break;
    case Transformation::Log10:
      if (!(y > 0)) throw Error(where + ": simulated value " + num(y) + " <= 0 under log10");
      r = (std::log10(m.value) - std::log10(y)) / sigma;
      ay = -r / (sigma * y * std::numbers::ln10);
      extra = std::log(m.value * std::numbers::ln10);
      break;
  }
  result_.objective += 0.5 * std::log(kTwoPi * sigma * sigma) + 0.5 * r * r + extra;
  result_.halfWeightedSquares += 0.5 * r * r;
  if (!derivs) return;
  const double as = 1.0 / sigma - r * r / sigma;
  if (dxdq) {
    grad_ += ay * (h.dx * *dxdq + h.dq) + as * (s.dx * *dxdq + s.dq);
  } else {
    *gState += ay * h.dx + as * s.dx;
    *gExplicit += ay * h.dq + as * s.dq;
  }
}

void Evaluator::experiment(int pre, int sim, const std::vector<std::size_t>& ms) {
  const std::string simId = pr_.conditions[static_cast<std::size_t>(sim)].id;
  std::vector<double> thetaS, thetaP;
  Eigen::MatrixXd dS, dP;
  conditionParameters(sim, thetaS, dS);
  const int nx = model_.nx();
  std::vector<double> x0(static_cast<std::size_t>(nx));
  Eigen::MatrixXd s0Model;  // ∂x0/∂θ (nx × np): model's or pre-equilibration's
  // dθ/dq for the sensitivity columns: dS, except that after pre-equilibration a parameter f does
  // not depend on (e.g. an initial value) acts only through x_e*, hence through dP.
  Eigen::MatrixXd dFlow;
  steadystate::SteadyStateSolution preSolution;
  // ssASA: ∂J/∂x_e* collected from the time course (λ(t0)) and the post-equilibration totals,
  // pushed through the pre-equilibration steady state by one transposed solve (Eq. 17).
  Eigen::RowVectorXd gPre = Eigen::RowVectorXd::Zero(model_.nx());
  steadystate::SteadyStateOptions ssOptions = o_.steadyState;
  ssOptions.sensitivities = forward();
  if (pre >= 0) {
    const std::string preId = pr_.conditions[static_cast<std::size_t>(pre)].id;
    conditionParameters(pre, thetaP, dP);
    preSolution = steadystate::solveSteadyState(cm_, thetaP, ssOptions, monitor_);
    const steadystate::SteadyStateSolution& sol = preSolution;
    ++result_.steadyStates;
    report(preId, "pre-equilibration", sol);
    if (!sol.found)
      throw Error("pre-equilibration condition '" + preId + "': no steady state: " + sol.reason);
    x0 = sol.state;
    for (const auto& [k, v] : pr_.conditions[static_cast<std::size_t>(sim)].overrides)
      if (sys_.params[static_cast<std::size_t>(k)].kind == symbolic::ParamKind::SpeciesInitial)
        throw PetabError("condition '" + simId + "' sets the initial value of '" +
                         sys_.params[static_cast<std::size_t>(k)].id +
                         "' after pre-equilibration: not supported");
    if (forward()) {
      if (sol.sensitivities.size() == 0)
        throw Error("pre-equilibration condition '" + preId + "': " + sol.sensitivityMessage);
      s0Model = sol.sensitivities;
      // One set of model-parameter sensitivities serves both phases only when every parameter
      // the dynamics depend on maps to the estimated parameters the same way in both conditions.
      const symbolic::SparsePattern& fp = model_.paramJacobianPattern();
      dFlow = dS;
      for (int k = 0; k < model_.np(); ++k) {
        const bool inF = fp.colPtr[static_cast<std::size_t>(k) + 1] > fp.colPtr[static_cast<std::size_t>(k)];
        if (!inF) {
          dFlow.row(k) = dP.row(k);
        } else if (!(dS.row(k) - dP.row(k)).isZero(0.0)) {
          throw PetabError("conditions '" + preId + "' and '" + simId + "' map estimated "
                           "parameters to model parameter '" +
                           sys_.params[static_cast<std::size_t>(k)].id +
                           "' differently: forward sensitivities through pre-equilibration are "
                           "not supported for that");
        }
      }
    }
  } else {
    model_.initialState(0.0, thetaS.data(), x0.data());
    if (forward()) s0Model = cm_.initialSensitivity(thetaS);
    dFlow = dS;
  }

  std::vector<std::size_t> timed, steady;
  for (std::size_t i : ms) (std::isinf(pr_.measurements[i].time) ? steady : timed).push_back(i);
  std::sort(timed.begin(), timed.end(), [&](std::size_t a, std::size_t b) {
    return pr_.measurements[a].time < pr_.measurements[b].time;
  });

  if (!timed.empty()) {
    if (backwardMethod()) {
      // Backward adjoint over the time course (CVODES adjoint with checkpoints), then λ(t0)
      // through x0: ∂x0/∂θ, or the steady-state adjoint of the pre-equilibration (Eq. 17).
      const Eigen::RowVectorXd l0 = timeCourseAdjoint(timed, x0, thetaS, dS);
      if (pre >= 0) {
        gPre += l0;
      } else {
        grad_ += l0 * cm_.initialSensitivity(thetaS) * dS;
      }
    } else {
      timeCourseForward(timed, x0, s0Model, dFlow, thetaS, dS);
    }
  }

  if (!steady.empty()) {
    ssOptions.sensitivities = forward();
    // After pre-equilibration the totals come from x_e*, so dT/dθ = Γ·dx_e*/dθ.
    const auto sol = steadystate::solveSteadyState(cm_, thetaS, ssOptions, monitor_,
                                                   pre >= 0 ? &x0 : nullptr,
                                                   pre >= 0 && forward() ? &s0Model : nullptr);
    ++result_.steadyStates;
    report(simId, "steady-state data", sol);
    if (!sol.found)
      throw Error("condition '" + simId + "': no steady state: " + sol.reason);
    if (forward() && sol.sensitivities.size() == 0)
      throw Error("condition '" + simId + "': " + sol.sensitivityMessage);
    Eigen::MatrixXd dxdq;
    if (forward()) dxdq = sol.sensitivities * dFlow;
    Eigen::RowVectorXd g = Eigen::RowVectorXd::Zero(nx), explicitPart = Eigen::RowVectorXd::Zero(nq_);
    for (std::size_t i : steady)
      addMeasurement(pr_.measurements[i], sol.state, thetaS, INFINITY, dS,
                     forward() ? &dxdq : nullptr, &g, &explicitPart);
    if (backwardMethod()) {
      const std::string what = "condition '" + simId + "'";
      bool linear = ssasa();
      if (linear) {
        try {
          Eigen::RowVectorXd rT;
          grad_ += steadyStateAdjoint(g, sol, thetaS, what, pre >= 0 ? &rT : nullptr) * dS +
                   explicitPart;
          if (pre >= 0) {
            // r_T·dT/dq with dT = Γ·dx_e*: a weight on x_e* for the pre-equilibration adjoint.
            const auto& species = cm_.analysis().species;
            for (int r = 0; r < cm_.nc(); ++r)
              for (std::size_t c = 0; c < species.size(); ++c)
                gPre(species[c]) +=
                    rT(r) * cm_.analysis().laws.gamma(r, static_cast<Eigen::Index>(c));
          }
          note("steady-state data: ssASA (one transposed J_r solve per steady state, Eq. 15)");
        } catch (const SingularJacobian& e) {
          linear = false;
          note(std::string(e.what()) + ": fell back to backward integration");
        }
      }
      if (!linear) {
        Eigen::RowVectorXd l0, qd;
        equilibrationAdjoint(x0, thetaS, sol, g, what, l0, qd);
        grad_ += qd * dS + explicitPart;
        if (pre >= 0) gPre += l0;
        else grad_ += l0 * cm_.initialSensitivity(thetaS) * dS;
        note("steady-state data: backward integration through the equilibration");
      }
    } else if (forward()) {
      note("steady-state data: forward dx*/dθ = −J_r⁻¹F_θ");
    }
  }
  if (backwardMethod() && pre >= 0) {
    const std::string what =
        "pre-equilibration condition '" + pr_.conditions[static_cast<std::size_t>(pre)].id + "'";
    bool linear = ssasa();
    if (linear) {
      try {
        grad_ += steadyStateAdjoint(gPre, preSolution, thetaP, what) * dP;
        note("pre-equilibration: ssASA (J_rᵀq = −p(t0), Eq. 17)");
      } catch (const SingularJacobian& e) {
        linear = false;
        note(std::string(e.what()) + ": fell back to backward integration");
      }
    }
    if (!linear) {
      std::vector<double> xPre(static_cast<std::size_t>(nx));
      model_.initialState(0.0, thetaP.data(), xPre.data());
      Eigen::RowVectorXd l0, qd;
      equilibrationAdjoint(xPre, thetaP, preSolution, gPre, what, l0, qd);
      grad_ += qd * dP + l0 * cm_.initialSensitivity(thetaP) * dP;
      note("pre-equilibration: backward integration through the equilibration");
    }
  }
}

Eigen::RowVectorXd Evaluator::steadyStateAdjoint(const Eigen::RowVectorXd& g,
                                                 const steadystate::SteadyStateSolution& sol,
                                                 const std::vector<double>& theta,
                                                 const std::string& what,
                                                 Eigen::RowVectorXd* totalsWeight) {
  const int nr = cm_.nr(), nc = cm_.nc();
  Eigen::RowVectorXd gI(nr), gD(nc);
  for (int a = 0; a < nr; ++a) gI(a) = g(cm_.independentStates()[static_cast<std::size_t>(a)]);
  for (int r = 0; r < nc; ++r) gD(r) = g(cm_.dependentStates()[static_cast<std::size_t>(r)]);
  const Eigen::RowVectorXd gE = nc > 0 ? Eigen::RowVectorXd(gI - gD * cm_.gammaIndependent()) : gI;
  const Eigen::MatrixXd dT = cm_.totalsSensitivity(cm_.initialSensitivity(theta));
  Eigen::RowVectorXd cTheta = Eigen::RowVectorXd::Zero(model_.np());
  if (nr > 0) {
    const Eigen::SparseMatrix<double> j = cm_.jacobian(sol.reducedState, sol.reducedParameters);
    const double cond = steadystate::conditionEstimate1(j);
    Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>> lu;
    lu.analyzePattern(j);
    lu.factorize(j);
    if (lu.info() != Eigen::Success || !(cond < 1e14))
      throw SingularJacobian(what + ": ssASA is not applicable: J_r is singular at the steady "
                             "state even after conservation reduction (condition estimate " +
                             num(cond) + ")");
    const Eigen::VectorXd mu = lu.transpose().solve(Eigen::VectorXd(gE.transpose()));
    if (totalsWeight) {
      const Eigen::MatrixXd fp = cm_.fullParamJacobian(sol.reducedState, sol.reducedParameters);
      cTheta -= mu.transpose() * fp.leftCols(model_.np());
      *totalsWeight = gD - mu.transpose() * fp.rightCols(nc);
      return cTheta;
    }
    const Eigen::MatrixXd fTheta = cm_.totalParamJacobian(sol.reducedState, sol.reducedParameters, dT);
    cTheta -= mu.transpose() * fTheta;
  }
  if (totalsWeight) {
    *totalsWeight = gD;
    return cTheta;
  }
  if (nc > 0) cTheta += gD * dT;
  return cTheta;
}

void Evaluator::equilibrationAdjoint(const std::vector<double>& xStart,
                                     const std::vector<double>& theta,
                                     const steadystate::SteadyStateSolution& target,
                                     const Eigen::RowVectorXd& g, const std::string& what,
                                     Eigen::RowVectorXd& lambda0, Eigen::RowVectorXd& quad) {
  // The backward pass computes the gradient of J(x(T)) for the finite horizon T, i.e. it uses
  // dx(T)/dθ where the data want dx*/dθ. They differ by the part of λ that has not decayed over
  // [0, T]: λ(0) = e^{JᵀT}·g, whose slowest non-conserved component shrinks like
  // e^{Re(ν_slow)·T} (ν_slow: the eigenvalue of J_r(x*) with the largest negative real part).
  // The time at which the *state* meets the steady-state criterion is no measure of that: when
  // x0 hardly excites the slow mode, the criterion holds long before the sensitivities along it
  // have converged (Blasi: criterion at T = 10 with ν_slow ≈ −1 left e^{−10} = 4.5e-5 of λ and
  // gradient errors up to 1.8e-2). So T is the larger of the criterion's time and the time in
  // which the slowest mode decays to kDecay. Zero eigenvalues (exactly conserved directions the
  // laws do not cover, like a frozen state) are skipped: λ keeps its value there, and λ(0)ᵀ·∂x0/∂θ
  // carries that part of the gradient exactly, as it carries the conservation-law directions.
  // Without eigenvalues (more reduced states than SteadyStateOptions::maxEigenDimension) only
  // the criterion's time is left.
  const double kDecay = 1e-2 * o_.integrator.rtol;
  double maxAbsEig = 0, slowest = -INFINITY;
  for (std::size_t k = 0; k < target.eigenReal.size(); ++k)
    maxAbsEig = std::max(maxAbsEig, std::hypot(target.eigenReal[k], target.eigenImag[k]));
  for (std::size_t k = 0; k < target.eigenReal.size(); ++k) {
    const double re = target.eigenReal[k];
    if (std::hypot(re, target.eigenImag[k]) > 1e-14 * maxAbsEig) slowest = std::max(slowest, re);
  }
  if (slowest >= 0)
    throw Error(what + ": backward integration through the equilibration: the steady state is "
                "not stable (eigenvalue of J_r with real part " + num(slowest) + ")");
  const double tDecay = std::isfinite(slowest) ? std::log(1 / kDecay) / -slowest : 0;
  if (target.eigenReal.empty() && !target.reducedState.empty())
    note(what + ": no eigenvalues of J_r (too many states), so the equilibration horizon is "
         "where simulation meets the steady-state criterion; λ may not have decayed there");

  // The criterion's time: simulation until the steady-state criterion holds, with a horizon
  // long enough to cover the slow mode too (Newton-only steady states, e.g. Zheng's
  // pre-equilibration with ν_slow ≈ −6e-5, are reached by simulation only after t = 1e5).
  steadystate::SteadyStateOptions so = o_.steadyState;
  so.method = steadystate::SteadyStateMethod::Simulation;
  so.sensitivities = false;
  const double cap = kEquilibrationHorizonFactor * so.maxSimulationTime;
  so.maxSimulationTime = std::max(so.maxSimulationTime, std::min(cap, 10 * tDecay));
  const auto sim = steadystate::solveSteadyState(cm_, theta, so, monitor_, &xStart);
  ++result_.simulations;
  if (!sim.found || sim.foundBy != steadystate::FoundBy::Simulation)
    throw Error(what + ": backward integration through the equilibration needs a simulated "
                "trajectory to the steady state, but simulation from the initial state did not "
                "meet the steady-state criterion by t = " + num(so.maxSimulationTime) + " (" +
                (sim.found ? "only Newton found the steady state" : sim.reason) + ")");
  const double horizon = std::max(sim.simulatedTime, tDecay);
  if (!(horizon <= cap))
    throw Error(what + ": backward integration through the equilibration: the slowest mode "
                "(eigenvalue " + num(slowest) + ") needs t = " + num(horizon) +
                " to decay, beyond the horizon limit " + num(cap));

  steadystate::AdjointTimeCourse adj(pr_.model, o_.integrator, 0.0, xStart, theta, monitor_);
  // The quadrature ∫λᵀf_θ dt weighs each state by λ, and λ = ∂J/∂x is large for small states
  // under log-scale observables (∂/∂x log x = 1/x): there the absolute error the forward pass
  // allows in x matters relative to x. With one atol (1e-12) for all, a species near 1e-15 at
  // the steady state is not resolved at all (Blasi: adjoint gradients off by up to 5.6e-4 after
  // the horizon fix; 9.5e-7 with atol 1e-16, 1.9e-8 with 1e-20). So each state gets
  // atol_i = rtol·|x_i*| (relative accuracy where the data are taken), never looser than the
  // option's atol, and not below kAtolFloor·atol, which keeps states that are exactly 0 at the
  // steady state from asking for an absolute accuracy beyond double precision.
  {
    std::vector<double> atol(target.state.size());
    for (std::size_t i = 0; i < atol.size(); ++i)
      atol[i] = std::clamp(o_.integrator.rtol * std::abs(target.state[i]),
                           kAtolFloor * o_.integrator.atol, o_.integrator.atol);
    adj.setStateAbsoluteTolerances(std::move(atol));
  }
  const std::vector<double> xEnd = adj.forward({horizon}).front();
  ++result_.simulations;
  // The trajectory must end at the steady state the data were evaluated at (not at another one
  // of a multistable system): compare with the criterion's weights, component by component.
  double dist = 0;
  for (std::size_t i = 0; i < xEnd.size(); ++i) {
    const double w = so.rtol * std::abs(target.state[i]) + so.atol;
    dist = std::max(dist, std::abs(xEnd[i] - target.state[i]) / w);
  }
  if (!(dist < kTrajectoryMismatch))
    throw Error(what + ": backward integration through the equilibration: the simulated "
                "trajectory ends at t = " + num(horizon) + " away from the steady state (weighted "
                "distance " + num(dist) + ")");
  std::vector<double> l, q;
  adj.backward({std::vector<double>(g.data(), g.data() + g.size())}, l, q);
  lambda0 = Eigen::Map<const Eigen::RowVectorXd>(l.data(), static_cast<Eigen::Index>(l.size()));
  quad = Eigen::Map<const Eigen::RowVectorXd>(q.data(), static_cast<Eigen::Index>(q.size()));
}

ObjectiveResult Evaluator::run() {
  result_.simulated.assign(pr_.measurements.size(), std::numeric_limits<double>::quiet_NaN());
  result_.sigma = result_.simulated;
  for (int j : estimatedParameters(pr_)) {
    result_.parameterIds.push_back(pr_.parameters[static_cast<std::size_t>(j)].id);
  }
  std::map<std::pair<int, int>, std::vector<std::size_t>> experiments;
  for (std::size_t i = 0; i < pr_.measurements.size(); ++i) {
    const Measurement& m = pr_.measurements[i];
    experiments[{m.preequilibrationCondition, m.simulationCondition}].push_back(i);
  }
  std::size_t done = 0;
  for (const auto& [key, ms] : experiments) {
    fractionDone_ = static_cast<double>(done) / static_cast<double>(experiments.size());
    monitor_.check({unitOffset_ + fractionDone_, unitTotal_, 0});
    experiment(key.first, key.second, ms);
    ++done;
  }
  fractionDone_ = 1;
  monitor_.check({unitOffset_ + 1, unitTotal_, 0});
  if (anyGradient()) result_.gradient.assign(grad_.data(), grad_.data() + nq_);
  return result_;
}

}  // namespace detail

using detail::Evaluator;

ObjectiveResult evaluateObjective(const Problem& problem, const std::vector<double>& scaled,
                                  GradientMethod method, const ObjectiveOptions& options,
                                  const ProgressMonitor& monitor) {
  if (!problem.model) throw InvalidOptions("objective: the problem has no model");
  const steadystate::ConservedModel cm(problem.model);
  if (method != GradientMethod::FiniteDifferences) {
    Evaluator e(problem, cm, scaled, method, options, monitor, 0, 1);
    ObjectiveResult r = e.run();
    r.parameters = scaled;
    r.method = method;
    return r;
  }
  // Second order: (J(q + h) − J(q − h))/2h. Fourth order: (8(J(q + h) − J(q − h)) −
  // (J(q + 2h) − J(q − 2h)))/12h, truncation O(h⁴), so a larger h keeps the objective's noise
  // small where the curvature is large.
  const bool fourth = options.fdOrder == 4;
  const int perParameter = fourth ? 4 : 2;
  const double units = perParameter * static_cast<double>(scaled.size()) + 1;
  Evaluator e(problem, cm, scaled, GradientMethod::None, options, monitor, 0, units);
  ObjectiveResult r = e.run();
  r.parameters = scaled;
  r.method = method;
  r.gradient.resize(scaled.size());
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    double offset = 1 + perParameter * static_cast<double>(i);
    const auto at = [&](double multiple) {
      auto qs = scaled;
      qs[i] += multiple * options.fdStep;
      Evaluator ev(problem, cm, qs, GradientMethod::None, options, monitor, offset++, units);
      const ObjectiveResult rs = ev.run();
      r.simulations += rs.simulations;
      r.steadyStates += rs.steadyStates;
      return rs.objective;
    };
    const double d1 = at(1) - at(-1);
    r.gradient[i] = fourth ? (8 * d1 - (at(2) - at(-2))) / (12 * options.fdStep)
                           : d1 / (2 * options.fdStep);
  }
  r.notes = std::string(fourth ? "fourth-order " : "") + "central finite differences, step " +
            num(options.fdStep) + " on the parameter scale";
  return r;
}

}  // namespace sensode::petab
