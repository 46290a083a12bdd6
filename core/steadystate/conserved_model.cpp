// SPDX-License-Identifier: MIT
// ConservedModel (steady_state_solver.h): the model reduced by its conservation laws, and the
// maps between full and reduced states, parameters and sensitivities.
#include "core/steadystate/steady_state_solver.h"

#include <algorithm>
#include <cmath>

#include "core/common/errors.h"

namespace sensode::steadystate {

// ---------------------------------------------------------------------------------------------
// ConservedModel

ConservedModel::ConservedModel(std::shared_ptr<const symbolic::CompiledModel> full)
    : full_(std::move(full)) {
  analysis_ = symbolic::analyzeConservation(full_->system());
  std::vector<char> isDependent(static_cast<std::size_t>(full_->nx()), 0);
  for (int r = 0; r < analysis_.laws.count(); ++r) {
    const int dep = analysis_.species[static_cast<std::size_t>(analysis_.laws.dependent[r])];
    dependent_.push_back(dep);
    isDependent[static_cast<std::size_t>(dep)] = 1;
  }
  for (int i = 0; i < full_->nx(); ++i)
    if (!isDependent[static_cast<std::size_t>(i)]) independent_.push_back(i);
  if (analysis_.laws.count() == 0) {
    reduced_ = full_;
  } else {
    reduced_ = std::make_shared<const symbolic::CompiledModel>(
        symbolic::reduceSystem(full_->system(), analysis_));
  }
  // Γ_I in reduced-state columns.
  std::vector<int> reducedIndex(static_cast<std::size_t>(full_->nx()), -1);
  for (std::size_t k = 0; k < independent_.size(); ++k)
    reducedIndex[static_cast<std::size_t>(independent_[k])] = static_cast<int>(k);
  gammaIndependent_ = Eigen::MatrixXd::Zero(nc(), static_cast<Eigen::Index>(independent_.size()));
  for (int r = 0; r < nc(); ++r)
    for (std::size_t c = 0; c < analysis_.species.size(); ++c) {
      const int k = reducedIndex[static_cast<std::size_t>(analysis_.species[c])];
      if (k >= 0) gammaIndependent_(r, k) = analysis_.laws.gamma(r, static_cast<Eigen::Index>(c));
    }
}

Eigen::VectorXd ConservedModel::totals(const std::vector<double>& xFull) const {
  Eigen::VectorXd t = Eigen::VectorXd::Zero(nc());
  for (int r = 0; r < nc(); ++r)
    for (std::size_t c = 0; c < analysis_.species.size(); ++c)
      t(r) += analysis_.laws.gamma(r, static_cast<Eigen::Index>(c)) *
              xFull[static_cast<std::size_t>(analysis_.species[c])];
  return t;
}

std::vector<double> ConservedModel::reducedParameters(const std::vector<double>& theta,
                                                      const std::vector<double>& xFull) const {
  std::vector<double> pr = theta;
  const Eigen::VectorXd t = totals(xFull);
  for (int r = 0; r < nc(); ++r) pr.push_back(t(r));
  return pr;
}

std::vector<double> ConservedModel::reduceState(const std::vector<double>& xFull) const {
  std::vector<double> xI;
  xI.reserve(independent_.size());
  for (int i : independent_) xI.push_back(xFull[static_cast<std::size_t>(i)]);
  return xI;
}

std::vector<double> ConservedModel::expandState(const std::vector<double>& xI,
                                                const std::vector<double>& pr) const {
  std::vector<double> x(static_cast<std::size_t>(nx()), 0.0);
  for (std::size_t k = 0; k < independent_.size(); ++k)
    x[static_cast<std::size_t>(independent_[k])] = xI[k];
  for (int r = 0; r < nc(); ++r) {
    double v = pr[static_cast<std::size_t>(np() + r)];
    for (Eigen::Index k = 0; k < gammaIndependent_.cols(); ++k)
      v -= gammaIndependent_(r, k) * xI[static_cast<std::size_t>(k)];
    x[static_cast<std::size_t>(dependent_[static_cast<std::size_t>(r)])] = v;
  }
  return x;
}

Eigen::MatrixXd ConservedModel::totalsSensitivity(const Eigen::MatrixXd& dxFull) const {
  Eigen::MatrixXd dT = Eigen::MatrixXd::Zero(nc(), dxFull.cols());
  for (int r = 0; r < nc(); ++r)
    for (std::size_t c = 0; c < analysis_.species.size(); ++c) {
      const double g = analysis_.laws.gamma(r, static_cast<Eigen::Index>(c));
      if (g != 0.0) dT.row(r) += g * dxFull.row(analysis_.species[c]);
    }
  return dT;
}

Eigen::MatrixXd ConservedModel::initialSensitivity(const std::vector<double>& theta) const {
  const symbolic::SparsePattern& pat = full_->initialSensitivityPattern();
  std::vector<double> values(static_cast<std::size_t>(pat.nnz()));
  full_->initialSensitivity(0.0, theta.data(), values.data());
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(nx(), np());
  for (int c = 0; c < pat.cols; ++c)
    for (int k = pat.colPtr[static_cast<std::size_t>(c)];
         k < pat.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      s(pat.rowIdx[static_cast<std::size_t>(k)], c) = values[static_cast<std::size_t>(k)];
  return s;
}

Eigen::MatrixXd ConservedModel::expandSensitivity(const Eigen::MatrixXd& sI,
                                                  const Eigen::MatrixXd& dT) const {
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(nx(), sI.cols());
  for (std::size_t k = 0; k < independent_.size(); ++k)
    s.row(independent_[k]) = sI.row(static_cast<Eigen::Index>(k));
  if (nc() > 0) {
    const Eigen::MatrixXd sD = dT - gammaIndependent_ * sI;
    for (int r = 0; r < nc(); ++r) s.row(dependent_[static_cast<std::size_t>(r)]) = sD.row(r);
  }
  return s;
}

Eigen::SparseMatrix<double> ConservedModel::jacobian(const std::vector<double>& xI,
                                                     const std::vector<double>& pr) const {
  const symbolic::SparsePattern& pat = reduced_->jacobianPattern();
  std::vector<double> values(static_cast<std::size_t>(pat.nnz()));
  reduced_->jacobian(0.0, xI.data(), pr.data(), values.data());
  const Eigen::Map<const Eigen::SparseMatrix<double>> m(pat.rows, pat.cols, pat.nnz(),
                                                        pat.colPtr.data(), pat.rowIdx.data(),
                                                        values.data());
  return Eigen::SparseMatrix<double>(m);
}

Eigen::MatrixXd ConservedModel::totalsJacobian(const std::vector<double>& xI,
                                               const std::vector<double>& pr) const {
  if (nc() == 0) return Eigen::MatrixXd::Zero(nr(), 0);
  return fullParamJacobian(xI, pr).rightCols(nc());
}

Eigen::MatrixXd ConservedModel::fullParamJacobian(const std::vector<double>& xI,
                                                  const std::vector<double>& pr) const {
  const symbolic::SparsePattern& pat = reduced_->paramJacobianPattern();
  std::vector<double> values(static_cast<std::size_t>(pat.nnz()));
  reduced_->paramJacobian(0.0, xI.data(), pr.data(), values.data());
  Eigen::MatrixXd fp = Eigen::MatrixXd::Zero(pat.rows, pat.cols);
  for (int c = 0; c < pat.cols; ++c)
    for (int k = pat.colPtr[static_cast<std::size_t>(c)];
         k < pat.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      fp(pat.rowIdx[static_cast<std::size_t>(k)], c) = values[static_cast<std::size_t>(k)];
  return fp;
}

Eigen::MatrixXd ConservedModel::totalParamJacobian(const std::vector<double>& xI,
                                                   const std::vector<double>& pr,
                                                   const Eigen::MatrixXd& dT) const {
  const Eigen::MatrixXd fp = fullParamJacobian(xI, pr);
  Eigen::MatrixXd f = fp.leftCols(np());
  if (nc() > 0) f += fp.rightCols(nc()) * dT;
  return f;
}


}  // namespace sensode::steadystate
