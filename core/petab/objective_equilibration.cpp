// SPDX-License-Identifier: MIT
// The objective's equilibration adjoints: ssASA's transposed solve at a steady state (Lakrisenko
// et al. 2023, Eqs. 15 and 17) and the standard adjoint's backward integration through an
// equilibration.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/SparseLU>

#include "core/integrators/absolute_tolerances.h"
#include "core/petab/objective_evaluator.h"
#include "core/steadystate/adjoint_time_course.h"

namespace sensode::petab::detail {

namespace {

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

}  // namespace

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
    Eigen::VectorXd xs(nr);
    for (int a = 0; a < nr; ++a)
      xs(a) = std::max(std::abs(sol.reducedState[static_cast<std::size_t>(a)]), o_.steadyState.atol);
    const steadystate::ScaledLu lu(cm_.jacobian(sol.reducedState, sol.reducedParameters), &xs);
    // The solver's verdict also tests J_r with the states below atol set to 0 (a curve of
    // steady states), which this factorization alone would not see.
    const double cond = std::max(lu.condition(), sol.scaledConditionEstimate);
    if (!lu.ok() || !(cond < 1e14))
      throw SingularJacobian(what + ": ssASA is not applicable: J_r is singular at the steady "
                             "state even after conservation reduction (condition estimate " +
                             num(cond) + " with J_r scaled to the states' units)");
    const Eigen::VectorXd mu = lu.solveTransposed(Eigen::MatrixXd(gE.transpose()));
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
                                     const Eigen::RowVectorXd& g, const Eigen::MatrixXd& dTheta,
                                     const std::string& what, Eigen::RowVectorXd& lambda0,
                                     Eigen::RowVectorXd& quad) {
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
  adj.setQuadratureParameters(movedParameters(dTheta));
  // The quadrature ∫λᵀf_θ dt weighs each state by λ, and λ = ∂J/∂x is large for small states
  // under log-scale observables (∂/∂x log x = 1/x): there the absolute error the forward pass
  // allows in x matters relative to x. With one atol (1e-12) for all, a species near 1e-15 at
  // the steady state is not resolved at all (Blasi: adjoint gradients off by up to 5.6e-4 after
  // the horizon fix; 9.5e-7 with atol 1e-16, 1.9e-8 with 1e-20). So each state gets
  // atol_i = rtol·|x_i*| (relative accuracy where the data are taken), never looser than the
  // option's atol, and not below kAtolFloor·atol, which keeps states that are exactly 0 at the
  // steady state from asking for an absolute accuracy beyond double precision.
  {
    // The option's atol per state as every integration has it (atol × size for a species read
    // in concentration, absolute_tolerances.h).
    const std::vector<double> atolMax =
        integrators::absoluteTolerances(*pr_.model, o_.integrator.atol, 0.0, xStart, theta);
    std::vector<double> atol(target.state.size());
    for (std::size_t i = 0; i < atol.size(); ++i)
      atol[i] = std::clamp(o_.integrator.rtol * std::abs(target.state[i]),
                           kAtolFloor * atolMax[i], atolMax[i]);
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

}  // namespace sensode::petab::detail
