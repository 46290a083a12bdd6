// SPDX-License-Identifier: MIT
// Bounded least squares with Ceres Solver: Levenberg–Marquardt (trust region, steps projected
// onto the bounds) with a dense QR of the exact residual Jacobian.
#include <algorithm>
#include <deque>

#include <ceres/ceres.h>

#include "core/common/errors.h"
#include "core/estimation/local_optimizers.h"

namespace sensode::estimation::detail {

namespace {

constexpr int kActiveSetRounds = 4;

// Ceres asks for residuals at a trial point and, once the step is accepted, for residuals and
// Jacobian at the same point again. Forward sensitivities give both at once, so every
// evaluation keeps its Jacobian and a repeated point is answered from here.
class ResidualCost final : public ceres::CostFunction {
 public:
  ResidualCost(FitObjective& f, const FitObjective::Residuals& first, const std::vector<double>& x0)
      : f_(f) {
    set_num_residuals(static_cast<int>(first.values.size()));
    mutable_parameter_block_sizes()->push_back(f.size());
    remember(x0.data(), first);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* x = parameters[0];
    const Entry* e = find(x);
    if (!e) {
      try {
        e = &remember(x, f_.residuals(x));
      } catch (const Cancelled&) {
        cancelled_ = true;
        return false;
      } catch (const Error& error) {
        lastFailure_ = error.what();
        ++failures_;
        return false;
      }
    }
    std::copy(e->residuals.values.data(), e->residuals.values.data() + num_residuals(), residuals);
    if (jacobians && jacobians[0]) {
      // Ceres wants the Jacobian row-major.
      const Eigen::MatrixXd& j = e->residuals.jacobian;
      for (Eigen::Index r = 0; r < j.rows(); ++r)
        for (Eigen::Index c = 0; c < j.cols(); ++c) jacobians[0][r * j.cols() + c] = j(r, c);
    }
    return true;
  }

  bool cancelled() const { return cancelled_; }
  long failures() const { return failures_; }
  const std::string& lastFailure() const { return lastFailure_; }
  // The best point evaluated (lowest PEtab objective) and the gradient Jᵀr of the cost there.
  const std::vector<double>& bestX() const { return bestX_; }
  double bestObjective() const { return bestObjective_; }
  const Eigen::VectorXd& bestGradient() const { return bestGradient_; }

 private:
  struct Entry {
    std::vector<double> x;
    FitObjective::Residuals residuals;
  };
  const Entry* find(const double* x) const {
    for (const Entry& e : cache_)
      if (std::equal(e.x.begin(), e.x.end(), x)) return &e;
    return nullptr;
  }
  const Entry& remember(const double* x, FitObjective::Residuals r) const {
    if (cache_.size() == 4) cache_.pop_front();
    std::vector<double> xs(x, x + f_.size());
    if (r.objective < bestObjective_) {
      bestObjective_ = r.objective;
      bestX_ = xs;
      bestGradient_ = r.jacobian.transpose() * r.values;
    }
    r.evaluation = {};  // the Jacobian is all the optimiser needs
    cache_.push_back({std::move(xs), std::move(r)});
    return cache_.back();
  }

  FitObjective& f_;
  mutable std::deque<Entry> cache_;
  mutable bool cancelled_ = false;
  mutable long failures_ = 0;
  mutable std::string lastFailure_;
  mutable std::vector<double> bestX_;
  mutable double bestObjective_ = std::numeric_limits<double>::infinity();
  mutable Eigen::VectorXd bestGradient_;
};

class StopWhenCancelled final : public ceres::IterationCallback {
 public:
  explicit StopWhenCancelled(const ResidualCost& cost) : cost_(cost) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
    return cost_.cancelled() ? ceres::SOLVER_ABORT : ceres::SOLVER_CONTINUE;
  }

 private:
  const ResidualCost& cost_;
};

}  // namespace

LocalResult minimizeLeastSquares(FitObjective& f, const std::vector<double>& x0,
                                 const LocalSettings& settings) {
  LocalResult out;
  out.x = x0;
  FitObjective::Residuals first;
  try {
    first = f.residuals(x0.data());
  } catch (const Cancelled&) {
    out.status = StartStatus::Cancelled;
    out.message = "cancelled";
    return out;
  } catch (const Error& e) {
    out.message = std::string("the objective cannot be evaluated at the start: ") + e.what();
    return out;
  }
  out.startObjective = first.objective;
  ResidualCost cost(f, first, x0);
  StopWhenCancelled stop(cost);
  std::vector<double> x = x0;
  ceres::Problem::Options po;
  po.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  ceres::Problem problem(po);
  problem.AddResidualBlock(&cost, nullptr, x.data());
  for (int i = 0; i < f.size(); ++i) {
    problem.SetParameterLowerBound(x.data(), i, f.setup().lower[static_cast<std::size_t>(i)]);
    problem.SetParameterUpperBound(x.data(), i, f.setup().upper[static_cast<std::size_t>(i)]);
  }
  ceres::Solver::Options options;
  options.minimizer_type = ceres::TRUST_REGION;
  options.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  options.linear_solver_type = ceres::DENSE_QR;
  options.function_tolerance = settings.functionTolerance;
  options.parameter_tolerance = settings.parameterTolerance;
  options.gradient_tolerance = settings.gradientTolerance;
  // Failed integrations are rejected steps; a few in a row are normal far from the optimum.
  options.max_num_consecutive_invalid_steps = 20;
  options.num_threads = 1;  // the multistart runs starts in parallel instead
  options.logging_type = ceres::SILENT;
  options.callbacks.push_back(&stop);
  ceres::Solver::Summary summary;
  // Active-set rounds. Ceres projects each Levenberg–Marquardt step onto the bounds, so a
  // parameter that the gradient pushes against its bound distorts every step of the others and
  // the solver creeps (Boehm: stopped by the function tolerance 4 above the optimum, with two
  // parameters on their bounds). After each solve, the parameters on a bound with the gradient
  // pushing outwards are held there (SubsetManifold) and the others solved again, until that
  // set no longer changes.
  std::vector<int> held;
  int iterations = 0;
  for (int round = 0; round < kActiveSetRounds; ++round) {
    options.max_num_iterations = std::max(1, settings.maxIterations - iterations);
    ceres::Solve(options, &problem, &summary);
    iterations += static_cast<int>(summary.iterations.size());
    if (cost.cancelled() || cost.bestX().empty() || iterations >= settings.maxIterations) break;
    std::vector<int> active;
    const Eigen::VectorXd& g = cost.bestGradient();
    for (int i = 0; i < f.size(); ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double xi = cost.bestX()[k], lo = f.setup().lower[k], hi = f.setup().upper[k];
      const double edge = 1e-12 * (hi - lo);
      if ((xi <= lo + edge && g(i) > 0) || (xi >= hi - edge && g(i) < 0)) active.push_back(i);
    }
    if (active == held || static_cast<int>(active.size()) == f.size()) break;
    held = active;
    x = cost.bestX();
    if (held.empty()) problem.SetManifold(x.data(), nullptr);
    else problem.SetManifold(x.data(), new ceres::SubsetManifold(f.size(), held));
  }
  out.iterations = iterations;
  out.x = cost.bestX();
  out.objective = cost.bestObjective();
  out.message = summary.message;
  if (cost.failures() > 0)
    out.message += " (" + std::to_string(cost.failures()) +
                   " trial points failed to evaluate, the last: " + cost.lastFailure() + ")";
  if (cost.cancelled()) {
    out.status = StartStatus::Cancelled;
  } else if (summary.termination_type == ceres::CONVERGENCE) {
    out.status = StartStatus::Converged;
  } else if (summary.termination_type == ceres::NO_CONVERGENCE) {
    out.status = StartStatus::MaxIterations;
  } else {
    out.status = StartStatus::Failed;
  }
  return out;
}

}  // namespace sensode::estimation::detail
