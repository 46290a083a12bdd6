// SPDX-License-Identifier: MIT
// Issue 5: the ssASA paper's protocol (Lakrisenko et al. 2023) side by side in one run. For each
// PEtab problem (Blasi_CellSystems2016: post-equilibration; Zheng_PNAS2012: pre-equilibration),
// N parameter vectors are sampled uniformly within the bounds on the parameter scale (fixed
// seed); at each the gradient is computed by ssASA, the standard adjoint and forward
// sensitivities (wall time per gradient, median and mean), plus the objective alone (the cost
// of the forward simulation and steady states, for the breakdown of where the time goes). The
// gradients are compared (ssASA vs forward, adjoint vs forward) and, on the first K samples,
// against central finite differences. A sample where a method throws counts as a failure of that
// method and is left out of that method's comparisons.
//
// Relative deviation of a gradient g from a reference r (one number per sample):
//   max_i |g_i − r_i| / max(|r_i|, 1e-3 ‖r‖_∞)
// (the floor keeps components that are nearly zero from dominating); the tables give the maximum
// and the median over the samples.
//
//   bench_ss_gradient [--samples N] [--fd-samples K] [--seed S] [--only SUBSTRING] [--fd-step H]
// (progress and, per finite-difference sample, the worst component go to stderr).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"
#include "tests/bench/native_ready.h"

namespace {

namespace fs = std::filesystem;
namespace pt = sensode::petab;
using pt::GradientMethod;

struct Case {
  const char* name;
  const char* kind;
  double fdStep;  // central-difference step on the parameter scale (see tst_ss_gradient.cpp)
};

constexpr Case kCases[] = {
    {"Blasi_CellSystems2016", "post-equilibration", 1e-4},
    {"Zheng_PNAS2012", "pre-equilibration", 1e-5},
};

double relDev(const std::vector<double>& g, const std::vector<double>& r) {
  double norm = 0;
  for (double v : r) norm = std::max(norm, std::abs(v));
  const double floor = std::max(1e-3 * norm, 1e-300);
  double worst = 0;
  for (std::size_t i = 0; i < g.size() && i < r.size(); ++i)
    worst = std::max(worst, std::abs(g[i] - r[i]) / std::max(std::abs(r[i]), floor));
  if (g.size() != r.size()) worst = INFINITY;
  return worst;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double mean(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double maxOf(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  return *std::max_element(v.begin(), v.end());
}

struct Run {
  bool ok = false;
  double seconds = 0;
  std::vector<double> gradient;
  std::string error, notes;
};

Run run(const pt::Problem& p, const std::vector<double>& q, GradientMethod m,
        const pt::ObjectiveOptions& o) {
  Run r;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    pt::ObjectiveResult res = pt::evaluateObjective(p, q, m, o);
    r.ok = std::isfinite(res.objective);
    for (double g : res.gradient) r.ok = r.ok && std::isfinite(g);
    if (!r.ok) r.error = "non-finite objective or gradient";
    r.gradient = std::move(res.gradient);
    r.notes = std::move(res.notes);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 100, fdSamples = 10;
  unsigned seed = 20230501u;
  std::string only;
  double fdStepOverride = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--samples") samples = std::atoi(next());
    else if (a == "--fd-samples") fdSamples = std::atoi(next());
    else if (a == "--seed") seed = static_cast<unsigned>(std::strtoul(next(), nullptr, 10));
    else if (a == "--only") only = next();
    else if (a == "--fd-step") fdStepOverride = std::atof(next());
    else {
      std::fprintf(stderr,
                   "usage: bench_ss_gradient [--samples N] [--fd-samples K] [--seed S] "
                   "[--only SUBSTRING] [--fd-step H]\n");
      return 2;
    }
  }
  if (samples < 1) samples = 1;
  fdSamples = std::clamp(fdSamples, 0, samples);
  const fs::path petab = fs::path(SENSODE_SHARED_DIR) / "petab";

  std::printf("## Steady-state gradients: ssASA vs standard adjoint vs forward sensitivities\n\n");
  std::printf("%d parameter vectors per problem, uniform within the bounds on the parameter scale "
              "(mt19937 seed %u); finite differences on the first %d. Default objective options "
              "(CVODES rtol 1e-10, atol 1e-12). Times are wall seconds per gradient (one thread).\n\n",
              samples, seed, fdSamples);

  std::vector<std::string> summary;
  for (const Case& c : kCases) {
    if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
    pt::Problem p;
    try {
      p = pt::loadProblem(petab / c.name / (std::string(c.name) + ".yaml"));
    } catch (const std::exception& e) {
      std::printf("### %s\n\nload failed: %s\n\n", c.name, e.what());
      continue;
    }
    {
      std::ostringstream note;
      if (!sensode::bench::waitForNativeEvaluators(*p.model, c.name, 900, note))
        std::printf("%s\n", note.str().c_str());
    }
    const std::vector<int> est = pt::estimatedParameters(p);
    std::vector<double> lo, hi;
    for (int j : est) {
      const auto& par = p.parameters[static_cast<std::size_t>(j)];
      lo.push_back(pt::toScale(par.scale, par.lowerBound));
      hi.push_back(pt::toScale(par.scale, par.upperBound));
    }
    std::mt19937 rng(seed);
    std::vector<std::vector<double>> points(static_cast<std::size_t>(samples));
    for (auto& q : points)
      for (std::size_t k = 0; k < lo.size(); ++k)
        q.push_back(std::uniform_real_distribution<double>(lo[k], hi[k])(rng));

    pt::ObjectiveOptions opt;
    opt.fdStep = fdStepOverride > 0 ? fdStepOverride : c.fdStep;
    const GradientMethod methods[] = {GradientMethod::Ssasa, GradientMethod::Adjoint,
                                      GradientMethod::Forward, GradientMethod::None};
    const char* names[] = {"ssASA", "adjoint", "forward", "objective only"};
    std::vector<double> times[4];
    int failures[4] = {0, 0, 0, 0};
    std::map<std::string, int> errors[4];
    std::vector<double> devSF, devAF, devSA, fdS, fdA, fdF;
    std::vector<double> bestS, bestA, bestF;  // FD at the step (of 3) closest to each method
    std::vector<double> ratioAS, ratioFS;  // per-sample time ratios
    int fdFail = 0;
    std::string ssasaNotes, adjointNotes;
    std::fprintf(stderr, "%s: %zu estimated parameters, %d samples\n", c.name, est.size(), samples);
    for (int s = 0; s < samples; ++s) {
      const auto& q = points[static_cast<std::size_t>(s)];
      Run r[4];
      for (int m = 0; m < 4; ++m) {
        r[m] = run(p, q, methods[m], opt);
        if (r[m].ok) {
          times[m].push_back(r[m].seconds);
        } else {
          ++failures[m];
          ++errors[m][r[m].error.substr(0, 160)];
        }
      }
      if (r[0].ok && ssasaNotes.empty()) ssasaNotes = r[0].notes;
      if (r[1].ok && adjointNotes.empty()) adjointNotes = r[1].notes;
      if (r[0].ok && r[2].ok) devSF.push_back(relDev(r[0].gradient, r[2].gradient));
      if (r[1].ok && r[2].ok) {
        devAF.push_back(relDev(r[1].gradient, r[2].gradient));
        if (devAF.back() > 1e-6)
          std::fprintf(stderr, "  sample %d: adjoint vs forward rel. dev. %.3g (%s)\n", s,
                       devAF.back(), r[1].notes.c_str());
      }
      if (r[0].ok && r[1].ok) {
        devSA.push_back(relDev(r[0].gradient, r[1].gradient));
        ratioAS.push_back(r[1].seconds / r[0].seconds);
      }
      if (r[0].ok && r[2].ok) ratioFS.push_back(r[2].seconds / r[0].seconds);
      if (s < fdSamples) {
        const Run d = run(p, q, GradientMethod::FiniteDifferences, opt);
        // FD at 10×, 1×, 0.1× the step: the best agreement separates FD truncation/noise from
        // gradient errors.
        double best[3] = {INFINITY, INFINITY, INFINITY};
        for (double f : {10.0, 1.0, 0.1}) {
          pt::ObjectiveOptions o2 = opt;
          o2.fdStep = opt.fdStep * f;
          const Run d2 = f == 1.0 ? d : run(p, q, GradientMethod::FiniteDifferences, o2);
          if (!d2.ok) continue;
          for (int m = 0; m < 3; ++m)
            if (r[m].ok) best[m] = std::min(best[m], relDev(r[m].gradient, d2.gradient));
        }
        if (r[0].ok && std::isfinite(best[0])) bestS.push_back(best[0]);
        if (r[1].ok && std::isfinite(best[1])) bestA.push_back(best[1]);
        if (r[2].ok && std::isfinite(best[2])) bestF.push_back(best[2]);
        if (!d.ok) {
          ++fdFail;
        } else {
          if (r[0].ok) fdS.push_back(relDev(r[0].gradient, d.gradient));
          if (r[1].ok) fdA.push_back(relDev(r[1].gradient, d.gradient));
          if (r[2].ok) {
            fdF.push_back(relDev(r[2].gradient, d.gradient));
            std::size_t w = 0;  // worst component of forward vs FD, for the log
            for (std::size_t i = 0; i < d.gradient.size(); ++i)
              if (std::abs(r[2].gradient[i] - d.gradient[i]) >
                  std::abs(r[2].gradient[w] - d.gradient[w]))
                w = i;
            if (!d.gradient.empty())
              std::fprintf(stderr, "  sample %d FD: rel. dev. %.3g, worst |diff| at %s: forward %.10g, FD %.10g\n",
                           s, fdF.back(), p.parameters[static_cast<std::size_t>(est[w])].id.c_str(),
                           r[2].gradient[w], d.gradient[w]);
          }
        }
      }
      std::fprintf(stderr, "  sample %d: ssASA %.3fs%s adjoint %.3fs%s forward %.3fs%s obj %.3fs%s\n",
                   s, r[0].seconds, r[0].ok ? "" : "(FAIL)", r[1].seconds, r[1].ok ? "" : "(FAIL)",
                   r[2].seconds, r[2].ok ? "" : "(FAIL)", r[3].seconds, r[3].ok ? "" : "(FAIL)");
    }

    std::printf("### %s (%s, %zu estimated parameters, %zu measurements)\n\n", c.name, c.kind,
                est.size(), p.measurements.size());
    std::printf("| method | failures | median s/gradient | mean s/gradient | median time / ssASA | "
                "mean time / ssASA |\n|---|---|---|---|---|---|\n");
    const double sMed = median(times[0]), sMean = mean(times[0]);
    for (int m = 0; m < 4; ++m)
      std::printf("| %s | %d/%d | %.4g | %.4g | %.2f | %.2f |\n", names[m], failures[m], samples,
                  median(times[m]), mean(times[m]), median(times[m]) / sMed,
                  mean(times[m]) / sMean);
    std::printf("\nPer-sample time ratios (samples where both succeeded): adjoint/ssASA median "
                "%.2f, mean %.2f (n=%zu); forward/ssASA median %.2f, mean %.2f (n=%zu).\n\n",
                median(ratioAS), mean(ratioAS), ratioAS.size(), median(ratioFS), mean(ratioFS),
                ratioFS.size());
    std::printf("| comparison | samples | max rel. deviation | median rel. deviation |\n"
                "|---|---|---|---|\n");
    auto row = [](const char* what, const std::vector<double>& v) {
      std::printf("| %s | %zu | %.3g | %.3g |\n", what, v.size(), maxOf(v), median(v));
    };
    row("ssASA vs forward", devSF);
    row("adjoint vs forward", devAF);
    row("ssASA vs adjoint", devSA);
    char fdLabel[96];
    std::snprintf(fdLabel, sizeof fdLabel, "ssASA vs FD (step %g)", opt.fdStep);
    row(fdLabel, fdS);
    std::snprintf(fdLabel, sizeof fdLabel, "adjoint vs FD (step %g)", opt.fdStep);
    row(fdLabel, fdA);
    std::snprintf(fdLabel, sizeof fdLabel, "forward vs FD (step %g)", opt.fdStep);
    row(fdLabel, fdF);
    std::snprintf(fdLabel, sizeof fdLabel, "ssASA vs FD (best of steps %g, %g, %g)",
                  10 * opt.fdStep, opt.fdStep, 0.1 * opt.fdStep);
    row(fdLabel, bestS);
    std::snprintf(fdLabel, sizeof fdLabel, "adjoint vs FD (best of 3 steps)");
    row(fdLabel, bestA);
    std::snprintf(fdLabel, sizeof fdLabel, "forward vs FD (best of 3 steps)");
    row(fdLabel, bestF);
    if (fdFail) std::printf("\nFinite differences failed on %d of %d samples.\n", fdFail, fdSamples);
    std::printf("\nssASA: %s\n\nadjoint: %s\n", ssasaNotes.c_str(), adjointNotes.c_str());
    for (int m = 0; m < 4; ++m)
      for (const auto& [msg, n] : errors[m])
        std::printf("\n%s failure (%d×): %s\n", names[m], n, msg.c_str());
    std::printf("\n");

    char line[256];
    std::snprintf(line, sizeof line,
                  "| %s | %.2f | %.2f | %.2f | %.2f | %.3g | %.3g | %.3g | %d/%d/%d |", c.name,
                  mean(times[1]) / sMean, median(times[1]) / sMed, mean(times[2]) / sMean,
                  median(times[2]) / sMed, maxOf(fdS), maxOf(devSF), maxOf(bestS), failures[0], failures[1],
                  failures[2]);
    summary.emplace_back(line);
    std::fflush(stdout);
  }
  std::printf("### Summary\n\n| problem | adjoint/ssASA (mean) | adjoint/ssASA (median) | "
              "forward/ssASA (mean) | forward/ssASA (median) | ssASA vs FD max | ssASA vs "
              "forward max | ssASA vs FD max (best of 3 steps) | failures ssASA/adj/fwd |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& l : summary) std::printf("%s\n", l.c_str());
  return 0;
}
