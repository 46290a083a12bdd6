// SPDX-License-Identifier: MIT
// odeSD against CVODES, side by side in one process on the same compiled models (issue 3).
//
// Models: every PEtab model_*.xml (parameters from the problem's parameter table where the ids
// match; output times: the problem's finite measurement times and 0, or with `--points N` N
// equidistant times from 0 to the last measurement; 101 points on [0, 100] without finite
// measurement times) and the largest SBML Test Suite models that import (by species +
// reactions, over the 60 largest files; their own output times).
//
// For every model, method (odeSD, CVODES) and rtol (default 1e-4, 1e-6, 1e-8; atol 1e-12):
// steps, f / ẍ / Jacobian evaluations, LU factorisations, Newton iterations, wall time (median of
// `--samples` samples, default 5; each sample repeats the whole run — initialize + all
// advanceTo calls — until it lasts ≥ 20 ms and divides) and the achieved accuracy against CVODES
// at rtol 1e-12 / atol 1e-16: max over output times and states of |x − ref| / (|ref| + floor_i),
// floor_i = max(1e-6 · max_t |ref_i|, atol) (so components that pass through zero or stay tiny
// do not dominate).
//
// Ratios odeSD / CVODES are printed at equal rtol and at matched accuracy (CVODES's log(steps)
// and log(wall) interpolated linearly in log(error) across its rtols at odeSD's error), plus a
// table of odeSD's linear solvers (dense LU, KLU, Eigen SparseLU) at rtol 1e-6.
//
//   bench_integrators [--petab DIR] [--suite DIR] [--suite-top K] [--rtols R,R,...]
//                     [--samples N] [--points N] [--only SUBSTRING] [--newton-iterations N]
//                     [--stiffness norm1|spectral]   (the z cap's stiffness estimate)
//                     [--newton-tolerance K] [--stiff-predictor-degree D] [--dense-tolerance T]
//                     [--iterate-tolerance I]
//                                    (OdeSdOptions::newtonTolerance, stiffPredictorDegree,
//                                     denseTolerance, iterateTolerance; 0.1, 2, 0, 0 is the
//                                     scheme before 2026-11-26c)
//                     [--jacobian-reuse N] [--lu-ratio R]  (odeSD's Newton matrix kept across
//                                     steps: OdeSdOptions::jacobianReuseSteps, luReuseRatio;
//                                     --jacobian-reuse 1 is the fresh-every-attempt scheme)
//                     [--profile odesd|cvodes [--profile-runs N]]
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/integrators/cvodes_integrator.h"
#include "core/integrators/integrator.h"
#include "core/integrators/odesd_integrator.h"
#include "core/model/sbml_importer.h"
#include "core/suite/test_case.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "tests/bench/bench_integrators.h"
#include "tests/bench/native_ready.h"
#include "tests/bench/suite_files.h"

namespace bench_integrators {

Run integrate(const BenchModel& m, const Config& c, bool keep) {
  Run r;
  IntegratorOptions o;
  o.rtol = c.rtol;
  o.atol = c.atol;
  o.linearSolver = c.linear;
  o.maxSteps = 1000000;
  std::unique_ptr<sensode::integrators::Integrator> integrator;
  if (c.solver == Solver::OdeSd) {
    auto sd = std::make_unique<sensode::integrators::OdeSdIntegrator>();
    OdeSdOptions so;
    so.sparseBackend = c.backend;
    if (c.newtonIterations > 0) so.maxNewtonIterations = c.newtonIterations;
    if (c.spectralCap) so.stiffnessEstimate = OdeSdOptions::StiffnessEstimate::SpectralRadius;
    if (c.jacobianReuse > 0) so.jacobianReuseSteps = c.jacobianReuse;
    if (c.luRatio >= 0) so.luReuseRatio = c.luRatio;
    if (c.newtonTolerance >= 0) so.newtonTolerance = c.newtonTolerance;
    if (c.stiffPredictorDegree > 0) so.stiffPredictorDegree = c.stiffPredictorDegree;
    if (c.denseTolerance >= 0) so.denseTolerance = c.denseTolerance;
    if (c.iterateTolerance >= 0) so.iterateTolerance = c.iterateTolerance;
    sd->setOdeSdOptions(so);
    integrator = std::move(sd);
  } else {
    integrator = std::make_unique<sensode::integrators::CvodesIntegrator>();
  }
  std::vector<double> x = m.x0;
  try {
    integrator->initialize(m.model, o, 0.0, x, m.p);
    if (keep) r.x.reserve(m.times.size());
    for (double t : m.times) {
      if (t > 0) integrator->advanceTo(t, x, {});
      if (keep) r.x.push_back(x);
    }
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  r.stats = integrator->stats();
  return r;
}

namespace {

using Clock = std::chrono::steady_clock;


double accuracy(const BenchModel& m, const Run& r) {
  double e = 0;
  for (std::size_t k = 0; k < r.x.size(); ++k) {
    for (std::size_t i = 0; i < r.x[k].size(); ++i) {
      const double d = std::abs(r.x[k][i] - m.ref[k][i]) / (std::abs(m.ref[k][i]) + m.floor[i]);
      e = std::max(e, std::isfinite(d) ? d : std::numeric_limits<double>::infinity());
    }
  }
  return e;
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double wall = 0, cpu = 0;  // seconds per run, medians over the samples
};

// Median wall and thread-CPU time of one run: `samples` samples, each repeating the run until it
// lasts ≥ 50 ms.
Timing timeRun(const BenchModel& m, const Config& c, int samples) {
  const auto t0 = Clock::now();
  integrate(m, c, false);
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  const int reps = std::max(1, static_cast<int>(std::ceil(0.05 / std::max(first, 1e-7))));
  std::vector<double> wall, cpu;
  for (int k = 0; k < std::max(1, samples); ++k) {
    const auto w0 = Clock::now();
    const double c0 = threadCpuSeconds();
    for (int r = 0; r < reps; ++r) integrate(m, c, false);
    cpu.push_back((threadCpuSeconds() - c0) / reps);
    wall.push_back(std::chrono::duration<double>(Clock::now() - w0).count() / reps);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

struct Result {
  Run run;
  double err = 0, wall = 0, cpu = 0;
};

// log(y) at log(x0) from the (x, y) points, linear between neighbours in log-log, linear
// extrapolation from the end segments. `extrapolated` says whether x0 was outside.
double interpolateLogLog(std::vector<std::pair<double, double>> pts, double x0, bool& extrapolated) {
  std::sort(pts.begin(), pts.end());
  extrapolated = x0 < pts.front().first || x0 > pts.back().first;
  if (pts.size() == 1) return pts[0].second;
  std::size_t k = 0;
  while (k + 2 < pts.size() && x0 > pts[k + 1].first) ++k;
  const double lx0 = std::log(pts[k].first), lx1 = std::log(pts[k + 1].first);
  const double ly0 = std::log(pts[k].second), ly1 = std::log(pts[k + 1].second);
  if (lx1 == lx0) return pts[k].second;
  return std::exp(ly0 + (ly1 - ly0) * (std::log(x0) - lx0) / (lx1 - lx0));
}


std::string statsCells(const Result& r, Solver solver) {
  const IntegratorStats& st = r.run.stats;
  std::string s = std::to_string(st.steps);
  if (st.handoverTime >= 0) {
    s += " (" + std::to_string(st.handoverSteps) + " BDF from t = " + fmt("%.3g", st.handoverTime) +
         ")";
  }
  s += " | " + std::to_string(st.rhsEvals) + " | " +
       (solver == Solver::OdeSd ? std::to_string(st.secondDerivativeEvals) : std::string("–")) +
       " | " + std::to_string(st.jacEvals) + " | " + std::to_string(st.luFactorizations) + " | " +
       std::to_string(st.newtonIterations) + " | " + std::to_string(st.errorTestFailures) + "/" +
       std::to_string(st.newtonFailures);
  return s;
}

double geometricMean(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

int run(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--petab") s.petabDir = value();
    else if (arg == "--suite") s.suiteDir = value();
    else if (arg == "--suite-top") s.suiteTop = std::stoi(value());
    else if (arg == "--samples") s.samples = std::stoi(value());
    else if (arg == "--points") s.points = std::max(2, std::stoi(value()));
    else if (arg == "--measurement-times") s.points = 0;
    else if (arg == "--only") s.only = value();
    else if (arg == "--profile") s.profile = value();
    else if (arg == "--newton-iterations") s.newtonIterations = std::stoi(value());
    else if (arg == "--stiffness") s.spectralCap = value() == "spectral";
    else if (arg == "--jacobian-reuse") s.jacobianReuse = std::stoi(value());
    else if (arg == "--lu-ratio") s.luRatio = std::stod(value());
    else if (arg == "--newton-tolerance") s.newtonTolerance = std::stod(value());
    else if (arg == "--stiff-predictor-degree") s.stiffPredictorDegree = std::stoi(value());
    else if (arg == "--dense-tolerance") s.denseTolerance = std::stod(value());
    else if (arg == "--iterate-tolerance") s.iterateTolerance = std::stod(value());
    else if (arg == "--profile-runs") s.profileRuns = std::stoi(value());
    else if (arg == "--rtols") {
      s.rtols.clear();
      std::stringstream in(value());
      std::string item;
      while (std::getline(in, item, ',')) s.rtols.push_back(std::stod(item));
    } else {
      throw std::runtime_error("unknown argument " + arg);
    }
  }

  std::vector<BenchModel> models = petabModels(s, std::cerr);
  for (auto& m : suiteModels(s, std::cerr)) models.push_back(std::move(m));
  if (models.empty()) throw std::runtime_error("no models");

  if (!s.profile.empty()) {
    // Profiling mode: the chosen method at the first rtol, profileRuns times per model.
    Config c;
    c.solver = s.profile == "cvodes" ? Solver::Cvodes : Solver::OdeSd;
    c.rtol = s.rtols.front();
    c.atol = s.atol;
    c.newtonIterations = s.newtonIterations;
    c.spectralCap = s.spectralCap;
    c.jacobianReuse = s.jacobianReuse;
    c.luRatio = s.luRatio;
    c.newtonTolerance = s.newtonTolerance;
    c.stiffPredictorDegree = s.stiffPredictorDegree;
    c.denseTolerance = s.denseTolerance;
    c.iterateTolerance = s.iterateTolerance;
    for (const BenchModel& m : models) {
      for (int r = 0; r < s.profileRuns; ++r) integrate(m, c, false);
      std::cout << m.name << ": " << integrate(m, c, false).stats.steps << " steps\n";
    }
    return 0;
  }

  std::cout << "## Models\n\n| model | nx | nnz(J) | nnz(J_J) | nnz(W) | output times | T |\n"
               "|---|--:|--:|--:|--:|--:|--:|\n";
  for (const BenchModel& m : models) {
    // nnz of W = union of I, J, J_J (what odeSD factorises).
    const auto& jp = m.model->jacobianPattern();
    const auto& jjp = m.model->jacobianOfSecondPattern();
    int nnzW = 0;
    for (int j = 0; j < m.model->nx(); ++j) {
      std::vector<int> rows{j};
      for (int k = jp.colPtr[j]; k < jp.colPtr[j + 1]; ++k) rows.push_back(jp.rowIdx[k]);
      for (int k = jjp.colPtr[j]; k < jjp.colPtr[j + 1]; ++k) rows.push_back(jjp.rowIdx[k]);
      std::sort(rows.begin(), rows.end());
      nnzW += static_cast<int>(std::unique(rows.begin(), rows.end()) - rows.begin());
    }
    std::cout << "| " << m.name << " | " << m.model->nx() << " | " << jp.nnz() << " | "
              << jjp.nnz() << " | " << nnzW << " | " << m.times.size() << " | "
              << fmt("%g", m.times.back()) << " |\n";
  }
  std::cout << "\n";

  // results[model][solver][rtol index]
  std::vector<std::array<std::vector<Result>, 2>> results(models.size());
  std::cout << "## Runs (atol " << fmt("%g", s.atol) << ")\n\n"
            << "| model | rtol | method | steps | f evals | ẍ evals | Jacobian evals | LU | Newton "
               "iterations | ETF/NCF | wall ms | CPU ms | error |\n"
               "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (std::size_t mi = 0; mi < models.size(); ++mi) {
    const BenchModel& m = models[mi];
    for (double rtol : s.rtols) {
      for (Solver solver : {Solver::OdeSd, Solver::Cvodes}) {
        Config c;
        c.solver = solver;
        c.rtol = rtol;
        c.atol = s.atol;
        c.newtonIterations = s.newtonIterations;
        c.spectralCap = s.spectralCap;
        c.jacobianReuse = s.jacobianReuse;
        c.luRatio = s.luRatio;
        c.newtonTolerance = s.newtonTolerance;
        c.stiffPredictorDegree = s.stiffPredictorDegree;
        c.denseTolerance = s.denseTolerance;
        c.iterateTolerance = s.iterateTolerance;
    c.spectralCap = s.spectralCap;
        Result r;
        r.run = integrate(m, c, true);
        if (r.run.ok) {
          r.err = accuracy(m, r.run);
          const Timing tm = timeRun(m, c, s.samples);
          r.wall = tm.wall;
          r.cpu = tm.cpu;
        }
        std::cout << "| " << m.name << " | " << fmt("%g", rtol) << " | "
                  << (solver == Solver::OdeSd ? "odeSD" : "CVODES") << " | ";
        if (r.run.ok) {
          std::cout << statsCells(r, solver) << " | " << fmt("%.3f", r.wall * 1e3) << " | "
                    << fmt("%.3f", r.cpu * 1e3) << " | " << fmt("%.2g", r.err) << " |\n";
        } else {
          std::cout << "failed: " << r.run.error << " ||||||||||\n";
        }
        std::cout.flush();
        results[mi][solver == Solver::OdeSd ? 0 : 1].push_back(std::move(r));
      }
    }
  }

  std::cout << "\n## Ratios odeSD / CVODES\n\n"
               "At equal rtol, and at matched accuracy (CVODES's log(steps), log(wall), log(CPU) "
               "interpolated linearly in log(error) at odeSD's error; * = extrapolated).\n\n"
               "| model | rtol | steps | wall | CPU | error odeSD | error CVODES | steps, matched "
               "| wall, matched | CPU, matched |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  std::map<double, std::vector<double>> g[6];  // steps, wall, cpu, matched steps, wall, cpu
  for (std::size_t mi = 0; mi < models.size(); ++mi) {
    const auto& od = results[mi][0];
    const auto& cv = results[mi][1];
    std::vector<std::pair<double, double>> cvSteps, cvWall, cvCpu;
    for (const Result& r : cv) {
      if (r.run.ok && r.err > 0 && std::isfinite(r.err)) {
        cvSteps.push_back({r.err, static_cast<double>(r.run.stats.steps)});
        cvWall.push_back({r.err, r.wall});
        cvCpu.push_back({r.err, r.cpu});
      }
    }
    for (std::size_t k = 0; k < s.rtols.size(); ++k) {
      const Result& a = od[k];
      const Result& b = cv[k];
      const double rtol = s.rtols[k];
      std::cout << "| " << models[mi].name << " | " << fmt("%g", rtol) << " | ";
      if (!a.run.ok || !b.run.ok) {
        std::cout << "– | – | – | – | – | – | – | – |\n";
        continue;
      }
      const double ratio[3] = {static_cast<double>(a.run.stats.steps) / b.run.stats.steps,
                               a.wall / b.wall, a.cpu / b.cpu};
      for (int q = 0; q < 3; ++q) {
        g[q][rtol].push_back(ratio[q]);
        std::cout << fmt("%.2f", ratio[q]) << " | ";
      }
      std::cout << fmt("%.2g", a.err) << " | " << fmt("%.2g", b.err) << " | ";
      if (cvSteps.size() >= 2 && a.err > 0 && std::isfinite(a.err)) {
        bool ex = false;
        const double matched[3] = {a.run.stats.steps / interpolateLogLog(cvSteps, a.err, ex),
                                   a.wall / interpolateLogLog(cvWall, a.err, ex),
                                   a.cpu / interpolateLogLog(cvCpu, a.err, ex)};
        for (int q = 0; q < 3; ++q) {
          // Extrapolated values stay out of the means.
          if (!ex) g[3 + q][rtol].push_back(matched[q]);
          std::cout << fmt("%.2f", matched[q]) << (ex ? "*" : "") << (q < 2 ? " | " : " |\n");
        }
      } else {
        std::cout << "– | – | – |\n";
      }
    }
  }
  std::cout << "\n## Geometric means over models\n\n(matched: models whose odeSD error lies "
               "inside CVODES's error range)\n\n| rtol | steps | wall | CPU | steps, matched | "
               "wall, matched | CPU, matched |\n|--:|--:|--:|--:|--:|--:|--:|\n";
  for (double rtol : s.rtols) {
    std::cout << "| " << fmt("%g", rtol);
    for (int q = 0; q < 6; ++q) std::cout << " | " << fmt("%.2f", geometricMean(g[q][rtol]));
    std::cout << " |\n";
  }

  // odeSD's linear solvers at rtol 1e-6.
  std::cout << "\n## odeSD linear solvers (rtol 1e-6): wall ms\n\n"
               "| model | nx | dense LU | KLU | Eigen SparseLU |\n|---|--:|--:|--:|--:|\n";
  for (const BenchModel& m : models) {
    Config c;
    c.rtol = 1e-6;
    c.atol = s.atol;
    c.newtonIterations = s.newtonIterations;
    c.spectralCap = s.spectralCap;
    c.jacobianReuse = s.jacobianReuse;
    c.luRatio = s.luRatio;
    c.newtonTolerance = s.newtonTolerance;
    c.stiffPredictorDegree = s.stiffPredictorDegree;
    c.denseTolerance = s.denseTolerance;
    c.iterateTolerance = s.iterateTolerance;
    std::cout << "| " << m.name << " | " << m.model->nx();
    for (int k = 0; k < 3; ++k) {
      c.linear = k == 0 ? LinearSolverKind::Dense : LinearSolverKind::Sparse;
      c.backend = k == 2 ? OdeSdOptions::SparseBackend::EigenSparseLu : OdeSdOptions::SparseBackend::Klu;
      if (!integrate(m, c, false).ok) {
        std::cout << " | failed";
        continue;
      }
      std::cout << " | " << fmt("%.3f", timeRun(m, c, s.samples).wall * 1e3);
    }
    std::cout << " |\n";
    std::cout.flush();
  }
  return 0;
}

}  // namespace
}  // namespace bench_integrators

int main(int argc, char** argv) {
  try {
    return bench_integrators::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_integrators: " << e.what() << "\n";
    return 1;
  }
}
