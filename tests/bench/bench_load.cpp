// SPDX-License-Identifier: MIT
// Load time: SBML import, ODE building, symbolic differentiation and tape compilation, per model.
//
// Stages, each timed on its own:
//   import       sensode::model::importSbmlFile (libSBML parse, checks, conversion to Model)
//   ODE          sensode::symbolic::buildOdeSystem (SBML semantics → f(t, x, p))
//   derivatives  CompiledModel construction, symbolic part (J, fp, a, JJ, ap, S0): timings()
//   tapes        CompiledModel construction, compilation of all tapes: timings()
// Models: every PEtab model_*.xml, the 10 largest SBML Test Suite models that load (by
// species + reactions; cases using an unsupported feature are skipped), and generated
// mass-action networks (tests/bench/network_generator.h) written to a temporary folder and loaded
// through the same importSbmlFile path. Each model is loaded `--repeats` times (default 3) and
// the run with the median total is reported. Times are thread CPU time, so other processes on a
// shared machine do not count; the derivatives/tapes split of CompiledModel's CPU time follows
// the wall-clock split its timings() report.
//
//   bench_load [--petab DIR] [--suite DIR] [--sizes N,N,...] [--suite-top K] [--repeats R]
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "tests/bench/network_generator.h"
#include "tests/bench/suite_files.h"

#ifndef SENSODE_SHARED_DIR
#define SENSODE_SHARED_DIR "../shared"
#endif

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  fs::path petabDir = fs::path(SENSODE_SHARED_DIR) / "petab";
  fs::path suiteDir = fs::path(SENSODE_SHARED_DIR) / "sbml-test-suite" / "cases";
  std::vector<int> sizes = {250, 500, 1000, 2000, 4000};
  int suiteTop = 10;
  int repeats = 3;
};

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

struct Load {
  std::string name;
  int species = 0, reactions = 0;
  int nx = 0, np = 0;
  std::size_t nnzJ = 0, nnzJJ = 0, instructions = 0, poolNodes = 0;
  double importS = 0, odeS = 0, derivS = 0, tapeS = 0;
  double total() const { return importS + odeS + derivS + tapeS; }
};

// CPU time of this thread: on a shared machine, time slices given to other processes do not count.
double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Load loadOnce(const std::string& name, const fs::path& file) {
  Load l;
  l.name = name;
  double t0 = threadCpuSeconds();
  const auto model = sensode::model::importSbmlFile(file);
  l.importS = threadCpuSeconds() - t0;
  l.species = static_cast<int>(model.species.size());
  l.reactions = static_cast<int>(model.reactions.size());
  t0 = threadCpuSeconds();
  auto system = sensode::symbolic::buildOdeSystem(model);
  l.odeS = threadCpuSeconds() - t0;
  t0 = threadCpuSeconds();
  const sensode::symbolic::CompiledModel cm(std::move(system));
  const double compileS = threadCpuSeconds() - t0;
  // CompiledModel reports its two phases in wall-clock time; split its CPU time in that ratio.
  const double wallD = cm.timings().derivativeSeconds, wallT = cm.timings().tapeSeconds;
  const double derivShare = wallD + wallT > 0 ? wallD / (wallD + wallT) : 0.5;
  l.derivS = compileS * derivShare;
  l.tapeS = compileS - l.derivS;
  l.nx = cm.nx();
  l.np = cm.np();
  l.nnzJ = cm.jacobianPattern().nnz();
  l.nnzJJ = cm.jacobianOfSecondPattern().nnz();
  l.instructions = cm.timings().tapeInstructions;
  l.poolNodes = cm.system().pool->size();
  return l;
}

// The run with the median total of `repeats` loads.
Load load(const std::string& name, const fs::path& file, int repeats) {
  std::vector<Load> runs;
  for (int r = 0; r < std::max(1, repeats); ++r) runs.push_back(loadOnce(name, file));
  std::sort(runs.begin(), runs.end(), [](const Load& a, const Load& b) { return a.total() < b.total(); });
  return runs[runs.size() / 2];
}

std::string ms(double s) { return s >= 10 ? fmt("%.1f s", s) : fmt("%.1f ms", s * 1e3); }

void printHeader() {
  std::cout << "| model | species | reactions | nx | np | nnz(J) | nnz(JJ) | expression nodes "
               "| tape instructions | import | ODE | derivatives | tapes | total |\n"
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
}

void printRow(const Load& l) {
  std::cout << "| " << l.name << " | " << l.species << " | " << l.reactions << " | " << l.nx
            << " | " << l.np << " | " << l.nnzJ << " | " << l.nnzJJ << " | " << l.poolNodes
            << " | " << l.instructions << " | " << ms(l.importS) << " | " << ms(l.odeS) << " | "
            << ms(l.derivS) << " | " << ms(l.tapeS) << " | " << ms(l.total()) << " |\n";
}

void printTable(const std::string& title, std::vector<Load> loads) {
  std::sort(loads.begin(), loads.end(), [](const Load& a, const Load& b) {
    return std::tie(a.nx, a.instructions, a.name) < std::tie(b.nx, b.instructions, b.name);
  });
  std::cout << "### " << title << "\n\n";
  printHeader();
  for (const Load& l : loads) printRow(l);
  std::cout << "\n";
}

// Least-squares slope of log(y) against log(x).
double logLogSlope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

std::vector<int> parseSizes(const std::string& list) {
  std::vector<int> sizes;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) sizes.push_back(std::stoi(item));
  return sizes;
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
    else if (arg == "--sizes") s.sizes = parseSizes(value());
    else if (arg == "--suite-top") s.suiteTop = std::stoi(value());
    else if (arg == "--repeats") s.repeats = std::stoi(value());
    else throw std::runtime_error("unknown argument " + arg);
  }

  // ---- PEtab ----
  std::vector<Load> petab;
  if (fs::is_directory(s.petabDir)) {
    for (const auto& problem : fs::directory_iterator(s.petabDir)) {
      if (!problem.is_directory()) continue;
      for (const auto& f : fs::directory_iterator(problem.path())) {
        const std::string fn = f.path().filename().string();
        if (!fn.starts_with("model_") || !fn.ends_with(".xml")) continue;
        const std::string name = fn.substr(6, fn.size() - 10);
        try {
          petab.push_back(load(name, f.path(), s.repeats));
        } catch (const std::exception& e) {
          std::cerr << "bench_load: " << name << " skipped: " << e.what() << "\n";
        }
      }
    }
  }
  if (!petab.empty()) printTable("PEtab models (" + s.petabDir.string() + ")", petab);

  // ---- SBML Test Suite: size every case that imports, load the largest ----
  if (s.suiteTop > 0) {
    const auto files = sensode::bench::suiteCaseFiles(s.suiteDir);
    struct Sized {
      int size;
      std::string id;
      fs::path file;
    };
    std::vector<Sized> sized;
    int unsupported = 0, failed = 0;
    const auto scanStart = Clock::now();
    for (const auto& [id, file] : files) {
      try {
        const auto m = sensode::model::importSbmlFile(file);
        sized.push_back({static_cast<int>(m.species.size() + m.reactions.size()), id, file});
      } catch (const sensode::UnsupportedFeature&) {
        ++unsupported;
      } catch (const std::exception&) {
        ++failed;
      }
    }
    const double scanS = secondsSince(scanStart);
    std::sort(sized.begin(), sized.end(), [](const Sized& a, const Sized& b) {
      return a.size != b.size ? a.size > b.size : a.id < b.id;
    });
    std::vector<Load> suite;
    for (const Sized& c : sized) {
      if (static_cast<int>(suite.size()) >= s.suiteTop) break;
      try {
        suite.push_back(load(c.id + " (" + c.file.filename().string() + ")", c.file, s.repeats));
      } catch (const sensode::UnsupportedFeature& e) {
        ++unsupported;
      } catch (const std::exception& e) {
        std::cerr << "bench_load: " << c.id << " skipped: " << e.what() << "\n";
      }
    }
    if (!suite.empty()) {
      printTable("SBML Test Suite: the " + std::to_string(suite.size()) +
                     " largest cases that load (by species + reactions)",
                 suite);
      std::cout << "Scanned " << files.size() << " cases in " << fmt("%.1f s", scanS) << " ("
                << fmt("%.1f ms", scanS * 1e3 / std::max<std::size_t>(1, files.size()))
                << " per import): " << sized.size() << " import, " << unsupported
                << " use an unsupported feature, " << failed << " fail to import.\n\n";
    }
  }

  // ---- generated networks ----
  if (!s.sizes.empty()) {
    std::string pattern = (fs::temp_directory_path() / "sensode-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
    const fs::path dir = pattern;
    std::vector<Load> series;
    std::vector<double> fileBytes;
    for (int n : s.sizes) {
      sensode::bench::NetworkOptions opt;
      opt.species = n;
      const fs::path file = dir / ("network_" + std::to_string(n) + ".xml");
      sensode::bench::writeMassActionNetwork(opt, file);
      fileBytes.push_back(static_cast<double>(fs::file_size(file)));
      std::cerr << "bench_load: network " << n << " ..." << std::flush;
      series.push_back(load("generated mass-action " + std::to_string(n), file, s.repeats));
      std::cerr << " " << ms(series.back().total()) << "\n";
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    printTable("Generated mass-action networks (~2 reactions per species, seed " +
                   std::to_string(sensode::bench::NetworkOptions{}.seed) + ")",
               series);

    std::cout << "| species | SBML size | import / species | ODE / species | derivatives / species "
                 "| tapes / species | total / species | total < 1 s |\n"
                 "|--:|--:|--:|--:|--:|--:|--:|:-:|\n";
    std::vector<double> n, tImport, tOde, tDeriv, tTape, tTotal;
    for (std::size_t i = 0; i < series.size(); ++i) {
      const Load& l = series[i];
      const double sp = l.species;
      std::cout << "| " << l.species << " | " << fmt("%.0f kB", fileBytes[i] / 1024) << " | "
                << fmt("%.1f µs", l.importS / sp * 1e6) << " | " << fmt("%.1f µs", l.odeS / sp * 1e6)
                << " | " << fmt("%.1f µs", l.derivS / sp * 1e6) << " | "
                << fmt("%.1f µs", l.tapeS / sp * 1e6) << " | " << fmt("%.1f µs", l.total() / sp * 1e6)
                << " | " << (l.total() < 1.0 ? "yes" : "no") << " |\n";
      n.push_back(sp);
      tImport.push_back(l.importS);
      tOde.push_back(l.odeS);
      tDeriv.push_back(l.derivS);
      tTape.push_back(l.tapeS);
      tTotal.push_back(l.total());
    }
    if (series.size() >= 2) {
      std::cout << "\nGrowth exponent (least-squares slope of log time against log species; 1 = "
                   "linear): import "
                << fmt("%.2f", logLogSlope(n, tImport)) << ", ODE " << fmt("%.2f", logLogSlope(n, tOde))
                << ", derivatives " << fmt("%.2f", logLogSlope(n, tDeriv)) << ", tapes "
                << fmt("%.2f", logLogSlope(n, tTape)) << ", **total "
                << fmt("%.2f", logLogSlope(n, tTotal)) << "**.\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_load: " << e.what() << "\n";
    return 1;
  }
}
