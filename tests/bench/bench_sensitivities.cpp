// SPDX-License-Identifier: MIT
// The five sensitivity methods side by side in one process on the same compiled models
// (issue 4): odeSD direct, CVODES forward, PBSR, Exp (both on the CVODES trajectory;
// --trajectory odesd for odeSD's) and central finite differences, plus the plain time courses of
// odeSD and CVODES (the sensitivity overhead).
//
// Models: every PEtab model_*.xml (parameters from the problem's parameter table where the ids
// match; output times: the problem's finite measurement times and 0, or 101 points on [0, 100]
// without finite measurement times) and the largest SBML Test Suite models that import (by
// species + reactions over the 60 largest files; their own output times). Sensitivities with
// respect to every parameter of the model, of the default outputs (species in SBML units, then
// the time-varying rule variables).
//
// Per model and method at rtol 1e-6 (atol 1e-12; FD at its own rtol 1e-12, δ = 1e-4·p): wall
// time of runSensitivities (median of `--samples` samples, default 5; each sample repeats the
// run until it lasts ≥ 50 ms), steps, f and Jacobian evaluations, sensitivity evaluations, and
// the error against CVODES forward at rtol 1e-10 / atol 1e-16: per output, on the scale of its
// log-sensitivities, max_{t,p} |p|·|v − v_ref| / max_{t,p} |p|·|v_ref| (|p| → 1 for p = 0),
// the worst output. Ratios are to CVODES forward's wall time.
//
// Method cvodes-aug: CVODES forward sensitivities in the augmented mode (SensitivityCorrector::
// Augmented, [x; S] as one vector); "cvodes" stays the forward module with the staggered
// corrector, the baseline of every ratio. --handover selects the corrector of
// odeSD's CVODES hand-over (default: the library's, augmented).
//
// Every model is timed with the evaluators a user's run ends up with: the benchmark waits for the
// background native compilation (core/symbolic/native_compiler.h) before the first timed run, so
// that no method is timed with the tape interpreter and another with native code. A model whose
// native code is not ready in `--native-timeout` seconds is timed with the interpreter and
// named in the notes.
//
//   bench_sensitivities [--petab DIR] [--suite DIR] [--suite-top K] [--samples N]
//                       [--only SUBSTRING] [--methods odesd,cvodes,cvodes-aug,pbsr,exp,fd]
//                       [--rtol R] [--handover staggered|simultaneous|augmented]
//                       [--trajectory cvodes|odesd]
//                       [--native-timeout S]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/suite/test_case.h"
#include "core/symbolic/compiled_model.h"
#include "tests/bench/native_ready.h"
#include "core/symbolic/ode_system.h"
#include "core/tasks/sensitivities_task.h"
#include "core/tasks/time_course_task.h"
#include "tests/bench/suite_files.h"

#ifndef SENSODE_SHARED_DIR
#define SENSODE_SHARED_DIR "../shared"
#endif

namespace fs = std::filesystem;
using sensode::symbolic::CompiledModel;
using sensode::tasks::SensitivityMethod;
using sensode::tasks::SensitivityOptions;
using sensode::tasks::SensitivityProblem;
using sensode::tasks::SensitivityResult;
using sensode::integrators::SensitivityCorrector;

namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  fs::path petabDir = fs::path(SENSODE_SHARED_DIR) / "petab";
  fs::path suiteDir = fs::path(SENSODE_SHARED_DIR) / "sbml-test-suite" / "cases";
  int suiteTop = 3;
  int samples = 5;
  double rtol = 1e-6, atol = 1e-12;
  std::string only;
  double nativeTimeout = 900;  // seconds to wait for a model's native evaluators
  std::vector<SensitivityMethod> methods = {SensitivityMethod::Cvodes, SensitivityMethod::OdeSd,
                                            SensitivityMethod::Pbsr, SensitivityMethod::Exp,
                                            SensitivityMethod::FiniteDifferences};
  bool cvodesAugmented = true;  // the cvodes-aug row
  std::optional<SensitivityCorrector> handover;
  std::optional<sensode::integrators::Method> trajectory;
};

// What runOnce varies besides the method: CVODES's corrector, odeSD's hand-over corrector and
// the state integrator of PBSR/Exp (defaults: the library's).
struct Correctors {
  SensitivityCorrector cvodes = sensode::integrators::IntegratorOptions{}.sensitivityCorrector;
  SensitivityCorrector handover = sensode::integrators::IntegratorOptions{}.handoverCorrector;
  sensode::integrators::Method trajectory = SensitivityOptions{}.trajectory;
};

struct BenchModel {
  std::string name;
  std::shared_ptr<const CompiledModel> model;
  std::vector<std::pair<std::string, double>> overrides;
  std::vector<double> times;
  SensitivityResult ref;
  std::string refNote;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(s);
  while (std::getline(in, cell, sep)) out.push_back(cell);
  return out;
}

std::vector<std::map<std::string, std::string>> readTsv(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::vector<std::map<std::string, std::string>> rows;
  if (!std::getline(in, line)) return rows;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split(line, '\t');
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> cells = split(line, '\t');
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<double> toDouble(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? std::optional<double>(v) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

std::shared_ptr<const CompiledModel> compile(const fs::path& file) {
  return std::make_shared<const CompiledModel>(
      sensode::symbolic::buildOdeSystem(sensode::model::importSbmlFile(file)));
}

// `parameters` empty: every parameter of the model.
SensitivityResult runOnce(const BenchModel& m, SensitivityMethod method, double rtol,
                          double atol, const Correctors& correctors = {},
                          const std::vector<std::string>& parameters = {}) {
  SensitivityProblem problem;
  problem.model = m.model;
  problem.times = m.times;
  problem.overrides = m.overrides;
  problem.parameters = parameters;
  SensitivityOptions options;
  options.method = method;
  options.integrator.rtol = rtol;
  options.integrator.atol = atol;
  options.integrator.sensitivityCorrector = correctors.cvodes;
  options.integrator.handoverCorrector = correctors.handover;
  options.trajectory = correctors.trajectory;
  return sensode::tasks::runSensitivities(problem, options);
}

sensode::tasks::TimeCourseResult timeCourseOnce(const BenchModel& m,
                                                sensode::integrators::Method method, double rtol,
                                                double atol) {
  sensode::tasks::TimeCourseProblem problem;
  problem.model = m.model;
  problem.times = m.times;
  problem.overrides = m.overrides;
  sensode::tasks::TimeCourseOptions options;
  options.method = method;
  options.integrator.rtol = rtol;
  options.integrator.atol = atol;
  return sensode::tasks::runTimeCourse(problem, options);
}

// Median seconds per call of `f` over `samples` samples of ≥ 50 ms each.
template <class F>
double medianSeconds(F&& f, int samples) {
  const auto t0 = Clock::now();
  f();
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  const int reps = std::max(1, static_cast<int>(std::ceil(0.05 / std::max(first, 1e-7))));
  std::vector<double> wall;
  for (int k = 0; k < std::max(1, samples); ++k) {
    const auto w0 = Clock::now();
    for (int r = 0; r < reps; ++r) f();
    wall.push_back(std::chrono::duration<double>(Clock::now() - w0).count() / reps);
  }
  std::sort(wall.begin(), wall.end());
  return wall[wall.size() / 2];
}

// Worst output error on the scale of its log-sensitivities (see the file comment).
double sensitivityError(const SensitivityResult& r, const SensitivityResult& ref,
                        const std::vector<double>& p, const CompiledModel& model) {
  const std::size_t nt = ref.times.size(), ny = ref.outputIds.size(),
                    np = ref.parameterIds.size();
  if (r.values.size() != ref.values.size()) return std::nan("");
  std::vector<double> w(np);
  for (std::size_t ip = 0; ip < np; ++ip) {
    const double v = p[static_cast<std::size_t>(model.system().findParam(ref.parameterIds[ip]))];
    w[ip] = v != 0 ? std::abs(v) : 1.0;
  }
  double worst = 0;
  for (std::size_t iy = 0; iy < ny; ++iy) {
    double scale = 0, diff = 0;
    for (std::size_t ip = 0; ip < np; ++ip) {
      for (std::size_t it = 0; it < nt; ++it) {
        scale = std::max(scale, w[ip] * std::abs(ref.at(it, iy, ip)));
        diff = std::max(diff, w[ip] * std::abs(r.at(it, iy, ip) - ref.at(it, iy, ip)));
      }
    }
    if (!std::isfinite(diff)) return diff;
    worst = std::max(worst, scale > 0 ? diff / scale : diff);
  }
  return worst;
}

bool prepare(BenchModel& m, double nativeTimeout, std::ostream& log) {
  sensode::bench::waitForNativeEvaluators(*m.model, m.name, nativeTimeout, log);
  for (const double atol : {1e-16, 1e-14, 1e-12}) {
    m.ref = runOnce(m, SensitivityMethod::Cvodes, 1e-10, atol);
    if (m.ref.termination == sensode::tasks::Termination::Success) {
      if (atol != 1e-16) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " (reference at atol %.0e)", atol);
        m.refNote = buf;
      }
      return true;
    }
  }
  log << "note: " << m.name << " skipped: reference run failed: " << m.ref.message << "\n";
  return false;
}

std::vector<BenchModel> petabModels(const Settings& s, std::ostream& log) {
  std::vector<BenchModel> out;
  if (!fs::is_directory(s.petabDir)) return out;
  std::vector<fs::path> problems;
  for (const auto& d : fs::directory_iterator(s.petabDir))
    if (d.is_directory()) problems.push_back(d.path());
  std::sort(problems.begin(), problems.end());
  for (const fs::path& dir : problems) {
    std::vector<fs::path> files;
    fs::path measurements, parameters;
    for (const auto& f : fs::directory_iterator(dir)) {
      const std::string fn = f.path().filename().string();
      if (fn.starts_with("model_") && fn.ends_with(".xml")) files.push_back(f.path());
      if (fn.starts_with("measurementData_") && fn.ends_with(".tsv")) measurements = f.path();
      if (fn.starts_with("parameters_") && fn.ends_with(".tsv")) parameters = f.path();
    }
    std::sort(files.begin(), files.end());
    std::vector<double> times;
    if (!measurements.empty()) {
      for (const auto& row : readTsv(measurements)) {
        auto it = row.find("time");
        if (it == row.end()) continue;
        if (auto v = toDouble(it->second); v && std::isfinite(*v) && *v >= 0) times.push_back(*v);
      }
    }
    if (times.empty() || *std::max_element(times.begin(), times.end()) <= 0) {
      times.clear();
      for (int i = 0; i <= 100; ++i) times.push_back(i);
    } else {
      times.push_back(0);
      std::sort(times.begin(), times.end());
      times.erase(std::unique(times.begin(), times.end()), times.end());
    }
    std::map<std::string, double> nominal;
    if (!parameters.empty()) {
      for (const auto& row : readTsv(parameters)) {
        auto id = row.find("parameterId"), v = row.find("nominalValue");
        if (id == row.end() || v == row.end()) continue;
        if (auto value = toDouble(v->second)) nominal[id->second] = *value;
      }
    }
    for (const fs::path& file : files) {
      const std::string fn = file.filename().string();
      BenchModel m;
      m.name = fn.substr(6, fn.size() - 10);
      if (!s.only.empty() && m.name.find(s.only) == std::string::npos) continue;
      try {
        m.model = compile(file);
      } catch (const std::exception& e) {
        log << "note: " << m.name << " skipped: " << e.what() << "\n";
        continue;
      }
      for (const auto& p : m.model->system().params) {
        if (auto it = nominal.find(p.id); it != nominal.end() && std::isfinite(it->second))
          m.overrides.emplace_back(p.id, it->second);
      }
      m.times = times;
      if (prepare(m, s.nativeTimeout, log)) out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<BenchModel> suiteModels(const Settings& s, std::ostream& log) {
  std::vector<BenchModel> out;
  if (s.suiteTop <= 0 || !fs::is_directory(s.suiteDir)) return out;
  // Candidates: the largest model file of each case, the 60 largest files.
  const auto files = sensode::bench::largestSuiteCaseFiles(s.suiteDir, 60);
  struct Candidate {
    std::size_t size;
    BenchModel m;
  };
  std::vector<Candidate> candidates;
  for (const auto& [id, path] : files) {
    try {
      const auto model = sensode::model::importSbmlFile(path);
      const auto tc = sensode::suite::loadTestCase(s.suiteDir, id, nullptr);
      if (tc.testType != "TimeCourse") continue;
      BenchModel m;
      m.name = "suite " + id;
      if (!s.only.empty() && m.name.find(s.only) == std::string::npos) continue;
      m.model = std::make_shared<const CompiledModel>(sensode::symbolic::buildOdeSystem(model));
      if (m.model->nx() == 0 || m.model->np() == 0) continue;
      m.times = tc.settings.outputTimes();
      candidates.push_back({model.species.size() + model.reactions.size(), std::move(m)});
    } catch (const std::exception&) {
      continue;  // unsupported feature or malformed: not a candidate
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.size > b.size; });
  for (auto& c : candidates) {
    if (static_cast<int>(out.size()) >= s.suiteTop) break;
    if (prepare(c.m, s.nativeTimeout, log)) out.push_back(std::move(c.m));
  }
  return out;
}

std::string fmt(const char* format, double v) {
  if (!std::isfinite(v)) return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

struct Row {
  std::string method;
  bool ok = true;
  std::string error;
  double wall = 0, err = 0;
  long steps = 0, rhs = 0, jac = 0, sens = 0;
  sensode::sensitivity::PeanoBakerStats pb;  // pbsr/exp only
};

// Up to k parameter ids spread evenly over `ids` (first and last included).
std::vector<std::string> spreadIds(const std::vector<std::string>& ids, std::size_t k) {
  std::vector<std::string> out;
  if (ids.empty()) return out;
  const std::size_t n = std::min(k, ids.size());
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(ids[n == 1 ? 0 : i * (ids.size() - 1) / (n - 1)]);
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + arg);
      return argv[++i];
    };
    if (arg == "--petab") s.petabDir = value();
    else if (arg == "--suite") s.suiteDir = value();
    else if (arg == "--suite-top") s.suiteTop = std::stoi(value());
    else if (arg == "--samples") s.samples = std::stoi(value());
    else if (arg == "--only") s.only = value();
    else if (arg == "--rtol") s.rtol = std::stod(value());
    else if (arg == "--native-timeout") s.nativeTimeout = std::stod(value());
    else if (arg == "--handover") {
      const std::string name = value();
      s.handover = sensode::integrators::sensitivityCorrectorFromString(name);
      if (!s.handover) throw std::runtime_error("unknown corrector " + name);
    } else if (arg == "--trajectory") {
      const std::string name = value();
      s.trajectory = sensode::integrators::methodFromString(name);
      if (!s.trajectory) throw std::runtime_error("unknown integrator " + name);
    } else if (arg == "--methods") {
      s.methods.clear();
      s.cvodesAugmented = false;
      for (const std::string& name : split(value(), ',')) {
        if (name == "cvodes-aug") {
          s.cvodesAugmented = true;
          continue;
        }
        const auto m = sensode::tasks::sensitivityMethodFromString(name);
        if (!m) throw std::runtime_error("unknown method " + name);
        s.methods.push_back(*m);
      }
    } else {
      std::cerr << "usage: bench_sensitivities [--petab DIR] [--suite DIR] [--suite-top K] "
                   "[--samples N] [--only SUBSTRING] [--methods "
                   "odesd,cvodes,cvodes-aug,pbsr,exp,fd] [--rtol R] [--handover CORRECTOR] "
                   "[--trajectory cvodes|odesd] [--native-timeout S]\n";
      return 2;
    }
  }

  std::ostringstream notes;
  std::vector<BenchModel> models = petabModels(s, notes);
  for (auto& m : suiteModels(s, notes)) models.push_back(std::move(m));

  std::cout << "rtol " << fmt("%.0e", s.rtol) << ", atol " << fmt("%.0e", s.atol)
            << " (fd: rtol 1e-12, atol 1e-20, δ = 1e-4·p); wall = median of " << s.samples
            << " samples; error vs CVODES forward at rtol 1e-10, atol 1e-16. Columns: f = "
               "right-hand sides (of the state pass for pbsr/exp), J = Newton Jacobians, sens = "
               "sensitivity evaluations (CVODES fS calls, odeSD sensitivity steps, PBSR/Exp "
               "(J, ∂f/∂p) pairs, FD perturbed right-hand sides)."
            << (s.trajectory ? std::string(" PBSR/Exp on the ") +
                                   sensode::integrators::toString(*s.trajectory) + " trajectory."
                             : std::string())
            << "\n\n";

  struct Summary {
    std::string name;
    int nx, np;
    std::size_t nt;
    double cvodes = NAN, odesd = NAN, odesdTc = NAN, cvodesTc = NAN, pbsr = NAN, exp = NAN,
           fd = NAN, cvodesAug = NAN;
    double errCvodes = NAN, errOdesd = NAN, errPbsr = NAN, errExp = NAN, errFd = NAN,
           errCvodesAug = NAN;
    // Median wall time with sensitivities to one parameter (kSingleParameters runs).
    double odesd1 = NAN, cvodes1 = NAN;
  };
  // The per-step cost of S grows with the number of parameters ns, so the overhead with every
  // parameter mixes a method's fixed cost with ns; one parameter at a time isolates the fixed
  // cost. Median over this many parameters spread over the model's list.
  constexpr std::size_t kSingleParameters = 5;
  std::vector<Summary> summaries;

  for (const BenchModel& m : models) {
    Summary sum{m.name, m.model->nx(), m.model->np(), m.times.size()};
    std::vector<double> p = sensode::tasks::resolveParameters(*m.model, m.overrides);
    std::vector<Row> rows;
    std::vector<std::string> allIds;
    struct Variant {
      std::string label;
      SensitivityMethod method;
      Correctors correctors;
      double* wall;
      double* err;
    };
    std::vector<Variant> variants;
    Correctors base;
    if (s.handover) base.handover = *s.handover;
    if (s.trajectory) base.trajectory = *s.trajectory;
    for (const SensitivityMethod method : s.methods) {
      const std::pair<double*, double*> slot =
          method == SensitivityMethod::Cvodes       ? std::pair{&sum.cvodes, &sum.errCvodes}
          : method == SensitivityMethod::OdeSd      ? std::pair{&sum.odesd, &sum.errOdesd}
          : method == SensitivityMethod::Pbsr       ? std::pair{&sum.pbsr, &sum.errPbsr}
          : method == SensitivityMethod::Exp        ? std::pair{&sum.exp, &sum.errExp}
                                                    : std::pair{&sum.fd, &sum.errFd};
      variants.push_back({sensode::tasks::toString(method), method, base, slot.first,
                          slot.second});
    }
    if (s.cvodesAugmented) {
      Correctors aug = base;
      aug.cvodes = SensitivityCorrector::Augmented;
      variants.push_back({"cvodes-aug", SensitivityMethod::Cvodes, aug, &sum.cvodesAug,
                          &sum.errCvodesAug});
    }
    for (const Variant& v : variants) {
      Row row;
      row.method = v.label;
      SensitivityResult r = runOnce(m, v.method, s.rtol, s.atol, v.correctors);
      if (r.termination != sensode::tasks::Termination::Success) {
        row.ok = false;
        row.error = r.message;
        rows.push_back(row);
        continue;
      }
      allIds = r.parameterIds;
      row.wall =
          medianSeconds([&] { runOnce(m, v.method, s.rtol, s.atol, v.correctors); }, s.samples);
      row.err = sensitivityError(r, m.ref, p, *m.model);
      row.steps = r.stats.integrator.steps;
      row.rhs = r.stats.integrator.rhsEvals;
      row.jac = r.stats.integrator.jacEvals;
      row.sens = r.stats.sensitivityEvals;
      row.pb = r.stats.peanoBaker;
      rows.push_back(row);
      *v.wall = row.wall;
      *v.err = row.err;
    }
    for (const auto method : {sensode::integrators::Method::Cvodes,
                              sensode::integrators::Method::OdeSd}) {
      Row row;
      row.method = std::string(sensode::integrators::toString(method)) + " (no S)";
      const auto r = timeCourseOnce(m, method, s.rtol, s.atol);
      if (r.termination != sensode::tasks::Termination::Success) {
        row.ok = false;
        row.error = r.message;
        rows.push_back(row);
        continue;
      }
      row.wall = medianSeconds([&] { timeCourseOnce(m, method, s.rtol, s.atol); }, s.samples);
      row.err = NAN;
      row.steps = r.stats.steps;
      row.rhs = r.stats.rhsEvals;
      row.jac = r.stats.jacEvals;
      rows.push_back(row);
      (method == sensode::integrators::Method::Cvodes ? sum.cvodesTc : sum.odesdTc) = row.wall;
    }
    for (const SensitivityMethod method : {SensitivityMethod::Cvodes, SensitivityMethod::OdeSd}) {
      if (std::find(s.methods.begin(), s.methods.end(), method) == s.methods.end()) continue;
      const std::vector<std::string> singles = spreadIds(allIds, kSingleParameters);
      std::vector<double> walls;
      long steps = 0;
      for (const std::string& id : singles) {
        const SensitivityResult r = runOnce(m, method, s.rtol, s.atol, base, {id});
        if (r.termination != sensode::tasks::Termination::Success) continue;
        steps += r.stats.integrator.steps;
        walls.push_back(medianSeconds(
            [&] { runOnce(m, method, s.rtol, s.atol, base, {id}); }, s.samples));
      }
      if (walls.empty()) continue;
      Row row;
      row.method = std::string(sensode::tasks::toString(method)) + " (1 parameter, median of " +
                   std::to_string(walls.size()) + ")";
      row.wall = median(walls);
      row.err = NAN;
      row.steps = steps / static_cast<long>(walls.size());  // mean over the parameters
      row.rhs = row.jac = row.sens = -1;                      // not reported
      rows.push_back(row);
      (method == SensitivityMethod::Cvodes ? sum.cvodes1 : sum.odesd1) = row.wall;
    }

    std::cout << "### " << m.name << " (nx " << m.model->nx() << ", np " << m.model->np()
              << ", " << m.times.size() << " output times to t = " << fmt("%g", m.times.back())
              << ")" << m.refNote << "\n\n";
    std::cout << "| method | wall [ms] | × cvodes | steps | f | J | sens | error |\n"
              << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Row& row : rows) {
      if (!row.ok) {
        std::string e = row.error.substr(0, 110);
        std::replace(e.begin(), e.end(), '|', '/');
        std::cout << "| " << row.method << " | failed: " << e << " | | | | | | |\n";
        continue;
      }
      auto count = [](long v) { return v < 0 ? std::string("–") : std::to_string(v); };
      std::cout << "| " << row.method << " | " << fmt("%.3g", 1e3 * row.wall) << " | "
                << fmt("%.2f", row.wall / sum.cvodes) << " | " << count(row.steps) << " | "
                << count(row.rhs) << " | " << count(row.jac) << " | " << count(row.sens) << " | "
                << fmt("%.1e", row.err) << " |\n";
    }
    std::cout << "\n";
    for (const Row& row : rows) {
      if (row.ok && row.pb.intervals > 0) {
        std::cout << row.method << ": " << row.pb.intervals << " intervals, "
                  << row.pb.exponentialSteps << " exponential steps, " << row.pb.expmEvaluations
                  << " exponentials computed, " << row.pb.expmShifted << " shifted, "
                  << row.pb.refinedIntervals << " refined\n";
      }
    }
    std::cout << "\n";
    std::cout.flush();
    summaries.push_back(sum);
  }

  std::cout << "### Summary: wall-time ratios (targets: odeSD/CVODES ≤ 0.4, odeSD overhead ≤ 3, "
               "Exp/CVODES ≤ 0.1) and errors\n\n"
            << "| model | nx | np | nt | CVODES fwd [ms] | odeSD / CVODES | odeSD overhead | "
               "odeSD overhead, 1 parameter | CVODES overhead | CVODES overhead, 1 parameter | "
               "CVODES aug / CVODES | PBSR / CVODES | Exp / CVODES | FD / CVODES | err CVODES | "
               "err odeSD | err CVODES aug | err PBSR | err Exp | err FD |\n"
            << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
               "---:|---:|---:|---:|\n";
  std::vector<double> rOdesd, rOverhead, rOverhead1, rCvOverhead, rCvOverhead1, rAug, rPbsr, rExp,
      rFd;
  auto keep = [](std::vector<double>& v, double x) {
    if (std::isfinite(x) && x > 0) v.push_back(x);
    return x;
  };
  for (const Summary& x : summaries) {
    std::cout << "| " << x.name << " | " << x.nx << " | " << x.np << " | " << x.nt << " | "
              << fmt("%.3g", 1e3 * x.cvodes) << " | "
              << fmt("%.2f", keep(rOdesd, x.odesd / x.cvodes)) << " | "
              << fmt("%.2f", keep(rOverhead, x.odesd / x.odesdTc)) << " | "
              << fmt("%.2f", keep(rOverhead1, x.odesd1 / x.odesdTc)) << " | "
              << fmt("%.2f", keep(rCvOverhead, x.cvodes / x.cvodesTc)) << " | "
              << fmt("%.2f", keep(rCvOverhead1, x.cvodes1 / x.cvodesTc)) << " | "
              << fmt("%.2f", keep(rAug, x.cvodesAug / x.cvodes)) << " | "
              << fmt("%.2f", keep(rPbsr, x.pbsr / x.cvodes)) << " | "
              << fmt("%.2f", keep(rExp, x.exp / x.cvodes)) << " | "
              << fmt("%.1f", keep(rFd, x.fd / x.cvodes)) << " | " << fmt("%.0e", x.errCvodes)
              << " | " << fmt("%.0e", x.errOdesd) << " | " << fmt("%.0e", x.errCvodesAug) << " | "
              << fmt("%.0e", x.errPbsr) << " | " << fmt("%.0e", x.errExp) << " | "
              << fmt("%.0e", x.errFd) << " |\n";
  }
  std::cout << "| geometric mean | | | | | " << fmt("%.2f", geometricMean(rOdesd)) << " | "
            << fmt("%.2f", geometricMean(rOverhead)) << " | "
            << fmt("%.2f", geometricMean(rOverhead1)) << " | "
            << fmt("%.2f", geometricMean(rCvOverhead)) << " | "
            << fmt("%.2f", geometricMean(rCvOverhead1)) << " | "
            << fmt("%.2f", geometricMean(rAug)) << " | " << fmt("%.2f", geometricMean(rPbsr))
            << " | " << fmt("%.2f", geometricMean(rExp)) << " | "
            << fmt("%.1f", geometricMean(rFd)) << " | | | | | | |\n\n";
  if (!notes.str().empty()) std::cout << notes.str() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_sensitivities: " << e.what() << "\n";
    return 1;
  }
}
