// SPDX-License-Identifier: MIT
#include "core/tasks/sensitivities_task.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <unordered_set>

#include "core/common/errors.h"
#include "core/sensitivity/structural_influence.h"
#include "core/tasks/sensitivity_runs.h"
#include "core/tasks/task_common.h"
#include "core/tasks/undefined_outputs.h"

namespace sensode::tasks {

const char* toString(SensitivityMethod m) {
  switch (m) {
    case SensitivityMethod::OdeSd: return "odesd";
    case SensitivityMethod::Cvodes: return "cvodes";
    case SensitivityMethod::Pbsr: return "pbsr";
    case SensitivityMethod::Exp: return "exp";
    case SensitivityMethod::FiniteDifferences: return "fd";
  }
  return "unknown";
}

std::optional<SensitivityMethod> sensitivityMethodFromString(const std::string& s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const SensitivityMethod m :
       {SensitivityMethod::OdeSd, SensitivityMethod::Cvodes, SensitivityMethod::Pbsr,
        SensitivityMethod::Exp, SensitivityMethod::FiniteDifferences}) {
    if (lower == toString(m)) return m;
  }
  return std::nullopt;
}

namespace {

using detail::exactNumber;
using detail::InvalidInput;
using detail::OutputColumn;
using detail::runDirect;
using detail::runFiniteDifferences;
using detail::runPeanoBaker;
using detail::runWithFallbacks;
using detail::Setup;

std::string violation(const char* field, const std::string& value, const char* constraint) {
  return std::string("SensitivityOptions::") + field + " = " + value +
         ". Violated constraint: " + constraint;
}

// Indices into the model's parameter vector for `ids` (empty = all), InvalidInput on unknown or
// repeated ids.
std::vector<int> selectParameters(const symbolic::CompiledModel& model,
                                  const std::vector<std::string>& ids) {
  const symbolic::OdeSystem& sys = model.system();
  std::vector<int> indices;
  if (ids.empty()) {
    for (int k = 0; k < model.np(); ++k) indices.push_back(k);
    return indices;
  }
  std::unordered_set<int> seen;
  for (const std::string& id : ids) {
    const int k = sys.findParam(id);
    if (k < 0) {
      throw InvalidInput(
          "unknown parameter id '" + id + "' (known: " +
          detail::firstIds(sys.params, [](const symbolic::ParamVar& v) { return v.id; }) + ")");
    }
    if (!seen.insert(k).second) throw InvalidInput("parameter id '" + id + "' given twice");
    indices.push_back(k);
  }
  return indices;
}

// S0 = ∂x0/∂p for the selected parameters, dense column-major nx × ns.
std::vector<double> initialSensitivities(const symbolic::CompiledModel& model, double t0,
                                         const std::vector<double>& p,
                                         const std::vector<int>& params) {
  const symbolic::SparsePattern& pattern = model.initialSensitivityPattern();
  std::vector<double> sparse(static_cast<std::size_t>(pattern.nnz()));
  model.initialSensitivity(t0, p.data(), sparse.data());
  const auto nx = static_cast<std::size_t>(model.nx());
  std::vector<double> s0(nx * params.size(), 0.0);
  for (std::size_t j = 0; j < params.size(); ++j) {
    const auto col = static_cast<std::size_t>(params[j]);
    for (int k = pattern.colPtr[col]; k < pattern.colPtr[col + 1]; ++k) {
      const double v = sparse[static_cast<std::size_t>(k)];
      const int row = pattern.rowIdx[static_cast<std::size_t>(k)];
      if (!std::isfinite(v)) {
        throw InvalidInput("non-finite initial sensitivity d '" +
                           model.system().states[static_cast<std::size_t>(row)].id + "' / d '" +
                           model.system().params[col].id + "': " + exactNumber(v));
      }
      s0[j * nx + static_cast<std::size_t>(row)] = v;
    }
  }
  return s0;
}

// Lists the outputs with no value at some output times (undefined_outputs.h) and makes their
// sensitivities NaN there: the chain rule at a 0/0 gives whatever ∂y/∂x's own 0/0 gives, and
// finite differences of NaN are NaN, but no method should report a number there.
void markUndefinedOutputs(const symbolic::CompiledModel& model, const Setup& setup,
                          SensitivityResult& result) {
  detail::UndefinedOutputLog log(model);
  std::vector<std::uint8_t> undefined;
  log.noteAll(setup.columns, result.times, result.states, setup.p, result.outputValues,
              &undefined);
  const std::size_t ns = result.parameterIds.size();
  for (std::size_t a = 0; a < undefined.size(); ++a) {
    if (undefined[a] != 0)
      std::fill_n(result.values.begin() + static_cast<std::ptrdiff_t>(a * ns), ns,
                  std::numeric_limits<double>::quiet_NaN());
  }
  result.undefinedOutputs = log.take();
}

// values ← (p/y)·values, 0 and flagged where |y| ≤ guard; NaN where y has no value.
void scale(SensitivityResult& result, const std::vector<double>& p, const std::vector<int>& params,
           double guard) {
  const std::size_t ny = result.outputIds.size();
  const std::size_t ns = result.parameterIds.size();
  const std::size_t nt = result.times.size();
  result.scaled = true;
  result.guarded.assign(nt * ny, 0);
  result.guardedCount = 0;
  for (std::size_t it = 0; it < nt; ++it) {
    for (std::size_t iy = 0; iy < ny; ++iy) {
      const std::size_t a = it * ny + iy;
      const double y = result.outputValues[a];
      double* v = &result.values[a * ns];
      if (std::isnan(y)) {
        std::fill(v, v + ns, std::numeric_limits<double>::quiet_NaN());
        continue;
      }
      if (!(std::abs(y) > guard)) {
        result.guarded[a] = 1;
        ++result.guardedCount;
        std::fill(v, v + ns, 0.0);
        continue;
      }
      for (std::size_t j = 0; j < ns; ++j) {
        v[j] *= p[static_cast<std::size_t>(params[j])] / y;
      }
    }
  }
}

}  // namespace

std::optional<std::string> SensitivityOptions::validate() const {
  if (auto why = integrator.validate()) return why;
  if (auto why = peanoBaker.validate()) return why;
  if (!(fdRelativeStep > 0) || !(fdRelativeStep < 0.5)) {
    return violation("fdRelativeStep", exactNumber(fdRelativeStep), "0 < fdRelativeStep < 0.5");
  }
  if (!(fdRtol > 0) || !(fdRtol < 1)) {
    return violation("fdRtol", exactNumber(fdRtol), "0 < fdRtol < 1");
  }
  if (!(fdAtol > 0) || !std::isfinite(fdAtol)) {
    return violation("fdAtol", exactNumber(fdAtol), "0 < fdAtol < inf");
  }
  return std::nullopt;
}

namespace {

// SensitivityResult::unreached from the model's expressions (structural_influence.h).
void markUnreached(const symbolic::CompiledModel& model, const Setup& setup,
                   SensitivityResult& result) {
  std::vector<std::size_t> rows;
  for (const OutputColumn& c : setup.columns) rows.push_back(c.row(model.system().outputs.size()));
  const auto reached = sensitivity::structuralInfluence(model.system(), setup.params, rows);
  if (!reached) return;
  const std::size_t nx = static_cast<std::size_t>(model.nx()), ny = rows.size();
  result.unreached.assign(ny * setup.params.size(), 0);
  for (std::size_t ip = 0; ip < setup.params.size(); ++ip)
    for (std::size_t iy = 0; iy < ny; ++iy)
      result.unreached[iy * setup.params.size() + ip] = (*reached)[ip][nx + iy] ? 0 : 1;
}

SensitivityResult runOnModel(const SensitivityProblem& problem, const SensitivityOptions& options,
                             const ProgressMonitor& monitor) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SensitivityResult result;
  Setup setup;

  auto finish = [&](Termination termination, std::string message, std::string details = {}) {
    result.termination = termination;
    result.message = std::move(message);
    result.details = std::move(details);
    result.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    // Moved, not copied: finish ends the run, and copying a large result cost as much as a fast
    // method's own work (Exp on the 52-species suite models).
    return std::move(result);
  };

  try {
    if (!problem.model) throw InvalidInput("sensitivities: no model");
    if (auto why = options.validate()) throw InvalidOptions(*why);
    const symbolic::CompiledModel& model = *problem.model;
    // PBSR and Exp propagate S with the ODE's Jacobian; a differential-algebraic model (algebraic
    // rules, fast reactions) gets IDAS forward sensitivities instead (below).
    const bool dae = model.system().isDae();
    detail::checkOutputTimes(problem.t0, problem.times);

    setup.model = problem.model;
    setup.problem = &problem;
    setup.options = &options;
    setup.monitor = &monitor;
    setup.columns = detail::selectOutputColumns(model, problem.outputs, problem.forceAmount,
                                                problem.forceConcentration);
    setup.p = resolveParameters(model, problem.overrides);
    setup.params = selectParameters(model, problem.parameters);
    setup.t0 = problem.t0;
    setup.tEnd = problem.times.back();
    setup.x0 = detail::initialState(model, problem.t0, setup.p);
    setup.s0 = initialSensitivities(model, problem.t0, setup.p, setup.params);

    for (const OutputColumn& c : setup.columns) result.outputIds.push_back(c.id);
    for (const int k : setup.params) {
      result.parameterIds.push_back(model.system().params[static_cast<std::size_t>(k)].id);
      result.parameterValues.push_back(setup.p[static_cast<std::size_t>(k)]);
    }
    for (const symbolic::StateVar& v : model.system().states) result.stateIds.push_back(v.id);
    markUnreached(model, setup, result);

    switch (options.method) {
      case SensitivityMethod::OdeSd: runWithFallbacks(setup, result); break;
      case SensitivityMethod::Cvodes: runDirect(setup, integrators::Method::Cvodes, result); break;
      case SensitivityMethod::Pbsr:
      case SensitivityMethod::Exp:
        if (dae) {
          runDirect(setup, integrators::Method::Cvodes, result);
          result.stats.fallbacks.push_back(
              std::string(toString(options.method)) +
              " needs an ODE dx/dt = f(x); for this differential-algebraic model IDAS forward "
              "sensitivities were computed instead");
          break;
        }
        // The Peano–Baker series propagate dS/dt = J(t)·S: a delay adds S(t − τ) terms they
        // do not have. odeSD direct sensitivities carry them (symbolic/delays.h).
        if (const auto& delays = model.system().delays; !delays.empty()) {
          runWithFallbacks(setup, result);
          result.stats.fallbacks.insert(
              result.stats.fallbacks.begin(),
              std::string(toString(options.method)) + " has no delayed sensitivity terms for " +
                  symbolic::describeDelay(*model.system().pool, delays.front().node) +
                  " (element '" + delays.front().element +
                  "'); odeSD direct sensitivities ran instead");
          break;
        }
        runPeanoBaker(setup, options.method, result);
        break;
      case SensitivityMethod::FiniteDifferences: runFiniteDifferences(setup, result); break;
    }
    markUndefinedOutputs(model, setup, result);
    if (options.scaled) scale(result, setup.p, setup.params, options.integrator.atol);
  } catch (const IntegrationFailure& e) {
    return finish(Termination::IntegrationFailure, e.what(), e.details());
  } catch (const Cancelled& e) {
    return finish(Termination::UserAbort, e.what());
  } catch (const InvalidOptions& e) {
    return finish(Termination::InvalidInput, e.what());
  } catch (const InvalidInput& e) {
    return finish(Termination::InvalidInput, e.what());
  } catch (const std::exception& e) {
    return finish(Termination::IntegrationFailure, e.what());
  }
  return finish(Termination::Success, {});
}

}  // namespace

SensitivityResult runSensitivities(const SensitivityProblem& problem,
                                   const SensitivityOptions& options,
                                   const ProgressMonitor& monitor) {
  return detail::runWithFastReactionFallback(
      problem, [&](const SensitivityProblem& p) { return runOnModel(p, options, monitor); });
}

}  // namespace sensode::tasks
