// SPDX-License-Identifier: MIT
#include "core/symbolic/dae_consistency.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/common/errors.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::symbolic {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// ∂f/∂x (all rows) as a dense matrix.
Eigen::MatrixXd denseJacobian(const CompiledModel& model, double t, const double* x,
                              const double* p) {
  const SparsePattern& jp = model.jacobianPattern();
  std::vector<double> values(static_cast<std::size_t>(jp.nnz()));
  model.jacobian(t, x, p, values.data());
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(model.nx(), model.nx());
  for (int c = 0; c < jp.cols; ++c)
    for (int k = jp.colPtr[static_cast<std::size_t>(c)]; k < jp.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      J(jp.rowIdx[static_cast<std::size_t>(k)], c) = values[static_cast<std::size_t>(k)];
  return J;
}

Eigen::MatrixXd block(const Eigen::MatrixXd& J, const std::vector<int>& rows,
                      const std::vector<int>& cols) {
  Eigen::MatrixXd B(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < cols.size(); ++j)
      B(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = J(rows[i], cols[j]);
  return B;
}

std::string constraintOf(const CompiledModel& model, int state) {
  return model.system().states[static_cast<std::size_t>(state)].constraint;
}

// ∂g/∂z singular: the system is not index 1. Names a constraint that involves no algebraic
// variable when there is one (the typical index-2 case), else every constraint of the block.
[[noreturn]] void throwSingular(const CompiledModel& model, const Eigen::MatrixXd& Gz,
                                const std::vector<int>& z, double t) {
  std::string names;
  for (Eigen::Index i = 0; i < Gz.rows(); ++i)
    if (Gz.row(i).cwiseAbs().maxCoeff() == 0) {
      names = "the " + constraintOf(model, z[static_cast<std::size_t>(i)]) +
              " does not depend on any variable the algebraic constraints determine";
      break;
    }
  if (names.empty()) {
    for (std::size_t i = 0; i < z.size(); ++i)
      names += (i ? ", " : "the constraints ") + constraintOf(model, z[i]);
    names += " do not determine their variables (their Jacobian with respect to them is "
             "singular)";
  }
  throw Error(model.system().modelFile + ": at t = " + num(t) + ", " + names +
              ": the differential-algebraic system has index > 1, which Sensode cannot integrate");
}

// Lets the fast reactions run: dx/dt = N_fast·rate(x) with everything else fixed, by
// pseudo-transient continuation (backward Euler steps (I/h − N_fast·∂rate/∂x)·Δ = N_fast·rate,
// h growing tenfold after a step that follows the flow, shrinking otherwise). From a point where the
// equilibrium conditions are degenerate (rate = k·S1·S2 at S1 = S2: ∂g/∂z singular) this walks
// to the equilibrium the reactions actually reach (suite cases 01399, 01569), which Newton's
// method alone cannot choose; the pools L·x are conserved by every step (L·N_fast = 0).
void relaxFastReactions(const CompiledModel& model, double t, double* x, const double* p) {
  const OdeSystem& sys = model.system();
  const int n = model.nx();
  const auto nf = static_cast<Eigen::Index>(sys.fastRateRow.size());
  Eigen::MatrixXd N = Eigen::MatrixXd::Zero(n, nf);
  for (const auto& e : sys.fastStoichiometry) N(e.state, e.reaction) += e.coefficient;
  std::vector<double> f(static_cast<std::size_t>(n));
  auto flux = [&](const double* state, Eigen::VectorXd& out) {
    model.rhs(t, state, p, f.data());
    Eigen::VectorXd rate(nf);
    for (Eigen::Index j = 0; j < nf; ++j) rate(j) = f[static_cast<std::size_t>(sys.fastRateRow[static_cast<std::size_t>(j)])];
    out = N * rate;
    return out.allFinite();
  };
  Eigen::VectorXd current(n), trialFlux(n);
  if (!flux(x, current)) return;  // Newton reports the non-finite constraint
  const Eigen::Map<const Eigen::VectorXd> x0(x, n);
  const double scale = 1 + x0.cwiseAbs().maxCoeff();
  double h = 1e-6 * scale / std::max(current.cwiseAbs().maxCoeff(), 1e-300);
  std::vector<double> trial(static_cast<std::size_t>(n));
  for (int iteration = 0; iteration < 400; ++iteration) {
    const double norm = current.cwiseAbs().maxCoeff();
    if (norm <= 1e-12 * scale || h < 1e-300) return;
    const Eigen::MatrixXd J = denseJacobian(model, t, x, p);
    Eigen::MatrixXd rateJacobian(nf, n);
    for (Eigen::Index j = 0; j < nf; ++j) rateJacobian.row(j) = J.row(sys.fastRateRow[static_cast<std::size_t>(j)]);
    const Eigen::MatrixXd M =
        Eigen::MatrixXd::Identity(n, n) / h - N * rateJacobian;
    const Eigen::VectorXd delta = M.partialPivLu().solve(current);
    for (int i = 0; i < n; ++i) trial[static_cast<std::size_t>(i)] = x[i] + delta(i);
    // The step must follow the flow: every species moves the way its flux points, and no flux
    // changes sign (overshooting an equilibrium, or jumping to one the reactions run away
    // from: k·S1·S2 = 0 has two, and only one is reached). |flux| is no guide: along the flow
    // of S0b → S0 at rate S0·S0b it grows until S0 = S0b (suite case 01565).
    bool follows = delta.allFinite() && flux(trial.data(), trialFlux);
    for (int i = 0; follows && i < n; ++i) {
      const double tiny = 1e-12 * scale;
      follows = (delta(i) * current(i) >= 0 || std::abs(delta(i)) <= tiny) &&
                (trialFlux(i) * current(i) >= 0 || std::abs(trialFlux(i)) <= tiny);
    }
    if (follows) {
      std::copy(trial.begin(), trial.end(), x);
      current = trialFlux;
      h *= 10;
    } else {
      h /= 10;
    }
  }
}

}  // namespace

std::vector<int> algebraicStates(const CompiledModel& model) {
  std::vector<int> z;
  for (int i = 0; i < model.nx(); ++i)
    if (model.system().states[static_cast<std::size_t>(i)].algebraic) z.push_back(i);
  return z;
}

void solveAlgebraicStates(const CompiledModel& model, double t, double* x, const double* p) {
  const std::vector<int> z = algebraicStates(model);
  if (z.empty()) return;
  if (!model.system().fastRateRow.empty()) relaxFastReactions(model, t, x, p);
  const auto nz = static_cast<Eigen::Index>(z.size());
  std::vector<double> f(static_cast<std::size_t>(model.nx()));
  auto residual = [&](Eigen::VectorXd& g) {
    model.rhs(t, x, p, f.data());
    for (Eigen::Index i = 0; i < nz; ++i) g(i) = f[static_cast<std::size_t>(z[static_cast<std::size_t>(i)])];
    return g.allFinite();
  };
  Eigen::VectorXd g(nz), trial(nz);
  bool finite = residual(g);
  constexpr int kMaxIterations = 100;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    if (!finite) break;
    const Eigen::MatrixXd Gz = block(denseJacobian(model, t, x, p), z, z);
    Eigen::FullPivLU<Eigen::MatrixXd> lu(Gz);
    if (!Gz.allFinite()) break;
    if (lu.rank() < nz) throwSingular(model, Gz, z, t);
    const Eigen::VectorXd step = lu.solve(-g);
    // Backtracking on |g|: full steps near the solution, shorter ones where g is very curved.
    const double g0 = g.norm();
    double lambda = 1;
    std::vector<double> z0(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) z0[i] = x[z[i]];
    for (int cut = 0; cut < 30; ++cut, lambda /= 2) {
      for (std::size_t i = 0; i < z.size(); ++i)
        x[z[i]] = z0[i] + lambda * step(static_cast<Eigen::Index>(i));
      finite = residual(trial);
      if (finite && trial.norm() <= (1 - 1e-4 * lambda) * g0) break;
    }
    g = trial;
    bool small = true;
    for (std::size_t i = 0; i < z.size(); ++i)
      small = small && std::abs(lambda * step(static_cast<Eigen::Index>(i))) <=
                           1e-12 * (1 + std::abs(x[z[i]]));
    if (finite && (small || g.norm() == 0)) return;
  }
  // Name the constraint with the largest residual.
  Eigen::Index worst = 0;
  if (finite) g.cwiseAbs().maxCoeff(&worst);
  throw Error(model.system().modelFile + ": no consistent initial values at t = " + num(t) +
              ": the " + constraintOf(model, z[static_cast<std::size_t>(worst)]) +
              (finite ? " cannot be satisfied (residual " + num(g(worst)) + " after " +
                            std::to_string(kMaxIterations) + " Newton iterations)"
                      : " is not finite near the initial values"));
}

void solveAlgebraicSensitivities(const CompiledModel& model, double t, const double* x,
                                 const double* p, std::vector<double>& s) {
  const std::vector<int> z = algebraicStates(model);
  if (z.empty()) return;
  const int nx = model.nx(), np = model.np();
  std::vector<int> d;
  for (int i = 0, k = 0; i < nx; ++i) {
    if (k < static_cast<int>(z.size()) && z[static_cast<std::size_t>(k)] == i) ++k;
    else d.push_back(i);
  }
  const Eigen::MatrixXd J = denseJacobian(model, t, x, p);
  const Eigen::MatrixXd Gz = block(J, z, z);
  Eigen::FullPivLU<Eigen::MatrixXd> lu(Gz);
  if (lu.rank() < Gz.rows()) throwSingular(model, Gz, z, t);
  const SparsePattern& fpp = model.paramJacobianPattern();
  std::vector<double> fp(static_cast<std::size_t>(fpp.nnz()));
  model.paramJacobian(t, x, p, fp.data());
  Eigen::MatrixXd rhs = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(z.size()), np);
  std::vector<int> rowOf(static_cast<std::size_t>(nx), -1);
  for (std::size_t i = 0; i < z.size(); ++i) rowOf[static_cast<std::size_t>(z[i])] = static_cast<int>(i);
  for (int c = 0; c < np; ++c)
    for (int k = fpp.colPtr[static_cast<std::size_t>(c)]; k < fpp.colPtr[static_cast<std::size_t>(c) + 1]; ++k) {
      const int r = rowOf[static_cast<std::size_t>(fpp.rowIdx[static_cast<std::size_t>(k)])];
      if (r >= 0) rhs(r, c) += fp[static_cast<std::size_t>(k)];
    }
  const Eigen::Map<Eigen::MatrixXd> S(s.data(), nx, np);
  for (std::size_t i = 0; i < z.size(); ++i)
    for (int j : d) rhs.row(static_cast<Eigen::Index>(i)) += J(z[i], j) * S.row(j);
  const Eigen::MatrixXd Sz = lu.solve(-rhs);
  Eigen::Map<Eigen::MatrixXd> out(s.data(), nx, np);
  for (std::size_t i = 0; i < z.size(); ++i) out.row(z[i]) = Sz.row(static_cast<Eigen::Index>(i));
}

}  // namespace sensode::symbolic
