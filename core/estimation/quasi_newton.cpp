// SPDX-License-Identifier: MIT
// Bounded quasi-Newton with NLopt's L-BFGS (NLOPT_LD_LBFGS: Lukšan's limited-memory BFGS with
// the bounds handled by projection, https://nlopt.readthedocs.io/en/latest/NLopt_Algorithms/).
// NLopt has no gradient tolerance; the objective callback stops it (nlopt_force_stop) when the
// projected gradient's max-norm falls below LocalSettings::gradientTolerance.
#include <algorithm>
#include <cmath>

#include <nlopt.h>

#include "core/common/errors.h"
#include "core/estimation/local_optimizers.h"

namespace sensode::estimation::detail {

namespace {

struct Context {
  FitObjective* f = nullptr;
  nlopt_opt opt = nullptr;
  double gradientTolerance = 0;
  int evaluations = 0;
  bool cancelled = false, gradientConverged = false;
  long failures = 0;
  std::string lastFailure;
  std::vector<double> bestX;
  double best = std::numeric_limits<double>::infinity();
};

// max_i |x_i − clamp(x_i − g_i)|: zero at a bounded stationary point.
double projectedGradientNorm(const double* x, const double* g, const FitSetup& s, unsigned n) {
  double m = 0;
  for (unsigned i = 0; i < n; ++i) {
    const double moved = std::clamp(x[i] - g[i], s.lower[i], s.upper[i]);
    m = std::max(m, std::abs(x[i] - moved));
  }
  return m;
}

// C callback: never throws (NLopt is C).
double objective(unsigned n, const double* x, double* gradient, void* data) {
  auto& c = *static_cast<Context*>(data);
  ++c.evaluations;
  try {
    const double v = c.f->value(x, gradient);
    if (v < c.best) {
      c.best = v;
      c.bestX.assign(x, x + n);
    }
    if (gradient && projectedGradientNorm(x, gradient, c.f->setup(), n) < c.gradientTolerance) {
      c.gradientConverged = true;
      nlopt_force_stop(c.opt);
    }
    return v;
  } catch (const Cancelled&) {
    c.cancelled = true;
    nlopt_force_stop(c.opt);
  } catch (const Error& e) {
    // An infinite objective makes the line search step back.
    ++c.failures;
    c.lastFailure = e.what();
  }
  if (gradient) std::fill(gradient, gradient + n, 0.0);
  return HUGE_VAL;
}

const char* describe(nlopt_result r) {
  switch (r) {
    case NLOPT_SUCCESS: return "success";
    case NLOPT_STOPVAL_REACHED: return "objective below the stop value";
    case NLOPT_FTOL_REACHED: return "relative objective change below the function tolerance";
    case NLOPT_XTOL_REACHED: return "relative step below the parameter tolerance";
    case NLOPT_MAXEVAL_REACHED: return "maximum number of evaluations reached";
    case NLOPT_MAXTIME_REACHED: return "maximum time reached";
    case NLOPT_FAILURE: return "L-BFGS failed (line search found no decrease)";
    case NLOPT_INVALID_ARGS: return "invalid arguments";
    case NLOPT_OUT_OF_MEMORY: return "out of memory";
    case NLOPT_ROUNDOFF_LIMITED: return "no further progress possible in floating point";
    case NLOPT_FORCED_STOP: return "stopped";
    default: return "unknown NLopt status";
  }
}

}  // namespace

LocalResult minimizeQuasiNewton(FitObjective& f, const std::vector<double>& x0,
                                const LocalSettings& settings) {
  LocalResult out;
  out.x = x0;
  const auto n = static_cast<unsigned>(f.size());
  Context c;
  c.f = &f;
  c.gradientTolerance = settings.gradientTolerance;
  std::unique_ptr<nlopt_opt_s, void (*)(nlopt_opt)> opt(nlopt_create(NLOPT_LD_LBFGS, n),
                                                        nlopt_destroy);
  if (!opt) {
    out.message = "NLopt could not create its L-BFGS optimiser";
    return out;
  }
  c.opt = opt.get();
  nlopt_set_lower_bounds(opt.get(), f.setup().lower.data());
  nlopt_set_upper_bounds(opt.get(), f.setup().upper.data());
  nlopt_set_min_objective(opt.get(), objective, &c);
  nlopt_set_ftol_rel(opt.get(), settings.functionTolerance);
  nlopt_set_xtol_rel(opt.get(), settings.parameterTolerance);
  // Every L-BFGS evaluation computes the gradient; its iterations are about its evaluations.
  nlopt_set_maxeval(opt.get(), settings.maxIterations);
  std::vector<double> x = x0;
  double value = HUGE_VAL;
  // The start's objective, separately so that a start that cannot be evaluated says so.
  try {
    out.startObjective = f.value(x0.data(), nullptr);
  } catch (const Cancelled&) {
    out.status = StartStatus::Cancelled;
    out.message = "cancelled";
    return out;
  } catch (const Error& e) {
    out.message = std::string("the objective cannot be evaluated at the start: ") + e.what();
    return out;
  }
  const nlopt_result r = nlopt_optimize(opt.get(), x.data(), &value);
  out.iterations = c.evaluations;
  out.x = c.bestX.empty() ? x0 : c.bestX;
  out.objective = c.bestX.empty() ? out.startObjective : c.best;
  out.message = c.gradientConverged ? "projected gradient below the gradient tolerance"
                                    : describe(r);
  if (c.failures > 0)
    out.message += " (" + std::to_string(c.failures) +
                   " points failed to evaluate, the last: " + c.lastFailure + ")";
  if (c.cancelled) {
    out.status = StartStatus::Cancelled;
  } else if (c.gradientConverged || r == NLOPT_SUCCESS || r == NLOPT_FTOL_REACHED ||
             r == NLOPT_XTOL_REACHED || r == NLOPT_STOPVAL_REACHED ||
             r == NLOPT_ROUNDOFF_LIMITED) {
    out.status = StartStatus::Converged;
  } else if (r == NLOPT_MAXEVAL_REACHED || r == NLOPT_MAXTIME_REACHED) {
    out.status = StartStatus::MaxIterations;
  } else {
    out.status = StartStatus::Failed;
  }
  return out;
}

}  // namespace sensode::estimation::detail
