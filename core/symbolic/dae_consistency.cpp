// SPDX-License-Identifier: MIT
#include "core/symbolic/dae_consistency.h"

#include <Eigen/Dense>

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
