// SPDX-License-Identifier: MIT
// Issue 29 item 3: the PEtab forward gradient by CVODES and by odeSD side by side, in one
// process, at `sensode estimate`'s tolerances (EstimationOptions::defaultObjectiveOptions: rtol
// 1e-8, atol 1e-10, 10000 steps), on every shared PEtab problem without pre-equilibration or
// steady-state data (those are listed as skipped, with the reason). Per problem, at the
// nominal parameters:
//   - wall time of one gradient (the minimum of --repeats runs, after the model's native code
//     is ready), the ratio odeSD/CVODES, steps and f evaluations of the time courses;
//   - CVODES and odeSD once more with the sensitivities in their error tests (ObjectiveOptions::
//     sensitivityErrorControl): their times and errors;
//   - the reference gradient at rtol 1e-12 (atol 1e-14) by CVODES forward and by odeSD forward,
//     both with the sensitivities in the error test, and their agreement; where they disagree by more than --ref-agreement, the tie is broken
//     by a third method: the adjoint at rtol 1e-12 and fourth-order central differences of the
//     objective at rtol 1e-12 with steps 1e-2, 1e-3, 1e-4 (the step whose result is closest to
//     either reference is reported);
//   - the accuracy of each method at the estimate's tolerances: max|g − g_ref| / max|g_ref|
//     against the reference that the tie-break supports (CVODES's when they agree).
//
//   bench_forward_gradient [--only SUBSTRING] [--repeats N] [--ref-agreement E]
//                          [--limit SECONDS] [--offset D]
// --offset D evaluates at the nominal parameters + D on every parameter scale (clamped to the
// bounds) instead: the nominal ones are the published optimum of most problems, where the
// gradient nearly vanishes and a relative error measures the cancellation as much as the
// integrator.
// A run longer than --limit seconds (default 600) is cancelled and reported as such. Markdown
// goes to stdout, progress to stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/estimation/estimation.h"
#include "core/petab/gradient_check.h"
#include "core/petab/objective.h"
#include "core/petab/petab_problem.h"
#include "tests/bench/native_ready.h"

namespace {

namespace fs = std::filesystem;
namespace pt = sensode::petab;
namespace in = sensode::integrators;
using Clock = std::chrono::steady_clock;

struct Run {
  bool ok = false;
  std::string error;
  double seconds = NAN;
  pt::ObjectiveResult result;
};

Run evaluate(const pt::Problem& p, const std::vector<double>& q, pt::GradientMethod method,
             pt::ObjectiveOptions o, double limit) {
  Run run;
  sensode::ProgressMonitor monitor;
  const auto t0 = Clock::now();
  monitor.callback = [t0, limit](const sensode::ProgressInfo&) {
    return std::chrono::duration<double>(Clock::now() - t0).count() > limit
               ? sensode::Decision::Abort
               : sensode::Decision::Continue;
  };
  try {
    run.result = pt::evaluateObjective(p, q, method, o, monitor);
    run.ok = true;
  } catch (const sensode::Cancelled&) {
    run.error = "over the time limit";
  } catch (const std::exception& e) {
    run.error = e.what();
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return run;
}

// max|g − r| / max|r|, NaN when either is missing.
double accuracy(const Run& g, const std::vector<double>& r) {
  if (!g.ok || r.empty() || g.result.gradient.size() != r.size()) return NAN;
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    diff = std::max(diff, std::abs(g.result.gradient[i] - r[i]));
    scale = std::max(scale, std::abs(r[i]));
  }
  return scale > 0 ? diff / scale : 0.0;
}

std::string fmt(double v, const char* f = "%.2g") {
  if (std::isnan(v)) return "–";
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Why a problem is outside the benchmark (pre-equilibration or steady-state data), or nullopt.
std::optional<std::string> restriction(const pt::Problem& p) {
  for (const pt::Measurement& m : p.measurements) {
    if (m.preequilibrationCondition >= 0) return "pre-equilibration";
    if (std::isinf(m.time)) return "steady-state data";
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  int repeats = 3;
  double refAgreement = 1e-6, limit = 600, offset = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--only") only = next();
    else if (a == "--repeats") repeats = std::max(1, std::atoi(next().c_str()));
    else if (a == "--ref-agreement") refAgreement = std::atof(next().c_str());
    else if (a == "--limit") limit = std::atof(next().c_str());
    else if (a == "--offset") offset = std::atof(next().c_str());
    else {
      std::fprintf(stderr, "usage: bench_forward_gradient [--only S] [--repeats N] "
                           "[--ref-agreement E] [--limit SECONDS] [--offset D]\n");
      return 2;
    }
  }
  const fs::path root = fs::path(SENSODE_SHARED_DIR) / "petab";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / (e.path().filename().string() + ".yaml")))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());

  const pt::ObjectiveOptions estimateTol = sensode::estimation::EstimationOptions{}.objective;
  pt::ObjectiveOptions tight = estimateTol;
  tight.integrator.rtol = 1e-12;
  tight.integrator.atol = 1e-14;
  tight.integrator.maxSteps = 1000000;

  std::ostringstream skipped, notes, refs;
  std::printf("| problem | n_θ | CVODES s | odeSD s | odeSD/CVODES | CVODES steps | odeSD steps "
              "| CVODES f | odeSD f | CVODES error | odeSD error | CVODES+sens. error test s "
              "| its error | odeSD+sens. error test s | its error | max|g_ref| | reference |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
              "| ---: | ---: | ---: | ---: | --- |\n");
  std::vector<double> ratios;
  for (const std::string& name : names) {
    if (!only.empty() && name.find(only) == std::string::npos) continue;
    std::fprintf(stderr, "%s\n", name.c_str());
    pt::Problem p;
    try {
      p = pt::loadProblem(root / name / (name + ".yaml"));
    } catch (const std::exception& e) {
      skipped << "- " << name << ": does not load (" << e.what() << ")\n";
      continue;
    }
    if (const auto why = restriction(p)) {
      skipped << "- " << name << ": " << *why << "\n";
      continue;
    }
    sensode::bench::waitForNativeEvaluators(*p.model, name, 900, notes);
    std::vector<double> q = pt::nominalScaledParameters(p);
    const std::vector<int> estimated = pt::estimatedParameters(p);
    for (std::size_t i = 0; offset != 0 && i < q.size(); ++i) {
      const pt::Parameter& par = p.parameters[static_cast<std::size_t>(estimated[i])];
      q[i] = std::clamp(q[i] + offset, pt::toScale(par.scale, par.lowerBound),
                        pt::toScale(par.scale, par.upperBound));
    }

    // The problem's once-per-problem work (the conservation analysis and its reduced model,
    // petab::ConservedModelCache) before any timing: else the first run pays it.
    evaluate(p, q, pt::GradientMethod::None, estimateTol, limit);
    // At the estimate's tolerances: the fastest of `repeats` runs, alternating the integrators
    // so that both see the same machine state.
    // Variants: 0 CVODES, 1 odeSD (the estimate's sensitivity error control), 2 CVODES and 3
    // odeSD with the sensitivities in the error test.
    Run cv, sd, cvErr, sdErr;
    for (int r = 0; r < repeats; ++r) {
      for (int variant = 0; variant < 4; ++variant) {
        pt::ObjectiveOptions o = estimateTol;
        o.forwardIntegrator = variant % 2 ? in::Method::OdeSd : in::Method::Cvodes;
        if (variant >= 2) o.sensitivityErrorControl = true;
        Run run = evaluate(p, q, pt::GradientMethod::Forward, o, limit);
        Run& best = variant == 0 ? cv : variant == 1 ? sd : variant == 2 ? cvErr : sdErr;
        if (r == 0 || (run.ok && run.seconds < best.seconds)) best = std::move(run);
      }
      if (!cv.ok && !sd.ok) break;
    }
    // Whether odeSD itself ran (an odeSD run CVODES rescued is counted as odeSD's failure).
    const bool sdFellBack = sd.ok && sd.result.integrator != in::Method::OdeSd;
    if (sdFellBack)
      notes << "- " << name << ": odeSD failed at the estimate's tolerances ("
            << sd.result.fallbacks.front() << ")\n";

    // The reference at rtol 1e-12 by both integrators.
    pt::ObjectiveOptions o = tight;
    o.forwardIntegrator = in::Method::Cvodes;
    o.sensitivityErrorControl = true;
    const Run refCv = evaluate(p, q, pt::GradientMethod::Forward, o, limit);
    o.forwardIntegrator = in::Method::OdeSd;
    const Run refSd = evaluate(p, q, pt::GradientMethod::Forward, o, limit);
    const bool sdRefFellBack = refSd.ok && refSd.result.integrator != in::Method::OdeSd;
    const double refSpread =
        refCv.ok && refSd.ok && !sdRefFellBack ? accuracy(refSd, refCv.result.gradient) : NAN;
    std::vector<double> ref;
    std::string refName;
    if (refCv.ok) {
      ref = refCv.result.gradient;
      refName = "CVODES 1e-12";
    } else if (refSd.ok && !sdRefFellBack) {
      ref = refSd.result.gradient;
      refName = "odeSD 1e-12";
    }
    if (!std::isnan(refSpread) && !(refSpread <= refAgreement)) {
      // A third method decides: the adjoint and the best of an FD step study, both at 1e-12.
      pt::ObjectiveOptions a = tight;
      a.forwardIntegrator = in::Method::Cvodes;
      const Run adj = evaluate(p, q, pt::GradientMethod::Adjoint, a, limit);
      double bestFd = INFINITY, bestStep = NAN;
      Run fdBest;
      for (double h : {1e-2, 1e-3, 1e-4}) {
        pt::ObjectiveOptions f = a;
        f.fdStep = h;
        f.fdOrder = 4;
        Run fd = evaluate(p, q, pt::GradientMethod::FiniteDifferences, f, limit);
        const double d = std::min(accuracy(fd, refCv.result.gradient),
                                  accuracy(fd, refSd.result.gradient));
        if (fd.ok && d < bestFd) {
          bestFd = d;
          bestStep = h;
          fdBest = std::move(fd);
        }
      }
      const double adjCv = accuracy(adj, refCv.result.gradient);
      const double adjSd = accuracy(adj, refSd.result.gradient);
      const double fdCv = accuracy(fdBest, refCv.result.gradient);
      const double fdSd = accuracy(fdBest, refSd.result.gradient);
      refs << "- " << name << ": CVODES and odeSD at 1e-12 differ by " << fmt(refSpread)
           << "; adjoint 1e-12 vs CVODES " << fmt(adjCv) << ", vs odeSD " << fmt(adjSd)
           << (adj.ok ? "" : " (adjoint: " + adj.error + ")") << "; FD (4th order, step "
           << fmt(bestStep) << ") vs CVODES " << fmt(fdCv) << ", vs odeSD " << fmt(fdSd) << "\n";
      // The reference the third method is closer to (the adjoint when it ran, else FD).
      const double toCv = adj.ok ? adjCv : fdCv, toSd = adj.ok ? adjSd : fdSd;
      if (toSd < toCv) {
        ref = refSd.result.gradient;
        refName = "odeSD 1e-12 (tie-break)";
      } else if (!std::isnan(toCv)) {
        refName = "CVODES 1e-12 (tie-break)";
      }
    } else if (!std::isnan(refSpread)) {
      refs << "- " << name << ": CVODES and odeSD at 1e-12 agree to " << fmt(refSpread) << "\n";
    } else {
      refs << "- " << name << ": reference: CVODES " << (refCv.ok ? "ok" : refCv.error)
           << ", odeSD " << (refSd.ok ? (sdRefFellBack ? "fell back to CVODES" : "ok") : refSd.error)
           << "\n";
    }
    const double ratio = cv.ok && sd.ok && !sdFellBack ? sd.seconds / cv.seconds : NAN;
    if (!std::isnan(ratio)) ratios.push_back(ratio);
    const auto cell = [](const Run& r, double v, const char* f) {
      return r.ok ? fmt(v, f) : std::string("failed");
    };
    double refMax = NAN;
    if (!ref.empty()) {
      refMax = 0;
      for (double v : ref) refMax = std::max(refMax, std::abs(v));
    }
    std::printf("| %s | %zu | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
                "| %s |\n",
                name.c_str(),
                q.size(), cell(cv, cv.seconds, "%.3g").c_str(),
                cell(sd, sd.seconds, "%.3g").c_str(), fmt(ratio, "%.2f").c_str(),
                cell(cv, double(cv.result.integration.steps), "%.0f").c_str(),
                cell(sd, double(sd.result.integration.steps), "%.0f").c_str(),
                cell(cv, double(cv.result.integration.rhsEvals), "%.0f").c_str(),
                cell(sd, double(sd.result.integration.rhsEvals), "%.0f").c_str(),
                fmt(accuracy(cv, ref)).c_str(),
                sdFellBack ? "(CVODES)" : fmt(accuracy(sd, ref)).c_str(),
                cell(cvErr, cvErr.seconds, "%.3g").c_str(), fmt(accuracy(cvErr, ref)).c_str(),
                cell(sdErr, sdErr.seconds, "%.3g").c_str(),
                sdErr.ok && sdErr.result.integrator == in::Method::OdeSd
                    ? fmt(accuracy(sdErr, ref)).c_str()
                    : "(CVODES)",
                fmt(refMax, "%.3g").c_str(),
                refName.empty() ? "none" : refName.c_str());
    std::fflush(stdout);
    if (!cv.ok) notes << "- " << name << ": CVODES failed: " << cv.error << "\n";
    if (!sd.ok) notes << "- " << name << ": odeSD (and CVODES after it) failed: " << sd.error << "\n";
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    const std::size_t n = ratios.size();
    const double med = n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
    std::printf("\nMedian odeSD/CVODES wall ratio over %zu problems: %.2f (range %.2f–%.2f)\n", n,
                med, ratios.front(), ratios.back());
  }
  std::printf("\nReferences (rtol 1e-12):\n\n%s", refs.str().c_str());
  if (!skipped.str().empty()) std::printf("\nSkipped:\n\n%s", skipped.str().c_str());
  if (!notes.str().empty()) std::printf("\nNotes:\n\n%s", notes.str().c_str());
  return 0;
}
