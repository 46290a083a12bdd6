// SPDX-License-Identifier: MIT
// One evaluation of the PEtab objective and its gradient (internal to core/petab; objective.h is
// the interface). objective.cpp holds the experiments (pre-equilibration, time course,
// post-equilibration) and the measurements' terms; objective_equilibration.cpp the
// equilibrations' adjoints (ssASA and backward integration); objective_time_course.cpp the time
// courses: forward (with sensitivities) and backward adjoint, split at the right-hand side's
// switching times (time_breakpoints.h).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <unordered_map>
#include <vector>

#include <Eigen/Dense>

#include "core/common/errors.h"
#include "core/petab/objective.h"
#include "core/petab/time_breakpoints.h"
#include "core/steadystate/adjoint_time_course.h"
#include "core/steadystate/steady_state_solver.h"

namespace sensode::petab::detail {

using symbolic::Expr;

// The model parameters some estimated parameter moves: the rows of dθ/dq that are not zero.
// Only their sensitivity columns (forward) or quadratures (adjoint) enter the gradient.
inline std::vector<int> movedParameters(const Eigen::MatrixXd& dTheta) {
  std::vector<int> k;
  for (Eigen::Index r = 0; r < dTheta.rows(); ++r)
    if (!dTheta.row(r).isZero(0.0)) k.push_back(static_cast<int>(r));
  return k;
}

// J_r singular at a steady state: ssASA's linear system has no solution.
class SingularJacobian : public Error {
 public:
  using Error::Error;
};

// The backward adjoint meets an event it has no jump conditions for (a cascade, a delay, a
// compartment resize of concentration states): objective_event_adjoint.cpp. evaluateObjective
// computes the gradient by forward sensitivities instead and says so.
class EventAdjointUnsupported : public Error {
 public:
  using Error::Error;
};

// A number for messages (%.6g).
std::string num(double v);

// Most evaluations odeSD fails in a fit are trial points whose solution blows up in finite time
// (Crauste, 20 starts: of 523 evaluations odeSD failed, CVODES failed 473; on 446 both stall at
// the same time, P ~ 1/(t* − t) just before its last measurement time, t = 28), where CVODES
// fails as well after paying for the sensitivities all the way there. When odeSD and CVODES's
// states-only run (statesRun) both stall (steps below 1e-12·t) at the same time (1e-4), the
// solution itself ends there: that failure is final. Anything else leaves the decision to the
// full CVODES run, as before: failures at different times (Crauste at t ≈ 0.02, 16 of the 523:
// CVODES's states fail at rtol 1e-10, its run with sensitivities passes, both pass at 1e-12) or
// at ordinary step sizes (Fujita at t ≈ 283, repeated error-test failures at h ≈ 1e-4, which
// the run with sensitivities often passes), so "odeSD never fails an evaluation CVODES can do"
// keeps holding.
// Returns when the full run has to decide; throws the shared failure (or a cancel).
void stopAtSharedSingularity(const IntegrationFailure& odesd,
                             const std::function<void()>& statesRun);

class Evaluator {
 public:
  // Progress: this evaluation is work units [unitOffset, unitOffset + 1) of unitTotal.
  Evaluator(const Problem& pr, const steadystate::ConservedModel& cm, const std::vector<double>& q,
            GradientMethod method, const ObjectiveOptions& o, const ProgressMonitor& monitor,
            double unitOffset, double unitTotal)
      : pr_(pr),
        model_(*pr.model),
        sys_(model_.system()),
        pool_(*sys_.pool),
        method_(method),
        o_(o),
        cm_(cm),
        outer_(monitor),
        unitOffset_(unitOffset),
        unitTotal_(unitTotal) {
    // Integrations and Newton iterations check this one: the outer token, and the outer
    // callback with the evaluation's own progress instead of the integration's t.
    monitor_.token = monitor.token;
    if (monitor.callback)
      monitor_.callback = [this](const ProgressInfo& info) {
        return outer_.callback({unitOffset_ + fractionDone_, unitTotal_, info.steps});
      };
    const std::vector<int> est = estimatedParameters(pr);
    nq_ = static_cast<int>(est.size());
    if (q.size() != est.size())
      throw InvalidOptions("objective: " + std::to_string(q.size()) + " parameter values for " +
                           std::to_string(est.size()) + " estimated parameters");
    values_.resize(pr.parameters.size());
    dvalue_.assign(pr.parameters.size(), 0.0);
    estIndex_.assign(pr.parameters.size(), -1);
    for (std::size_t j = 0; j < pr.parameters.size(); ++j)
      values_[j] = pr.parameters[j].nominalValue;
    for (int i = 0; i < nq_; ++i) {
      const auto j = static_cast<std::size_t>(est[static_cast<std::size_t>(i)]);
      const Parameter& p = pr.parameters[j];
      values_[j] = fromScale(p.scale, q[static_cast<std::size_t>(i)]);
      dvalue_[j] = p.scale == Scale::Lin ? 1.0
                   : p.scale == Scale::Log ? values_[j]
                                           : values_[j] * std::numbers::ln10;
      estIndex_[j] = i;
    }
    for (int i = 0; i < model_.nx(); ++i) stateOf_[sys_.states[static_cast<std::size_t>(i)].symbol] = i;
    for (int k = 0; k < model_.np(); ++k) paramOf_[sys_.params[static_cast<std::size_t>(k)].symbol] = k;
    for (const auto& [id, e] : pr.extraSymbols) extraOf_[e] = id;
    symbolValues_.assign(pool_.numSymbols(), 0.0);
    grad_ = Eigen::RowVectorXd::Zero(nq_);
  }

  ObjectiveResult run();

 private:
  bool forward() const { return method_ == GradientMethod::Forward; }
  bool ssasa() const { return method_ == GradientMethod::Ssasa; }
  bool adjoint() const { return method_ == GradientMethod::Adjoint; }
  bool backwardMethod() const { return ssasa() || adjoint(); }
  // The options of the time courses' integrator (forwardIntegrator): with odeSD, its own step
  // budget (ObjectiveOptions::odeSdMaxSteps).
  integrators::IntegratorOptions timeCourseOptions() const {
    integrators::IntegratorOptions o = o_.integrator;
    if (o_.forwardIntegrator == integrators::Method::OdeSd && o_.odeSdMaxSteps > 0)
      o.maxSteps = o_.odeSdMaxSteps;
    return o;
  }
  bool anyGradient() const { return forward() || backwardMethod(); }
  // Backward integration through an equilibration from xStart under θ, with the jump g at the
  // horizon: λ(0) (nx) and ∫λᵀf_θ dt (np; integrated only for the parameters dTheta moves, the
  // other entries 0).
  // `target` is the steady state the data were evaluated at (its eigenvalues set the horizon).
  void equilibrationAdjoint(const std::vector<double>& xStart, const std::vector<double>& theta,
                            const steadystate::SteadyStateSolution& target,
                            const Eigen::RowVectorXd& g, const Eigen::MatrixXd& dTheta,
                            const std::string& what, Eigen::RowVectorXd& lambda0,
                            Eigen::RowVectorXd& quad);

  // θ of a condition and dθ/dq (np × nq); c < 0: no condition.
  void conditionParameters(int c, std::vector<double>& theta, Eigen::MatrixXd& d) const;
  // The condition's numbers and parameter ids into θ and dθ/dq; marks the parameters it sets.
  void applyOverrides(const Condition& condition, std::vector<double>& theta, Eigen::MatrixXd& d,
                      std::vector<bool>& overridden) const;
  // A formula's value and partial derivatives: ∂/∂x (nx) and the explicit dq part.
  struct Partial {
    double value = 0;
    Eigen::RowVectorXd dx, dq;
  };
  Partial evaluate(Expr e, const Eigen::MatrixXd& dTheta, bool derivatives);
  void setPlaceholders(const Measurement& m);
  // Adds one measurement; returns (a_y, a_σ) and the two partials through out-params.
  void addMeasurement(const Measurement& m, const std::vector<double>& x, const std::vector<double>& theta,
                      double t, const Eigen::MatrixXd& dTheta, const Eigen::MatrixXd* dxdq,
                      Eigen::RowVectorXd* gState, Eigen::RowVectorXd* gExplicit);
  void experiment(int pre, int sim, const std::vector<std::size_t>& measurements);
  // Forward sensitivities when the simulation condition reinitializes `reset` states after the
  // pre-equilibration: their rows of ∂x0/∂θ become those of the initial values under thetaS,
  // mapped to q by dS. A column k serves both phases only when it maps the same way (dFlow = dS)
  // or its pre-equilibration part vanishes; otherwise PetabError.
  void reinitializeSensitivities(const std::vector<int>& reset, const std::vector<double>& thetaS,
                                 const Eigen::MatrixXd& dS, Eigen::MatrixXd& s0,
                                 Eigen::MatrixXd& dFlow, const std::string& preId,
                                 const std::string& simId) const;
  // The time course to the `timed` measurements (sorted by time) from x0, with forward
  // sensitivities started from s0Model (nx × np) when the method is Forward; restarted at each
  // time breakpoint of the right-hand side (time_breakpoints.h).
  // The same by the backward adjoint, one CVODES adjoint pass per interval between time
  // breakpoints; adds the quadratures, the explicit parts and the breakpoints' terms to the
  // gradient and returns λ(0) (nx).
  Eigen::RowVectorXd timeCourseAdjoint(const std::vector<std::size_t>& timed,
                                       const std::vector<double>& x0,
                                       const std::vector<double>& thetaS, const Eigen::MatrixXd& dS);
  // The same on a model with SBML events: split at the event times the event simulation driver
  // finds, λ carried across each by the adjoint jump conditions (objective_event_adjoint.cpp).
  Eigen::RowVectorXd timeCourseAdjointWithEvents(const std::vector<std::size_t>& timed,
                                                 const std::vector<double>& x0,
                                                 const std::vector<double>& thetaS,
                                                 const Eigen::MatrixXd& dS);
  // Which adjoint the passes ran ("odeSD, discrete adjoint", "CVODES, …" or both, joined by
  // " and "); each pass's fallback sentence goes to ObjectiveResult::fallbacks.
  std::string adjointPassesMethod(
      const std::vector<std::unique_ptr<steadystate::AdjointTimeCourse>>& passes);
  // f(τ⁻) − f(τ⁺) at a breakpoint τ with state x (nx).
  Eigen::VectorXd rhsJump(double tau, const std::vector<double>& x,
                          const std::vector<double>& theta) const;
  std::vector<TimeBreakpoint> breakpoints(const std::vector<std::size_t>& timed,
                                          const std::vector<double>& theta);
  void timeCourseForward(const std::vector<std::size_t>& timed, const std::vector<double>& x0,
                         const Eigen::MatrixXd& s0Model, const Eigen::MatrixXd& dFlow,
                         const std::vector<double>& thetaS, const Eigen::MatrixXd& dS);
  // The same for a model with SBML events, through the event simulation driver
  // (core/simulation/event_simulation.h: triggers located on the dense output, the event queue,
  // restarts, and the jumps of the forward sensitivities at each execution).
  // objective_events.cpp.
  void timeCourseWithEvents(const std::vector<std::size_t>& timed, const std::vector<double>& x0,
                            const Eigen::MatrixXd& s0Model, const Eigen::MatrixXd& dFlow,
                            const std::vector<double>& thetaS, const Eigen::MatrixXd& dS);
  // The forward sensitivities' columns: the model parameters k that dFlow maps to some estimated
  // parameter, their rows dK of dFlow, and S(t0) = s0Model's columns k (nx × |k|, column-major).
  void sensitivityColumns(const Eigen::MatrixXd& s0Model, const Eigen::MatrixXd& dFlow,
                          std::vector<int>& k, Eigen::MatrixXd& dK, std::vector<double>& s) const;
  // ssASA at a steady state: g·dx*/dθ = −μᵀF_θ + g_D·dT/dθ with J_rᵀμ = (g_I − g_D Γ_I)ᵀ and
  // dT/dθ = Γ ∂x₀/∂θ(θ) (1 × np). One transposed solve, independent of np (Eqs. 15 and 17).
  // With totalsWeight, the totals are not functions of ∂x₀/∂θ (post-equilibration after a
  // pre-equilibration): the dT/dθ term is left out and r_T = g_D − μᵀ ∂f_r/∂T returned instead.
  Eigen::RowVectorXd steadyStateAdjoint(const Eigen::RowVectorXd& g,
                                        const steadystate::SteadyStateSolution& sol,
                                        const std::vector<double>& theta, const std::string& what,
                                        Eigen::RowVectorXd* totalsWeight = nullptr);
  void report(const std::string& conditionId, const char* role,
              const steadystate::SteadyStateSolution& sol) {
    EquilibrationReport r{conditionId, role, sol};
    r.solution.sensitivities.resize(0, 0);
    result_.equilibrations.push_back(std::move(r));
  }
  void note(const std::string& text) {
    if (result_.notes.find(text) == std::string::npos)
      result_.notes += (result_.notes.empty() ? "" : "; ") + text;
  }
  // What ran instead of the usual computation (ObjectiveResult::fallbacks), also in the notes.
  void fallback(const std::string& text) {
    note(text);
    if (std::find(result_.fallbacks.begin(), result_.fallbacks.end(), text) ==
        result_.fallbacks.end())
      result_.fallbacks.push_back(text);
  }

  const Problem& pr_;
  const symbolic::CompiledModel& model_;
  const symbolic::OdeSystem& sys_;
  symbolic::ExprPool& pool_;
  GradientMethod method_;
  const ObjectiveOptions& o_;
  const steadystate::ConservedModel& cm_;
  const ProgressMonitor& outer_;
  ProgressMonitor monitor_;
  double unitOffset_ = 0, unitTotal_ = 1;
  double fractionDone_ = 0;  // of this evaluation's experiments
  int nq_ = 0;
  std::vector<double> values_, dvalue_;
  std::vector<int> estIndex_;
  std::unordered_map<Expr, int> stateOf_, paramOf_;
  std::unordered_map<Expr, std::string> extraOf_;
  std::vector<double> symbolValues_;
  // Per measurement: value and d value/dq of each extra symbol id.
  std::unordered_map<std::string, std::pair<double, int>> extraValue_;  // value, petab index
  ObjectiveResult result_;
  Eigen::RowVectorXd grad_;
};

}  // namespace sensode::petab::detail
