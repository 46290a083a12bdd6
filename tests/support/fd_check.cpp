// SPDX-License-Identifier: MIT
#include "support/fd_check.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <sstream>

namespace sensode::test {
namespace {

using Fn = std::function<void(const std::vector<double>& arg, std::vector<double>& out)>;

// Dense matrix from CSC values.
std::vector<double> dense(const symbolic::SparsePattern& pat, const std::vector<double>& values) {
  std::vector<double> d(static_cast<std::size_t>(pat.rows) * static_cast<std::size_t>(pat.cols), 0.0);
  for (int c = 0; c < pat.cols; ++c)
    for (int k = pat.colPtr[static_cast<std::size_t>(c)]; k < pat.colPtr[static_cast<std::size_t>(c) + 1]; ++k)
      d[static_cast<std::size_t>(pat.rowIdx[static_cast<std::size_t>(k)]) * static_cast<std::size_t>(pat.cols) + static_cast<std::size_t>(c)] =
          values[static_cast<std::size_t>(k)];
  return d;
}

std::vector<double> centralColumn(const Fn& fn, std::vector<double> arg, int col, double h,
                                  int rows) {
  std::vector<double> plus(static_cast<std::size_t>(rows)), minus(static_cast<std::size_t>(rows));
  const double base = arg[static_cast<std::size_t>(col)];
  arg[static_cast<std::size_t>(col)] = base + h;
  fn(arg, plus);
  arg[static_cast<std::size_t>(col)] = base - h;
  fn(arg, minus);
  for (int i = 0; i < rows; ++i)
    plus[static_cast<std::size_t>(i)] = (plus[static_cast<std::size_t>(i)] - minus[static_cast<std::size_t>(i)]) / (2 * h);
  return plus;
}

// Compares the analytic dense matrix (rows × cols) with central differences of fn.
void compare(const std::string& name, const Fn& fn, const std::vector<double>& arg,
             const std::vector<double>& analytic, int rows, int cols, double rtol, double atol,
             FdReport& report) {
  // Row scale: the largest analytic magnitude in the row, so that atol is relative to it.
  std::vector<double> rowScale(static_cast<std::size_t>(rows), 1.0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      rowScale[static_cast<std::size_t>(i)] = std::max(rowScale[static_cast<std::size_t>(i)],
          std::abs(analytic[static_cast<std::size_t>(i * cols + j)]));
  // Rounding error of a central difference is about eps·|F_i|/h: large terms of F_i that do not
  // depend on the argument make the difference noisy, not the derivative wrong.
  std::vector<double> value(static_cast<std::size_t>(rows));
  fn(arg, value);
  for (int j = 0; j < cols; ++j) {
    const double h0 = 1e-6 * std::max(std::abs(arg[static_cast<std::size_t>(j)]), 1e-2);
    std::vector<std::vector<double>> retries;  // larger step (rounding), smaller step (kinks)
    const auto fd = centralColumn(fn, arg, j, h0, rows);
    for (int i = 0; i < rows; ++i) {
      const std::size_t ii = static_cast<std::size_t>(i);
      const double an = analytic[ii * static_cast<std::size_t>(cols) + static_cast<std::size_t>(j)];
      auto agrees = [&](double d, double h) {
        const double rounding = 1e3 * 2.2e-16 * std::abs(value[ii]) / h;
        return std::abs(an - d) <= atol * rowScale[ii] + rtol * std::abs(d) + rounding;
      };
      ++report.entriesChecked;
      if (agrees(fd[ii], h0)) continue;
      if (!std::isfinite(an) && !std::isfinite(fd[ii])) continue;
      if (retries.empty()) {
        retries.push_back(centralColumn(fn, arg, j, h0 * 1e2, rows));
        retries.push_back(centralColumn(fn, arg, j, h0 * 1e-2, rows));
      }
      if (agrees(retries[0][ii], h0 * 1e2) || agrees(retries[1][ii], h0 * 1e-2)) continue;
      report.mismatches.push_back({name, i, j, an, fd[ii]});
    }
  }
}

}  // namespace

std::string FdMismatch::describe(const symbolic::CompiledModel& m) const {
  std::ostringstream s;
  s.precision(10);
  const auto& sys = m.system();
  const bool byParam = quantity == "fp" || quantity == "ap" || quantity == "S0";
  const std::string rowId = quantity == "ft" ? "" : sys.states[static_cast<std::size_t>(row)].id;
  const std::string colId = quantity == "ft" ? "t"
                            : byParam ? sys.params[static_cast<std::size_t>(col)].id
                                      : sys.states[static_cast<std::size_t>(col)].id;
  s << quantity << "(" << rowId << ", " << colId << "): analytic " << analytic << ", FD "
    << finiteDifference;
  return s.str();
}

std::vector<double> samplePoint(const symbolic::CompiledModel& model, const std::vector<double>& p,
                                unsigned seed) {
  std::vector<double> x(static_cast<std::size_t>(model.nx()));
  model.initialState(0.0, p.data(), x.data());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.8, 1.2);
  for (double& v : x) v = (std::isfinite(v) && std::abs(v) > 1e-3 ? v : 0.5) * u(rng);
  return x;
}

FdReport checkDerivatives(const symbolic::CompiledModel& m, double t, const std::vector<double>& x,
                          const std::vector<double>& p, double rtol, double atol) {
  FdReport report;
  const int n = m.nx(), np = m.np();
  auto values = [](const symbolic::SparsePattern& pat) {
    return std::vector<double>(static_cast<std::size_t>(pat.nnz()));
  };
  // f and a as functions of x, of p, and of t.
  Fn fOfX = [&](const std::vector<double>& xx, std::vector<double>& out) { m.rhs(t, xx.data(), p.data(), out.data()); };
  Fn fOfP = [&](const std::vector<double>& pp, std::vector<double>& out) { m.rhs(t, x.data(), pp.data(), out.data()); };
  Fn aOfX = [&](const std::vector<double>& xx, std::vector<double>& out) { m.secondDerivative(t, xx.data(), p.data(), out.data()); };
  Fn aOfP = [&](const std::vector<double>& pp, std::vector<double>& out) { m.secondDerivative(t, x.data(), pp.data(), out.data()); };
  Fn x0OfP = [&](const std::vector<double>& pp, std::vector<double>& out) { m.initialState(0.0, pp.data(), out.data()); };
  Fn fOfT = [&](const std::vector<double>& tt, std::vector<double>& out) { m.rhs(tt[0], x.data(), p.data(), out.data()); };

  auto j = values(m.jacobianPattern());
  m.jacobian(t, x.data(), p.data(), j.data());
  compare("J", fOfX, x, dense(m.jacobianPattern(), j), n, n, rtol, atol, report);
  auto fp = values(m.paramJacobianPattern());
  m.paramJacobian(t, x.data(), p.data(), fp.data());
  compare("fp", fOfP, p, dense(m.paramJacobianPattern(), fp), n, np, rtol, atol, report);
  auto jj = values(m.jacobianOfSecondPattern());
  m.jacobianOfSecond(t, x.data(), p.data(), jj.data());
  compare("JJ", aOfX, x, dense(m.jacobianOfSecondPattern(), jj), n, n, rtol, atol, report);
  auto ap = values(m.secondParamJacobianPattern());
  m.secondParamJacobian(t, x.data(), p.data(), ap.data());
  compare("ap", aOfP, p, dense(m.secondParamJacobianPattern(), ap), n, np, rtol, atol, report);
  auto s0 = values(m.initialSensitivityPattern());
  m.initialSensitivity(0.0, p.data(), s0.data());
  compare("S0", x0OfP, p, dense(m.initialSensitivityPattern(), s0), n, np, rtol, atol, report);
  std::vector<double> ft(static_cast<std::size_t>(n));
  m.timeDerivative(t, x.data(), p.data(), ft.data());
  compare("ft", fOfT, {t}, ft, n, 1, rtol, atol, report);

  // a must equal J·f + ∂f/∂t, computed here numerically from the checked J.
  std::vector<double> f(static_cast<std::size_t>(n)), a(static_cast<std::size_t>(n));
  m.rhsAndSecond(t, x.data(), p.data(), f.data(), a.data());
  const auto jd = dense(m.jacobianPattern(), j);
  for (int i = 0; i < n; ++i) {
    double s = ft[static_cast<std::size_t>(i)], scale = std::abs(s);
    for (int k = 0; k < n; ++k) {
      s += jd[static_cast<std::size_t>(i * n + k)] * f[static_cast<std::size_t>(k)];
      scale = std::max(scale, std::abs(jd[static_cast<std::size_t>(i * n + k)] * f[static_cast<std::size_t>(k)]));
    }
    ++report.entriesChecked;
    if (std::abs(s - a[static_cast<std::size_t>(i)]) > 1e-10 * std::max(scale, 1.0) && !(std::isnan(s) && std::isnan(a[static_cast<std::size_t>(i)])))
      report.mismatches.push_back({"a", i, 0, a[static_cast<std::size_t>(i)], s});
  }
  return report;
}

}  // namespace sensode::test
