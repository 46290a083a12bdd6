// SPDX-License-Identifier: MIT
#include "core/simulation/delay_history.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sensode::simulation {
namespace {

constexpr int kQuarticNodes = 5;
using Basis = std::array<std::array<double, kQuarticNodes>, kQuarticNodes>;  // [m][power] coefficients

// Coefficients of the Lagrange basis polynomials on θ_m = m/4 (quartic interpolation of a step).
const Basis& lagrangeBasis() {
  static const Basis basis = [] {
    Basis b{};
    for (int m = 0; m < kQuarticNodes; ++m) {
      std::array<double, kQuarticNodes> c{};
      c[0] = 1;
      int degree = 0;
      double denominator = 1;
      for (int i = 0; i < kQuarticNodes; ++i) {
        if (i == m) continue;
        const double ti = i / 4.0;
        for (int d = degree + 1; d > 0; --d) c[static_cast<std::size_t>(d)] =
            c[static_cast<std::size_t>(d - 1)] - ti * c[static_cast<std::size_t>(d)];
        c[0] *= -ti;
        ++degree;
        denominator *= m / 4.0 - ti;
      }
      for (double& v : c) v /= denominator;
      b[static_cast<std::size_t>(m)] = c;
    }
    return b;
  }();
  return basis;
}

// Weights of the node values for the value, first and second θ-derivative at θ.
void basisAt(double th, double* l0, double* l1, double* l2) {
  const Basis& b = lagrangeBasis();
  for (std::size_t m = 0; m < kQuarticNodes; ++m) {
    const auto& c = b[m];
    double v = 0;
    for (int k = kQuarticNodes - 1; k >= 0; --k) v = v * th + c[static_cast<std::size_t>(k)];
    const double d1 = c[1] + 2 * c[2] * th + 3 * c[3] * th * th + 4 * c[4] * th * th * th;
    const double d2 = 2 * c[2] + 6 * c[3] * th + 12 * c[4] * th * th;
    l0[m] = v;
    l1[m] = d1;
    l2[m] = d2;
  }
}

}  // namespace

DelayHistory::DelayHistory(const symbolic::OdeSystem& system)
    : system_(&system),
      nx_(system.numStates()),
      np_(system.numParams()),
      nd_(static_cast<int>(system.delays.size())) {
  symbolic::ExprPool& pool = *system.pool;
  symbolic::TapeInputs in;
  in.time = system.time;
  for (const auto& s : system.states) in.x.push_back(s.symbol);
  for (const auto& p : system.params) in.p.push_back(p.symbol);
  std::vector<symbolic::Expr> g, tau;
  for (const auto& d : system.delays) {
    g.push_back(d.value);
    tau.push_back(d.tau);
    bool constant = !pool.dependsOn(d.tau, system.time);
    for (const auto& s : system.states) constant = constant && !pool.dependsOn(d.tau, s.symbol);
    constantTau_.push_back(constant);
  }
  for (const auto& d : system.delays) {
    const symbolic::Expr b1 = pool.diff(d.before, system.time);
    beforeTapes_.emplace_back(pool, in, std::vector<symbolic::Expr>{d.before, b1, pool.diff(b1, system.time)});
  }
  before_.resize(static_cast<std::size_t>(std::max(2 * (nx_ + np_) + 3, nd_)));
  gTape_ = symbolic::Tape(pool, in, g);
  tauTape_ = symbolic::Tape(pool, in, tau);
  tau_.resize(static_cast<std::size_t>(nd_));
  constantTauValue_.assign(static_cast<std::size_t>(nd_), 0.0);
  xs_.resize(static_cast<std::size_t>(nx_));
}

void DelayHistory::enableSensitivities(const std::vector<int>& paramIndices) {
  sensParams_ = paramIndices;
  ns_ = static_cast<int>(paramIndices.size());
  symbolic::ExprPool& pool = *system_->pool;
  symbolic::TapeInputs in;
  in.time = system_->time;
  for (const auto& s : system_->states) in.x.push_back(s.symbol);
  for (const auto& p : system_->params) in.p.push_back(p.symbol);
  std::vector<symbolic::Expr> gx, gp;
  for (const auto& d : system_->delays) {
    for (const auto& s : system_->states) gx.push_back(pool.diff(d.value, s.symbol));
    for (const auto& p : system_->params) gp.push_back(pool.diff(d.value, p.symbol));
  }
  for (const auto& d : system_->delays) {
    std::vector<symbolic::Expr> roots;
    for (int pass = 0; pass < 2; ++pass) {
      const symbolic::Expr b = pass == 0 ? d.before : pool.diff(d.before, system_->time);
      for (const auto& s : system_->states) roots.push_back(pool.diff(b, s.symbol));
      for (const auto& p : system_->params) roots.push_back(pool.diff(b, p.symbol));
    }
    beforeSensTapes_.emplace_back(pool, in, roots);
  }
  gxTape_ = symbolic::Tape(pool, in, gx);
  gpTape_ = symbolic::Tape(pool, in, gp);
  gx_.resize(gx.size());
  gpFull_.resize(gp.size());
  ss_.resize(static_cast<std::size_t>(nx_ * ns_));
}

// G at (s, x) into g (nd) and, with sensitivities S = sens (nx × ns), ∂G/∂p into gp (nd × ns).
void DelayHistory::sample(double s, const double* x, const double* sens, double* g, double* gp) {
  gTape_.evaluate(s, x, p_, g);
  if (ns_ == 0 || sens == nullptr) return;
  gxTape_.evaluate(s, x, p_, gx_.data());
  gpTape_.evaluate(s, x, p_, gpFull_.data());
  for (int j = 0; j < nd_; ++j)
    for (int k = 0; k < ns_; ++k) {
      double v = gpFull_[static_cast<std::size_t>(j * np_ + sensParams_[static_cast<std::size_t>(k)])];
      for (int i = 0; i < nx_; ++i)
        v += gx_[static_cast<std::size_t>(j * nx_ + i)] * sens[static_cast<std::size_t>(k * nx_ + i)];
      gp[static_cast<std::size_t>(j * ns_ + k)] = v;
    }
}

void DelayHistory::start(double t0, const double* x0, const double* p, const double* s0) {
  p_ = p;
  t0_ = t0;
  ta_.clear();
  tb_.clear();
  values_.clear();
  sens_.clear();
  x0_.assign(x0, x0 + nx_);
  s0_.assign(static_cast<std::size_t>(nx_ * ns_), 0.0);
  if (s0 != nullptr) std::copy_n(s0, s0_.size(), s0_.begin());
  tauTape_.evaluate(t0, x0, p, tau_.data());
  for (std::size_t j = 0; j < tau_.size(); ++j) constantTauValue_[j] = tau_[j];
}

void DelayHistory::addStep(double ta, double tb, integrators::StepDenseOutput& dense) {
  while (!ta_.empty() && ta_.back() >= ta) {  // an integration again over the same interval
    ta_.pop_back();
    tb_.pop_back();
    values_.resize(values_.size() - static_cast<std::size_t>(kNodes * nd_));
    sens_.resize(sens_.size() - static_cast<std::size_t>(kNodes * nd_ * ns_));
  }
  if (!(tb > ta)) return;
  ta_.push_back(ta);
  tb_.push_back(tb);
  const std::size_t v0 = values_.size(), s0 = sens_.size();
  values_.resize(v0 + static_cast<std::size_t>(kNodes * nd_));
  sens_.resize(s0 + static_cast<std::size_t>(kNodes * nd_ * ns_));
  for (int m = 0; m < kNodes; ++m) {
    const double s = m == kNodes - 1 ? tb : ta + (tb - ta) * (m / 4.0);
    dense.state(s, xs_.data());
    const bool withSens = ns_ > 0 && dense.sensitivities(s, ss_.data());
    sample(s, xs_.data(), withSens ? ss_.data() : nullptr,
           values_.data() + v0 + static_cast<std::size_t>(m * nd_),
           sens_.data() + s0 + static_cast<std::size_t>(m * nd_ * ns_));
  }
}

void DelayHistory::fill(double t, const double* x, const double* p, double* inputs) const {
  const auto nd = static_cast<std::size_t>(nd_), np = static_cast<std::size_t>(np_),
             ns = static_cast<std::size_t>(ns_);
  std::fill_n(inputs, 3 * nd + 2 * nd * np, 0.0);
  double* sigma = inputs + 3 * nd;
  double* omega = sigma + nd * np;
  tauTape_.evaluate(t, x, p, tau_.data());
  double l0[kNodes], l1[kNodes], l2[kNodes];
  for (std::size_t j = 0; j < nd; ++j) {
    const double s = t - tau_[j];
    // The step holding s: the last one starting at or before it (after a restart at an event
    // the new steps start where the old one was cut).
    const auto it = std::upper_bound(ta_.begin(), ta_.end(), s);
    if (s < t0_) {
      fillBefore(j, s, inputs, sigma, omega);
      continue;
    }
    if (it == ta_.begin()) {  // no step yet (s = t0, or a model without states): G at x0
      gTape_.evaluate(s, x0_.data(), p_, before_.data());
      inputs[3 * j] = before_[j];
      continue;
    }
    const auto step = static_cast<std::size_t>(it - ta_.begin() - 1);
    const double h = tb_[step] - ta_[step];
    basisAt((s - ta_[step]) / h, l0, l1, l2);  // θ > 1 extrapolates (s in the current step)
    const double* v = values_.data() + step * kNodes * nd;
    double z = 0, w = 0, q = 0;
    for (std::size_t m = 0; m < kNodes; ++m) {
      const double g = v[m * nd + j];
      z += l0[m] * g;
      w += l1[m] * g;
      q += l2[m] * g;
    }
    inputs[3 * j] = z;
    inputs[3 * j + 1] = w / h;
    inputs[3 * j + 2] = q / (h * h);
    const double* sv = sens_.data() + step * kNodes * nd * ns;
    for (std::size_t k = 0; k < ns; ++k) {
      double a = 0, b = 0;
      for (std::size_t m = 0; m < kNodes; ++m) {
        const double g = sv[(m * nd + j) * ns + k];
        a += l0[m] * g;
        b += l1[m] * g;
      }
      const auto col = static_cast<std::size_t>(sensParams_[k]);
      sigma[j * np + col] = a;
      omega[j * np + col] = b / h;
    }
  }
}

// The history before t0: before(s, x0, p), its s-derivatives, and its parameter derivatives
// through x0 (S0) and p.
void DelayHistory::fillBefore(std::size_t j, double s, double* inputs, double* sigma,
                              double* omega) const {
  beforeTapes_[j].evaluate(s, x0_.data(), p_, before_.data());
  std::copy_n(before_.data(), 3, inputs + 3 * j);
  if (ns_ == 0) return;
  beforeSensTapes_[j].evaluate(s, x0_.data(), p_, before_.data());
  const auto nx = static_cast<std::size_t>(nx_), np = static_cast<std::size_t>(np_);
  for (std::size_t k = 0; k < static_cast<std::size_t>(ns_); ++k) {
    const auto col = static_cast<std::size_t>(sensParams_[k]);
    for (int pass = 0; pass < 2; ++pass) {
      const double* row = before_.data() + static_cast<std::size_t>(pass) * (nx + np);
      double v = row[nx + col];
      for (std::size_t i = 0; i < nx; ++i) v += row[i] * s0_[k * nx + i];
      (pass == 0 ? sigma : omega)[j * np + col] = v;
    }
  }
}

std::vector<double> DelayHistory::breakpoints(double t0, double tEnd) const {
  std::vector<double> taus;
  for (std::size_t j = 0; j < constantTauValue_.size(); ++j)
    if (constantTau_[j] && constantTauValue_[j] > 0 && std::isfinite(constantTauValue_[j]))
      taus.push_back(constantTauValue_[j]);
  std::sort(taus.begin(), taus.end());
  taus.erase(std::unique(taus.begin(), taus.end()), taus.end());
  std::vector<double> level{t0}, all;
  constexpr std::size_t kMaxBreakpoints = 10000;
  for (int order = 0; order < kBreakpointOrder && !level.empty(); ++order) {
    std::vector<double> next;
    for (double b : level)
      for (double tau : taus)
        if (b + tau <= tEnd) next.push_back(b + tau);
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (all.size() + next.size() > kMaxBreakpoints) break;
    all.insert(all.end(), next.begin(), next.end());
    level = std::move(next);
  }
  std::sort(all.begin(), all.end());
  // Breakpoints a rounding error apart are one.
  std::vector<double> out;
  for (double b : all)
    if (out.empty() || b - out.back() > 1e-12 * std::max(1.0, std::abs(b))) out.push_back(b);
  return out;
}

double DelayHistory::smallestConstantDelay() const {
  double m = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < constantTauValue_.size(); ++j)
    if (constantTau_[j] && constantTauValue_[j] > 0) m = std::min(m, constantTauValue_[j]);
  return m;
}

}  // namespace sensode::simulation
