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

#include "core/common/errors.h"
#include "core/petab/objective_evaluator.h"
#include "core/simulation/event_simulation.h"
#include "core/symbolic/delays.h"

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

namespace detail {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void Evaluator::conditionParameters(int c, std::vector<double>& theta, Eigen::MatrixXd& d) const {
  theta = model_.nominalParameters();
  d = Eigen::MatrixXd::Zero(model_.np(), nq_);
  // Set by the parameter table or the condition: not given an initial assignment's value below.
  std::vector<bool> overridden(static_cast<std::size_t>(model_.np()), false);
  for (std::size_t j = 0; j < pr_.parameters.size(); ++j) {
    const int k = sys_.findParam(pr_.parameters[j].id);
    if (k < 0) continue;
    theta[static_cast<std::size_t>(k)] = values_[j];
    if (estIndex_[j] >= 0) d(k, estIndex_[j]) = dvalue_[j];
    overridden[static_cast<std::size_t>(k)] = true;
  }
  if (c >= 0) applyOverrides(pr_.conditions[static_cast<std::size_t>(c)], theta, d, overridden);
  // Initial-assignment targets this condition leaves alone take the assignment's value, under
  // this condition's parameters (dependency order: a default may use an earlier one).
  if (pr_.initialAssignmentDefaults.empty()) return;
  std::vector<double> values(pool_.numSymbols(), 0.0);
  for (int k = 0; k < model_.np(); ++k)
    values[pool_.node(sys_.params[static_cast<std::size_t>(k)].symbol).symbol] =
        theta[static_cast<std::size_t>(k)];
  for (const InitialAssignmentDefault& def : pr_.initialAssignmentDefaults) {
    const auto k = static_cast<std::size_t>(def.param);
    if (overridden[k]) continue;
    theta[k] = pool_.evaluate(def.value, values);
    values[pool_.node(sys_.params[k].symbol).symbol] = theta[k];
    d.row(def.param).setZero();
    for (Expr s : pool_.dependencies(def.value))
      if (auto it = paramOf_.find(s); it != paramOf_.end())
        d.row(def.param) += pool_.evaluate(pool_.diff(def.value, s), values) * d.row(it->second);
  }
}

void Evaluator::applyOverrides(const Condition& condition, std::vector<double>& theta,
                               Eigen::MatrixXd& d, std::vector<bool>& overridden) const {
  for (const auto& [k, v] : condition.overrides) {
    overridden[static_cast<std::size_t>(k)] = true;
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
  // With several measurement files the row alone is ambiguous: name the file too. (Built only
  // for an error: per measurement and evaluation the strings cost a fit a few per cent.)
  const auto where = [&] {
    const std::string file =
        static_cast<std::size_t>(m.file) < pr_.measurementFiles.size()
            ? pr_.measurementFiles[static_cast<std::size_t>(m.file)].filename().string() + ": "
            : std::string();
    return file + "measurement row " + std::to_string(m.row) + " (observable '" + o.id + "')";
  };
  if (!std::isfinite(y)) throw Error(where() + ": simulated value " + num(y) + " is not finite");
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw Error(where() + ": noise " + num(sigma) + " is not a positive number");
  // z: the residual on the transformed scale before dividing by σ, dz/dy, and the Jacobian term
  // of the transformation (log m, log(m ln 10)) that makes the density one of m.
  double z = 0, dz = 0, extra = 0;
  switch (o.transformation) {
    case Transformation::Lin:
      z = m.value - y;
      dz = -1;
      break;
    case Transformation::Log:
      if (!(y > 0)) throw Error(where() + ": simulated value " + num(y) + " <= 0 under log");
      z = std::log(m.value) - std::log(y);
      dz = -1 / y;
      extra = std::log(m.value);
      break;
    case Transformation::Log10:
      if (!(y > 0)) throw Error(where() + ": simulated value " + num(y) + " <= 0 under log10");
      z = std::log10(m.value) - std::log10(y);
      dz = -1 / (y * std::numbers::ln10);
      extra = std::log(m.value * std::numbers::ln10);
      break;
  }
  const double r = z / sigma;
  double ay = 0, as = 0;  // ∂term/∂y, ∂term/∂σ
  if (o.distribution == NoiseDistribution::Normal) {
    // ½ log(2πσ²) + ½ r²
    result_.objective += 0.5 * std::log(2 * std::numbers::pi * sigma * sigma) + 0.5 * r * r + extra;
    ay = r / sigma * dz;
    as = 1.0 / sigma - r * r / sigma;
  } else {
    // Laplace with scale σ: log(2σ) + |z|/σ (no derivative at z = 0; 0 is used there).
    const double sgn = z > 0 ? 1.0 : z < 0 ? -1.0 : 0.0;
    result_.objective += std::log(2 * sigma) + std::abs(r) + extra;
    ay = sgn / sigma * dz;
    as = 1.0 / sigma - std::abs(r) / sigma;
  }
  result_.halfWeightedSquares += 0.5 * r * r;
  if (!derivs) return;
  if (dxdq) {
    const Eigen::RowVectorXd dy = h.dx * *dxdq + h.dq, ds = s.dx * *dxdq + s.dq;
    grad_ += ay * dy + as * ds;
    if (o_.measurementSensitivities) {
      result_.simulatedSensitivities.row(static_cast<Eigen::Index>(row)) = dy;
      result_.sigmaSensitivities.row(static_cast<Eigen::Index>(row)) = ds;
    }
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
  std::vector<int> reset;  // states the simulation condition reinitializes after pre-equilibration
  // A weight on x0 after pre-equilibration: the reset states' part acts through their initial
  // values under the simulation condition, the rest through x_e* (gPre).
  const auto weightOnX0 = [&](const Eigen::RowVectorXd& w) {
    Eigen::RowVectorXd wPre = w, wReset = Eigen::RowVectorXd::Zero(w.size());
    for (int i : reset) {
      wReset(i) = w(i);
      wPre(i) = 0;
    }
    gPre += wPre;
    if (!reset.empty()) grad_ += wReset * cm_.initialSensitivity(thetaS) * dS;
  };
  steadystate::SteadyStateOptions ssOptions = o_.steadyState;
  ssOptions.sensitivities = forward();
  // Steady states do not run events (a trigger crossed on the way to x* would be missed).
  const bool needsSteadyState =
      pre >= 0 || std::any_of(ms.begin(), ms.end(),
                              [&](std::size_t i) { return std::isinf(pr_.measurements[i].time); });
  if (needsSteadyState && !sys_.events.empty())
    throw PetabError(sys_.modelFile + ": event '" + sys_.events.front().id + "': condition '" +
                     simId + "' needs a steady state (pre-equilibration or data at time inf), "
                     "and steady states of models with SBML events are not supported yet");
  if (pre >= 0) {
    const std::string preId = pr_.conditions[static_cast<std::size_t>(pre)].id;
    conditionParameters(pre, thetaP, dP);
    ssOptions.sensitivityParameters = movedParameters(dP);  // only the columns the data need
    preSolution = steadystate::solveSteadyState(cm_, thetaP, ssOptions, monitor_);
    const steadystate::SteadyStateSolution& sol = preSolution;
    ++result_.steadyStates;
    report(preId, "pre-equilibration", sol);
    if (!sol.found)
      throw Error("pre-equilibration condition '" + preId + "': no steady state: " + sol.reason);
    x0 = sol.state;
    // Species the simulation condition sets start from that value instead of x_e* (PEtab:
    // empty and NaN cells, dropped by loadProblem, keep the pre-equilibrated value).
    for (const auto& [k, v] : pr_.conditions[static_cast<std::size_t>(sim)].overrides)
      if (sys_.params[static_cast<std::size_t>(k)].kind == symbolic::ParamKind::SpeciesInitial)
        if (const int i = sys_.findState(sys_.params[static_cast<std::size_t>(k)].id); i >= 0)
          reset.push_back(i);
    if (!reset.empty()) {
      std::vector<double> xSim(static_cast<std::size_t>(nx));
      model_.initialState(0.0, thetaS.data(), xSim.data());
      for (int i : reset) x0[static_cast<std::size_t>(i)] = xSim[static_cast<std::size_t>(i)];
    }
    if (forward()) {
      if (sol.sensitivities.size() == 0)
        throw Error("pre-equilibration condition '" + preId + "': " + sol.sensitivityMessage);
      if (!sol.sensitivityFallback.empty())
        fallback("pre-equilibration condition '" + preId + "': " + sol.sensitivityFallback);
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
      if (!reset.empty()) reinitializeSensitivities(reset, thetaS, dS, s0Model, dFlow, preId, simId);
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
      // The CVODES adjoint integrates λ' = −Jᵀλ backwards: a delay adds advanced terms
      // λ(t + τ) it does not have, and a differential-algebraic model needs IDAS's adjoint.
      // Forward sensitivities compute those gradients instead (evaluateObjective says so).
      if (!sys_.delays.empty())
        throw EventAdjointUnsupported(
            "delay equations (" + symbolic::describeDelay(*sys_.pool, sys_.delays.front().node) +
            " in '" + sys_.delays.front().element + "')");
      if (sys_.isDae())
        throw EventAdjointUnsupported("a differential-algebraic model (algebraic rules or fast "
                                      "reactions)");
      // Backward adjoint over the time course (CVODES adjoint with checkpoints), then λ(t0)
      // through x0: ∂x0/∂θ, or the steady-state adjoint of the pre-equilibration (Eq. 17).
      const Eigen::RowVectorXd l0 = sys_.events.empty()
                                        ? timeCourseAdjoint(timed, x0, thetaS, dS)
                                        : timeCourseAdjointWithEvents(timed, x0, thetaS, dS);
      if (pre >= 0) {
        weightOnX0(l0);
      } else {
        grad_ += l0 * cm_.initialSensitivity(thetaS) * dS;
      }
    } else if (simulation::needsSimulationDriver(sys_)) {
      timeCourseWithEvents(timed, x0, s0Model, dFlow, thetaS, dS);
    } else {
      timeCourseForward(timed, x0, s0Model, dFlow, thetaS, dS);
    }
  }

  if (!steady.empty()) {
    ssOptions.sensitivities = forward();
    ssOptions.sensitivityParameters = movedParameters(dFlow);
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
    if (forward() && !sol.sensitivityFallback.empty())
      fallback("steady-state data of condition '" + simId + "': " + sol.sensitivityFallback);
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
            // r_T·dT/dq with dT = Γ·dx0: a weight on x0 (x_e* and the reset states).
            const auto& species = cm_.analysis().species;
            Eigen::RowVectorXd w = Eigen::RowVectorXd::Zero(nx);
            for (int r = 0; r < cm_.nc(); ++r)
              for (std::size_t c = 0; c < species.size(); ++c)
                w(species[c]) += rT(r) * cm_.analysis().laws.gamma(r, static_cast<Eigen::Index>(c));
            weightOnX0(w);
          }
          note("steady-state data: ssASA (one transposed J_r solve per steady state, Eq. 15)");
        } catch (const SingularJacobian& e) {
          linear = false;
          note(std::string(e.what()) + ": fell back to backward integration");
        }
      }
      if (!linear) {
        Eigen::RowVectorXd l0, qd;
        equilibrationAdjoint(x0, thetaS, sol, g, dS, what, l0, qd);
        grad_ += qd * dS + explicitPart;
        if (pre >= 0) weightOnX0(l0);
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
      equilibrationAdjoint(xPre, thetaP, preSolution, gPre, dP, what, l0, qd);
      grad_ += qd * dP + l0 * cm_.initialSensitivity(thetaP) * dP;
      note("pre-equilibration: backward integration through the equilibration");
    }
  }
}

void Evaluator::reinitializeSensitivities(const std::vector<int>& reset,
                                          const std::vector<double>& thetaS,
                                          const Eigen::MatrixXd& dS, Eigen::MatrixXd& s0,
                                          Eigen::MatrixXd& dFlow, const std::string& preId,
                                          const std::string& simId) const {
  const Eigen::MatrixXd init = cm_.initialSensitivity(thetaS);
  std::vector<bool> isReset(static_cast<std::size_t>(model_.nx()), false);
  for (int i : reset) isReset[static_cast<std::size_t>(i)] = true;
  for (int k = 0; k < model_.np(); ++k) {
    bool resetDepends = false;
    for (int i : reset) resetDepends = resetDepends || init(i, k) != 0;
    if (resetDepends && !(dFlow.row(k) - dS.row(k)).isZero(0.0)) {
      // Only parameters outside the dynamics get here (the caller checked the others), so the
      // column's sensitivities are homogeneous: it can take dS if x_e* owes it nothing.
      bool prePart = !dFlow.row(k).isZero(0.0);
      if (prePart) {
        prePart = false;
        for (int j = 0; j < model_.nx(); ++j)
          prePart = prePart || (!isReset[static_cast<std::size_t>(j)] && s0(j, k) != 0);
      }
      if (prePart)
        throw PetabError("conditions '" + preId + "' and '" + simId + "' map estimated "
                         "parameters to '" + sys_.params[static_cast<std::size_t>(k)].id +
                         "' differently, and both the pre-equilibrated state and the states the "
                         "simulation condition reinitializes depend on it: forward sensitivities "
                         "do not support that (the adjoint methods do)");
      for (int j = 0; j < model_.nx(); ++j)
        if (!isReset[static_cast<std::size_t>(j)]) s0(j, k) = 0;
      dFlow.row(k) = dS.row(k);
    }
    for (int i : reset) s0(i, k) = init(i, k);
  }
}

ObjectiveResult Evaluator::run() {
  result_.simulated.assign(pr_.measurements.size(), std::numeric_limits<double>::quiet_NaN());
  result_.sigma = result_.simulated;
  if (forward() && o_.measurementSensitivities) {
    const auto rows = static_cast<Eigen::Index>(pr_.measurements.size());
    result_.simulatedSensitivities = Eigen::MatrixXd::Zero(rows, nq_);
    result_.sigmaSensitivities = Eigen::MatrixXd::Zero(rows, nq_);
  }
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
using detail::num;

void detail::stopAtSharedSingularity(const IntegrationFailure& odesd,
                                     const std::function<void()>& statesRun) {
  // A step this far below t's own size (t + h = t, or nearly) is an integrator chasing a
  // singularity; a repeated error-test failure at an ordinary step size is not (Fujita: both
  // fail at t ≈ 283.5 with steps of 1e-4, and the run with sensitivities passes there). At
  // t = 0 only a failure before the first step qualifies (h = 0: Elowitz's trial points where
  // the rate of GFP is not finite at t = 0, which no run with sensitivities gets past either).
  constexpr double kStalledStep = 1e-12;
  // Two such failures this close (relative) are one place. A blow-up x ~ 1/(t* − t) stalls an
  // integrator just before t*, and t* moves with the trajectory's own errors: odeSD and CVODES
  // (both stepping on the states alone here) stalled 1e-10 to 1e-5 apart on
  // Crauste's blow-ups, while the stalls where CVODES with sensitivities passed lay ≥ 1e-1
  // apart (its knife edge: t = 0.0200 and 0.0229).
  constexpr double kSameFailureTime = 1e-4;
  const auto stalled = [&](const IntegrationFailure& f) {
    return std::abs(f.stepSize()) <= kStalledStep * std::abs(f.t());
  };
  try {
    statesRun();
  } catch (const IntegrationFailure& cvodes) {
    const double t = cvodes.t();
    if (!stalled(odesd) || !stalled(cvodes) ||
        std::abs(t - odesd.t()) > kSameFailureTime * std::max(std::abs(t), std::abs(odesd.t())))
      return;
    throw IntegrationFailure(
        "the solution does not continue past t = " + num(t) +
            ": odeSD and CVODES (the states alone) both fail there (odeSD: " + odesd.what() +
            "; CVODES: " + cvodes.what() + ")",
        t, cvodes.stepSize(), cvodes.details());
  } catch (const Cancelled&) {
    throw;
  } catch (const Error&) {
    // Whatever else stopped the states' run (a steady state of a pre-equilibration, say):
    // the full run decides and reports it.
  }
}

namespace {

// The objective priors of the estimated parameters: value into objective and priorTerm, analytic
// derivative into the gradient (when there is one).
void addPriors(const Problem& problem, const std::vector<double>& scaled, ObjectiveResult& r) {
  const std::vector<int> est = estimatedParameters(problem);
  bool any = false;
  for (std::size_t i = 0; i < est.size(); ++i) {
    const Parameter& p = problem.parameters[static_cast<std::size_t>(est[i])];
    if (p.prior.type == PriorType::None) continue;
    const PriorValue v = evaluatePrior(p.prior, p.scale, scaled[i]);
    r.priorTerm += v.value;
    if (!r.gradient.empty()) r.gradient[i] += v.derivative;
    any = true;
  }
  r.objective += r.priorTerm;
  if (any) r.notes += std::string(r.notes.empty() ? "" : "; ") + "parameter priors: analytic";
}

ObjectiveResult evaluateWithIntegrator(const Problem& problem, const std::vector<double>& scaled,
                                       GradientMethod method, const ObjectiveOptions& options,
                                       const ProgressMonitor& monitor) {
  if (!problem.model) throw InvalidOptions("objective: the problem has no model");
  const std::shared_ptr<const steadystate::ConservedModel> conserved =
      problem.conserved.get(problem.model);
  const steadystate::ConservedModel& cm = *conserved;
  if (method != GradientMethod::FiniteDifferences) {
    ObjectiveResult r;
    try {
      r = Evaluator(problem, cm, scaled, method, options, monitor, 0, 1).run();
      r.method = method;
    } catch (const detail::EventAdjointUnsupported& e) {
      // Forward sensitivities jump exactly at every execution and carry the delayed and
      // algebraic terms: they compute the gradient instead, and the result says so.
      r = Evaluator(problem, cm, scaled, GradientMethod::Forward, options, monitor, 0, 1).run();
      r.method = GradientMethod::Forward;
      r.fallbacks.push_back(std::string(toString(method)) + " gradient: the backward adjoint "
                            "does not cover this model (" + e.what() + "); forward "
                            "sensitivities computed the gradient instead");
    }
    r.parameters = scaled;
    addPriors(problem, scaled, r);
    return r;
  }
  // Second order: (J(q + h) − J(q − h))/2h. Fourth order: (8(J(q + h) − J(q − h)) −
  // (J(q + 2h) − J(q − 2h)))/12h, truncation O(h⁴), so a larger h keeps the objective's noise
  // small where the curvature is large.
  // A stencil that would leave the parameter's bounds (a noise parameter at its lower bound 0:
  // Lang's σ = noiseParameter1 + noiseParameter2·y turned negative at −2h) is replaced by the
  // one-sided second-order difference into the bounds, (−3J(q) + 4J(q ± h) − J(q ± 2h))/(±2h);
  // bounds narrower than 1 on the parameter scale make the step relative to their width
  // (Lang's scaling factors sCCNB ∈ [0, 2e-10] on the linear scale, value 8e-12, where a step of
  // 1e-3 left the model's range by eight orders of magnitude, and a quarter of the width still
  // changed the observable fivefold).
  const bool fourth = options.fdOrder == 4;
  const int perParameter = fourth ? 4 : 2;
  const double units = perParameter * static_cast<double>(scaled.size()) + 1;
  Evaluator e(problem, cm, scaled, GradientMethod::None, options, monitor, 0, units);
  ObjectiveResult r = e.run();
  r.parameters = scaled;
  r.method = method;
  r.gradient.resize(scaled.size());
  const std::vector<int> estimated = estimatedParameters(problem);
  int oneSided = 0, narrowed = 0;
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    double offset = 1 + perParameter * static_cast<double>(i);
    double h = options.fdStep;
    double lower = -INFINITY, upper = INFINITY;
    if (i < estimated.size()) {
      const Parameter& par = problem.parameters[static_cast<std::size_t>(estimated[i])];
      lower = toScale(par.scale, par.lowerBound);
      upper = toScale(par.scale, par.upperBound);
    }
    const double stencil = fourth ? 2 : 1;  // the farthest point, in steps
    if (std::isfinite(upper - lower) && upper - lower < 1) {
      h *= upper - lower;  // a step relative to the parameter's range
      ++narrowed;
    }
    const auto at = [&](double multiple) {
      auto qs = scaled;
      qs[i] += multiple * h;
      Evaluator ev(problem, cm, qs, GradientMethod::None, options, monitor, offset++, units);
      const ObjectiveResult rs = ev.run();
      r.simulations += rs.simulations;
      integrators::accumulate(r.integration, rs.integration);
      r.steadyStates += rs.steadyStates;
      return rs.objective;
    };
    const double reach = stencil * h;
    const bool belowFits = !(scaled[i] - reach < lower), aboveFits = !(scaled[i] + reach > upper);
    if (!belowFits || !aboveFits) {
      const double side = belowFits ? -1.0 : 1.0;  // step into the bounds
      ++oneSided;
      r.gradient[i] = side * (-3 * r.objective + 4 * at(side) - at(2 * side)) / (2 * h);
      continue;
    }
    const double d1 = at(1) - at(-1);
    r.gradient[i] = fourth ? (8 * d1 - (at(2) - at(-2))) / (12 * h) : d1 / (2 * h);
  }
  r.notes = std::string(fourth ? "fourth-order " : "") + "central finite differences, step " +
            num(options.fdStep) + " on the parameter scale" +
            (oneSided > 0 ? "; " + std::to_string(oneSided) +
                                " parameter(s) at a bound by one-sided second-order differences"
                          : std::string()) +
            (narrowed > 0 ? "; " + std::to_string(narrowed) +
                                " parameter(s) with bounds narrower than 1, their step times the width"
                          : std::string());
  addPriors(problem, scaled, r);
  return r;
}

// Whether CVODES's fallback after a failed odeSD evaluation first integrates the states alone.
// Forward sensitivities outside the error test (the default) do not choose CVODES's steps, so
// the states' run tells at a fraction of the cost where a run with them would fail. The other
// gradient methods' own states-only passes cost what such a probe would.
bool probesStatesFirst(GradientMethod method, const ObjectiveOptions& options) {
  return method == GradientMethod::Forward && !options.sensitivityErrorControl;
}

}  // namespace

ObjectiveResult evaluateObjective(const Problem& problem, const std::vector<double>& scaled,
                                  GradientMethod method, const ObjectiveOptions& options,
                                  const ProgressMonitor& monitor) {
  if (options.forwardIntegrator != integrators::Method::OdeSd) {
    ObjectiveResult r = evaluateWithIntegrator(problem, scaled, method, options, monitor);
    r.integrator = options.forwardIntegrator;
    return r;
  }
  // odeSD first; whatever it could not do (too many steps, a failed Newton iteration, a
  // feature it lacks) CVODES does, so that odeSD never fails an evaluation CVODES can do.
  try {
    ObjectiveResult r = evaluateWithIntegrator(problem, scaled, method, options, monitor);
    r.integrator = integrators::Method::OdeSd;
    // odeSD's own hand-overs to CVODES inside a time course (a stiff tail, a bridge where ẍ is
    // not finite) are no failure, but a modeller sees them beside the gradient.
    for (const std::string& f : r.integration.fallbacks)
      r.notes += (r.notes.empty() ? "" : "; ") + f;
    return r;
  } catch (const Error& e) {
    // A cancel or invalid options would stop CVODES as well.
    if (dynamic_cast<const Cancelled*>(&e) || dynamic_cast<const InvalidOptions*>(&e)) throw;
    // A cancel that reached odeSD as another error (through a compile's cancellation scope)
    // starts no CVODES run.
    if (monitor.token.cancelled()) throw Cancelled(0);
    ObjectiveOptions cvodes = options;
    cvodes.forwardIntegrator = integrators::Method::Cvodes;
    if (const auto* failure = dynamic_cast<const IntegrationFailure*>(&e);
        failure && probesStatesFirst(method, cvodes))
      detail::stopAtSharedSingularity(*failure, [&] {
        evaluateWithIntegrator(problem, scaled, GradientMethod::None, cvodes, monitor);
      });
    ObjectiveResult r = evaluateWithIntegrator(problem, scaled, method, cvodes, monitor);
    r.integrator = integrators::Method::Cvodes;
    r.fallbacks.insert(r.fallbacks.begin(), std::string(kOdeSdFallback) + " (" + e.what() +
                                                "); CVODES computed this evaluation");
    return r;
  }
}

}  // namespace sensode::petab
