// SPDX-License-Identifier: MIT
// Bounded least squares: Levenberg–Marquardt with an active set at every iteration, on the
// residuals and their exact Jacobian (dense; the problems have tens of parameters).
//
// Why not Ceres's bounded trust region (used here until 2026-11): with bounds set, Ceres
// projects each LM step onto the box and runs an Armijo line search along the projected path
// (internal/ceres/trust_region_minimizer.cc, DoLineSearch: "does not do anything illegal but is
// incorrect and not terribly effective", ceres-solver issue #187), then tests its parameter and
// function tolerances on that line-searched candidate, accepted or not. When the LM step pushes
// parameters out of the box, the line search shrinks the step towards its 1e-9 minimum and Ceres
// reports CONVERGENCE with a large projected gradient (Fujita: 20 of 20 starts "converged", best
// 4145.8; nominal ± 0.5 on log10 stopped at 1009.6 with projected gradient 174 after four
// active-set rounds, each still gaining 1000–4000). docs/estimation.md has the measurements.
//
// Here, each iteration:
//   free = parameters not on a bound with the gradient g = Jᵀr pushing outwards;
//   (J_FᵀJ_F + λ D_F) δ_F = −g_F, re-solved without the free parameters on a bound that δ
//   pushes outwards (held there; repeated until δ pushes none out: Bounds, below);
//   candidate P(x + δ) (clamped to the box), where D is
//   each parameter's largest diag(JᵀJ) so far (Moré's scaling) in a first phase, and the
//   current diag(JᵀJ) (Marquardt's) in a restart from its end point (the note at Scaling);
//   ratio = actual / predicted decrease of ½|r|², the prediction for the clamped step s:
//   −(gᵀs + ½|Js|²); accepted above 1e-4, λ updated as Nielsen's / Ceres's
//   (×max(1/3, 1 − (2ρ−1)³) on success, ×ν, ν doubling, on failure).
// It stops when the projected gradient |x − P(x − g)|∞ ≤ gtol; when an accepted step gains less
// than ftol·cost, or a step is shorter than xtol·|x|, while λ ≤ 1 (a nearly Gauss–Newton step:
// a step shortened by heavy damping after rejections says nothing about convergence); when λ
// exceeds 1e20 (no decrease even along the scaled steepest descent: objective noise of the
// integration, a rough region; reported as stalled, with the projected gradient);
// or after maxIterations accepted steps (per phase: a start has at most two). A trial point
// that fails to evaluate, or evaluates to non-finite values, is a rejected step. Every trial
// evaluation comes with its Jacobian (forward sensitivities), so an accepted step costs no
// re-evaluation.
// With LocalSettings::geodesicAcceleration (off by default), the trial point is the LM step
// corrected for the valley's curvature (geodesic_acceleration.h: one more evaluation of the
// residuals alone per trial), the ratio still against the velocity's predicted decrease.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include <Eigen/Dense>

#include "core/common/errors.h"
#include "core/estimation/geodesic_acceleration.h"
#include "core/estimation/local_optimizers.h"

namespace sensode::estimation::detail {

namespace {

constexpr double kMinRatio = 1e-4;           // smallest actual/predicted decrease accepted
constexpr double kInitialDamping = 1e-3;     // λ at the start, relative to diag(JᵀJ)
constexpr double kNearGaussNewton = 1.0;     // λ at or below which ftol and xtol may stop
constexpr double kMaxDamping = 1e20;         // no decrease along the steepest descent
constexpr double kDiagonalFloor = 1e-12;     // diag(JᵀJ) floor, relative to its largest entry
// Damping scale D. A start runs in two phases, each a full LM run with its own iteration budget:
//   1. Moré's scaling: D = each parameter's running maximum of diag(JᵀJ) (Moré 1978, "The
//      Levenberg–Marquardt algorithm: implementation and theory"; MINPACK lmder; the choice
//      Transtrum & Sethna 2012 recommend for sloppy models). With the current diag(JᵀJ), a
//      parameter's damping shrinks with its column of J, which in these models collapses over
//      decades of the parameter (saturations, plateaus), and starts crawl: on Zheng_PNAS2012 (46
//      parameters) 7 of 20 seeded starts stopped at the 500-iteration limit and the best reached
//      −250.76; one of them, continued to 3000 iterations, reached −287.98 in 202 s. With the
//      running maximum no start hits the limit, that start stops at −285.8 after 250 iterations,
//      and the best of the 20 is −291.64 (published fit −278.33).
//   2. Unless phase 1 ended on the gradient tolerance (or failed, or was cancelled): a restart
//      from its end point with Marquardt's current diag(JᵀJ) and λ reset. The running maximum
//      remembers columns from far away (the start, where J is large), and damps those
//      parameters too much near an optimum: on Boehm_JProteomeRes2014, 7 of 20 starts with
//      phase 1 alone stopped at the iteration limit and the best was 147.54, not 138.22.
// Measurements of both phases: docs/benchmarks/estimation.md (2026-11-26, second section).
enum class Scaling { More, Marquardt };
// Bounds. A parameter on a bound is free when the gradient points inwards, but the coupled step
// δ_F can still push it outwards. Clamping it then leaves the other components solved for a
// step that is not taken, and the clamped step can go uphill even in the linear model
// (predicted decrease ≤ 0): until 2026-11-26 such a step was rejected and λ raised until the
// step was nearly a scaled gradient step. On Crauste_CellSystems2017 (mu_LE, mu_P, mu_PE on
// their lower bounds) 362 of 1028 trials from the best start's point were rejected so, and 600
// iterations gained 3.3e-5; re-solving for the others with those held, LM from the same point
// reached 190.963977 (the nominal's objective at that accuracy) in 46 iterations
// (docs/benchmarks/estimation.md, sixth run).

std::string described(const char* what, double value) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %.3g", what, value);
  return buf;
}

struct Phase {
  LocalResult result;
  bool gradientConverged = false;  // ended on the projected-gradient tolerance
};

Phase levenbergMarquardt(ResidualFunction& f, const std::vector<double>& x0,
                         const LocalSettings& settings, Scaling scaling) {
  Phase phase;
  LocalResult& out = phase.result;
  const int n = f.size();
  const std::vector<double>& lo = f.lower();
  const std::vector<double>& hi = f.upper();
  const auto k = [](int i) { return static_cast<std::size_t>(i); };
  Eigen::VectorXd x(n);
  for (int i = 0; i < n; ++i) x(i) = std::clamp(x0[k(i)], lo[k(i)], hi[k(i)]);
  out.x.assign(x.data(), x.data() + n);
  ResidualFunction::Values here;
  try {
    here = f.evaluate(x.data(), true);
  } catch (const Cancelled&) {
    out.status = StartStatus::Cancelled;
    out.message = "cancelled";
    return phase;
  } catch (const Error& e) {
    out.message = std::string("the objective cannot be evaluated at the start: ") + e.what();
    out.startNotEvaluable = true;
    return phase;
  }
  // The multistart checked only the objective here. A NaN in the Jacobian gives NaN steps,
  // which leave x unchanged and would end the start as a false convergence.
  if (!here.values.allFinite() || !here.jacobian.allFinite()) {
    out.message = "the residuals or their Jacobian are not finite at the start";
    out.startNotEvaluable = true;
    return phase;
  }
  out.startObjective = out.objective = here.objective;
  double cost = 0.5 * here.values.squaredNorm();
  double lambda = kInitialDamping, nu = 2;
  Eigen::VectorXd scale = Eigen::VectorXd::Zero(n);  // D: running max of diag(JᵀJ) (floored)
  long failures = 0;
  std::string lastFailure;
  Acceleration acceleration;
  int iteration = 0;
  bool done = false;
  while (!done) {
    const Eigen::MatrixXd& J = here.jacobian;
    const Eigen::VectorXd g = J.transpose() * here.values;
    std::vector<int> free;
    double projected = 0;  // |x − P(x − g)|∞
    for (int i = 0; i < n; ++i) {
      projected = std::max(projected, std::abs(x(i) - std::clamp(x(i) - g(i), lo[k(i)], hi[k(i)])));
      if (!((x(i) <= lo[k(i)] && g(i) > 0) || (x(i) >= hi[k(i)] && g(i) < 0))) free.push_back(i);
    }
    const std::string pg = described("projected gradient", projected);
    if (projected <= settings.gradientTolerance) {
      out.status = StartStatus::Converged;
      out.message = pg + " <= gtol";
      phase.gradientConverged = true;
      break;
    }
    if (iteration >= settings.maxIterations) {
      out.status = StartStatus::MaxIterations;
      out.message = "maximum number of iterations reached (" + pg + ")";
      break;
    }
    // free is not empty: projected > gtol > 0, and a parameter held on its bound adds 0 to it.
    const auto m = static_cast<Eigen::Index>(free.size());
    const auto freeAt = [&](Eigen::Index c) { return free[static_cast<std::size_t>(c)]; };
    Eigen::MatrixXd Jf(J.rows(), m);
    Eigen::VectorXd gf(m);
    for (Eigen::Index c = 0; c < m; ++c) {
      Jf.col(c) = J.col(freeAt(c));
      gf(c) = g(freeAt(c));
    }
    const Eigen::MatrixXd A = Jf.transpose() * Jf;
    Eigen::VectorXd d = A.diagonal();
    const double floor =
        kDiagonalFloor * std::max(d.maxCoeff(), std::numeric_limits<double>::min());
    d = d.cwiseMax(floor);
    for (Eigen::Index c = 0; scaling == Scaling::More && c < m; ++c) {
      double& dc = scale(freeAt(c));
      dc = std::max(dc, d(c));
      d(c) = dc;
    }
    // Raise λ until a step is accepted or a stopping rule applies.
    for (;;) {
      Eigen::MatrixXd M = A;
      M.diagonal() += lambda * d;
      // The step of the free parameters, with those on a bound that it pushes outwards held
      // there and the system re-solved for the rest (the note at "Bounds" above).
      std::vector<Eigen::Index> kept(static_cast<std::size_t>(m));
      for (Eigen::Index c = 0; c < m; ++c) kept[static_cast<std::size_t>(c)] = c;
      Eigen::LDLT<Eigen::MatrixXd> factor(M);
      Eigen::VectorXd sub = factor.solve(-gf);
      for (;;) {
        std::vector<Eigen::Index> next;
        for (std::size_t a = 0; a < kept.size(); ++a) {
          const int i = freeAt(kept[a]);
          const double v = sub(static_cast<Eigen::Index>(a));
          if (!((x(i) <= lo[k(i)] && v < 0) || (x(i) >= hi[k(i)] && v > 0))) next.push_back(kept[a]);
        }
        if (next.size() == kept.size()) break;
        kept = std::move(next);
        if (kept.empty()) break;  // a zero step: rejected, λ rises towards the scaled gradient
        factor.compute(M(kept, kept));
        sub = factor.solve(-gf(kept));
      }
      Eigen::VectorXd delta = Eigen::VectorXd::Zero(m);
      for (std::size_t a = 0; a < kept.size(); ++a) delta(kept[a]) = sub(static_cast<Eigen::Index>(a));
      Eigen::VectorXd trialX = x;
      for (Eigen::Index c = 0; c < m; ++c) {
        const int i = freeAt(c);
        if (std::isfinite(delta(c))) trialX(i) = std::clamp(x(i) + delta(c), lo[k(i)], hi[k(i)]);
      }
      const Eigen::VectorXd step = trialX - x;  // the LM step (velocity), clamped
      if (lambda <= kNearGaussNewton &&
          step.norm() <= settings.parameterTolerance * (x.norm() + settings.parameterTolerance)) {
        out.status = StartStatus::Converged;
        out.message = "relative step below the parameter tolerance (" + pg + ")";
        done = true;
        break;
      }
      // The decrease the linear model predicts for the velocity (with acceleration too, as
      // GSL's lmaccel: the acceleration corrects the velocity for the curvature the model lacks).
      const double predicted = -(g.dot(step) + 0.5 * (J * step).squaredNorm());
      if (settings.geodesicAcceleration) {
        try {
          std::vector<int> moving;  // the parameters the step moves (free and not held)
          for (const Eigen::Index c : kept) moving.push_back(freeAt(c));
          accelerate(f, x, step, here, J, Jf(Eigen::all, kept), factor, d(kept), moving, lo, hi,
                     trialX, acceleration);
        } catch (const Cancelled&) {
          out.status = StartStatus::Cancelled;
          out.message = "cancelled";
          done = true;
          break;
        }
      }
      ResidualFunction::Values trial;
      bool ok = false;
      try {
        trial = f.evaluate(trialX.data(), true);
        ok = std::isfinite(trial.objective) && trial.values.allFinite() &&
             trial.jacobian.allFinite();
      } catch (const Cancelled&) {
        out.status = StartStatus::Cancelled;
        out.message = "cancelled";
        done = true;
        break;
      } catch (const Error& e) {
        ++failures;
        lastFailure = e.what();
      }
      const double trialCost = ok ? 0.5 * trial.values.squaredNorm()
                                  : std::numeric_limits<double>::infinity();
      const double actual = cost - trialCost;
      const double ratio = predicted > 0 ? actual / predicted : -1;
      if (ratio > kMinRatio) {
        const bool nearGaussNewton = lambda <= kNearGaussNewton;
        x = trialX;
        here = std::move(trial);
        cost = trialCost;
        if (here.objective < out.objective) {
          out.objective = here.objective;
          out.x.assign(x.data(), x.data() + n);
        }
        lambda *= std::max(1.0 / 3.0, 1.0 - std::pow(2 * ratio - 1, 3));
        nu = 2;
        ++iteration;
        if (nearGaussNewton && actual <= settings.functionTolerance * cost) {
          out.status = StartStatus::Converged;
          out.message = "relative objective change below the function tolerance (" + pg + ")";
          done = true;
        }
        break;
      }
      lambda *= nu;
      nu *= 2;
      if (lambda > kMaxDamping) {
        out.status = StartStatus::Stalled;
        out.message = "no decrease along the steepest descent (" + pg + ")";
        done = true;
        break;
      }
    }
  }
  out.iterations = iteration;
  if (settings.geodesicAcceleration) out.message += acceleration.summary();
  if (failures > 0)
    out.message += " (" + std::to_string(failures) +
                   " trial points failed to evaluate, the last: " + lastFailure + ")";
  return phase;
}

// FitObjective as a ResidualFunction.
class FitResiduals final : public ResidualFunction {
 public:
  explicit FitResiduals(FitObjective& f) : f_(f) {}
  int size() const override { return f_.size(); }
  const std::vector<double>& lower() const override { return f_.setup().lower; }
  const std::vector<double>& upper() const override { return f_.setup().upper; }
  Values evaluate(const double* x, bool jacobian) override {
    FitObjective::Residuals r = f_.residuals(x, jacobian);
    return {r.objective, std::move(r.values), std::move(r.jacobian)};
  }

 private:
  FitObjective& f_;
};

}  // namespace

LocalResult minimizeLeastSquares(FitObjective& f, const std::vector<double>& x0,
                                 const LocalSettings& settings) {
  FitResiduals residuals(f);
  return minimizeLeastSquares(residuals, x0, settings);
}

LocalResult minimizeLeastSquares(ResidualFunction& f, const std::vector<double>& x0,
                                 const LocalSettings& settings) {
  Phase first = levenbergMarquardt(f, x0, settings, Scaling::More);
  const StartStatus s = first.result.status;
  if (first.gradientConverged || s == StartStatus::Failed || s == StartStatus::Cancelled)
    return first.result;
  Phase second = levenbergMarquardt(f, first.result.x, settings, Scaling::Marquardt);
  if (second.result.status == StartStatus::Failed) return first.result;  // cannot happen: x evaluated
  LocalResult& out = second.result;
  out.startObjective = first.result.startObjective;
  out.iterations += first.result.iterations;
  out.message += " (restarted with Marquardt's scaling after " + first.result.message + ")";
  return out;
}

}  // namespace sensode::estimation::detail
