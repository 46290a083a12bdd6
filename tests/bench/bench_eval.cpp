// SPDX-License-Identifier: MIT
// Evaluation speed of the compiled tapes against the same computation compiled as C, and of
// the native evaluators CompiledModel switches to (core/symbolic/native_compiler.h).
//
// For each model the tapes of f, J = ∂f/∂x, a = ẍ and JJ = ∂a/∂x are emitted with
// Tape::emitCScratch, compiled by the system C compiler (`cc -O2 -shared -fPIC
// -ffp-contract=off`, override with $CC and $SENSODE_BENCH_CFLAGS) and loaded with dlopen: the C
// reference. The model's own native path compiles all of its tapes the same way in its
// background thread (into a fresh cache directory, so the compile time is real); the benchmark
// waits for it and reports its wall time. Three evaluators are then timed: the tape interpreter
// (Tape::interpret), the native path (Tape::evaluate, which dispatches to the loaded code) and
// the C reference called directly. Outputs are compared before anything is timed: C and native
// must equal the tape bit for bit ("mismatches" counts the outputs that do not). Timings are the
// median of several rounds of many repetitions, the three interleaved so drifting clock speeds
// hit all alike, measured in thread CPU time so that other processes on a shared machine do not
// count.
//
//   bench_eval [--petab DIR] [--network N,N,...] [--rounds K] [--round-seconds S] [--chunk N]
//              [--filter SUBSTRING] [--keep] [--native-timeout S]
//
// Prints one Markdown table (rows sorted by model size) and a summary line per quantity.
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/errors.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"
#include "tests/bench/network_generator.h"

#ifndef SENSODE_SHARED_DIR
#define SENSODE_SHARED_DIR "../shared"
#endif

namespace fs = std::filesystem;
using sensode::symbolic::CompiledModel;
using sensode::symbolic::Op;
using sensode::symbolic::Tape;

namespace {

using Clock = std::chrono::steady_clock;
using CFunction = sensode::symbolic::NativeFunction;  // (t, x, p, out, scratch)

const char* const kQuantities[] = {"f", "J", "a", "JJ"};
constexpr int kNumQuantities = 4;

struct Settings {
  fs::path petabDir = fs::path(SENSODE_SHARED_DIR) / "petab";
  std::vector<int> networkSizes = {250, 1000};
  int rounds = 7;
  double roundSeconds = 0.02;
  bool keep = false;  // keep the temporary C sources and libraries
  std::size_t chunkStatements = 100;
  double nativeTimeout = 1800;  // seconds to wait for the background compilation per model
  std::string filter;  // only models whose name contains this
};

// ---- the C reference -------------------------------------------------------------------------

// A temporary directory removed on destruction (unless kept).
class TempDir {
 public:
  explicit TempDir(bool keep) : keep_(keep) {
    std::string pattern = (fs::temp_directory_path() / "sensode-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!keep_) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool keep_;
};

class SharedLibrary {
 public:
  explicit SharedLibrary(const fs::path& file) : handle_(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  }
  ~SharedLibrary() { dlclose(handle_); }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  CFunction function(const std::string& name) const {
    void* sym = dlsym(handle_, name.c_str());
    if (!sym) throw std::runtime_error("dlsym " + name + ": " + dlerror());
    CFunction f;
    static_assert(sizeof(f) == sizeof(sym));
    std::memcpy(&f, &sym, sizeof(f));  // POSIX guarantees the object/function pointer round trip
    return f;
  }

 private:
  void* handle_;
};

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- timing ----------------------------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// CPU time of this thread: on a shared machine, time slices given to other processes do not count
// (wall-clock rounds there are mostly measuring the scheduler).
double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <class Call>
double secondsFor(const Call& call, long reps) {
  const double t0 = threadCpuSeconds();
  for (long r = 0; r < reps; ++r) call();
  return threadCpuSeconds() - t0;
}

// Median nanoseconds per call of each of `calls` over `rounds` interleaved rounds.
template <class Call>
std::vector<double> timeInterleaved(const std::vector<Call>& calls, const Settings& s) {
  long reps = 1;
  for (;;) {  // repetitions that make the slowest call take about roundSeconds
    double t = 0;
    for (const auto& c : calls) t = std::max(t, secondsFor(c, reps));
    if (t >= s.roundSeconds / 4 || reps > (1L << 40)) {
      reps = std::max(1L, static_cast<long>(s.roundSeconds / (t / static_cast<double>(reps))));
      break;
    }
    reps *= 4;
  }
  std::vector<std::vector<double>> samples(calls.size());
  for (int r = 0; r < s.rounds; ++r)
    for (std::size_t k = 0; k < calls.size(); ++k)
      samples[k].push_back(secondsFor(calls[k], reps) * 1e9 / static_cast<double>(reps));
  std::vector<double> out;
  for (auto& v : samples) out.push_back(median(v));
  return out;
}

// ---- one model -------------------------------------------------------------------------------

struct Row {
  std::string name;
  int nx = 0, np = 0;
  std::size_t nnzJ = 0, nnzJJ = 0;
  std::size_t instructions[kNumQuantities] = {};
  double tapeNs[kNumQuantities] = {}, cNs[kNumQuantities] = {},
         nativeNs[kNumQuantities] = {};  // nativeNs 0: no native code (see nativeNote)
  std::size_t cMismatches = 0, nativeMismatches = 0;  // outputs not bit-identical to the tape
  double cCompileSeconds = 0;
  double nativeCompileSeconds = 0;  // background job, wall clock: emit + compile + load
  std::size_t totalInstructions = 0;  // all tapes the native path compiles
  std::string nativeNote;  // why there is no native column, if there is none
};

bool sameValue(double u, double v) {
  return u == v || (std::isnan(u) && std::isnan(v));
}

Row benchmarkModel(const std::string& name, const fs::path& file, const Settings& settings) {
  const auto model = sensode::model::importSbmlFile(file);
  const auto compiled = std::make_unique<CompiledModel>(sensode::symbolic::buildOdeSystem(model));
  const CompiledModel& cm = *compiled;

  Row row;
  row.name = name;
  row.nx = cm.nx();
  row.np = cm.np();
  row.nnzJ = cm.jacobianPattern().nnz();
  row.nnzJJ = cm.jacobianOfSecondPattern().nnz();
  row.totalInstructions = cm.timings().tapeInstructions;

  std::map<std::string, const Tape*> byName;
  for (const auto& t : cm.tapes()) byName[t.name] = t.tape;
  const Tape* tapes[kNumQuantities];
  for (int q = 0; q < kNumQuantities; ++q) {
    tapes[q] = byName.at(kQuantities[q]);
    row.instructions[q] = tapes[q]->numInstructions();
  }

  // The realistic point: initial state at t = 0 for the nominal parameters.
  const std::vector<double> p = cm.nominalParameters();
  std::vector<double> x(static_cast<std::size_t>(cm.nx()));
  const double t = 0.0;
  cm.initialState(t, p.data(), x.data());

  // The C reference: emit, compile, load.
  TempDir dir(settings.keep);
  std::string source = Tape::cPrelude();
  for (int q = 0; q < kNumQuantities; ++q)
    source += tapes[q]->emitCScratch(std::string("sensode_") + kQuantities[q],
                                     settings.chunkStatements) + "\n";
  const fs::path cFile = dir.path() / "model.c", soFile = dir.path() / "model.so";
  std::ofstream(cFile) << source;
  const char* cc = std::getenv("CC");
  const char* flags = std::getenv("SENSODE_BENCH_CFLAGS");
  const std::string command = std::string(cc && *cc ? cc : "cc") + " " +
                              (flags && *flags ? flags : "-O2 -ffp-contract=off") +
                              " -shared -fPIC -o '" + soFile.string() + "' '" + cFile.string() +
                              "' -lm";
  const auto compileStart = Clock::now();
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("C compilation failed: " + command);
  row.cCompileSeconds = secondsSince(compileStart);
  SharedLibrary lib(soFile);

  // The native path: its background job started when the model was built (the reference
  // compilation above ran meanwhile, as a user's first integration would).
  if (cm.waitForNative(settings.nativeTimeout)) {
    row.nativeCompileSeconds = cm.nativeStatus().compileSeconds;
  } else {
    row.nativeNote = cm.nativeStatus().message;
  }

  for (int q = 0; q < kNumQuantities; ++q) {
    const Tape& tape = *tapes[q];
    const CFunction cf = lib.function(std::string("sensode_") + kQuantities[q]);
    const std::size_t n = std::max<std::size_t>(tape.numOutputs(), 1);
    std::vector<double> outTape(n), outC(n), outNative(n), scratch(std::max<std::size_t>(tape.numSlots(), 1));

    // Honesty check: same outputs, bit for bit.
    tape.interpret(t, x.data(), p.data(), outTape.data());
    cf(t, x.data(), p.data(), outC.data(), scratch.data());
    tape.evaluate(t, x.data(), p.data(), outNative.data());
    for (std::size_t i = 0; i < tape.numOutputs(); ++i) {
      row.cMismatches += !sameValue(outTape[i], outC[i]);
      row.nativeMismatches += !sameValue(outTape[i], outNative[i]);
    }

    using Call = std::function<void()>;
    std::vector<Call> calls = {
        [&] { tape.interpret(t, x.data(), p.data(), outTape.data()); },
        [&] { cf(t, x.data(), p.data(), outC.data(), scratch.data()); }};
    if (tape.isNative()) calls.push_back([&] { tape.evaluate(t, x.data(), p.data(), outNative.data()); });
    const std::vector<double> ns = timeInterleaved(calls, settings);
    row.tapeNs[q] = ns[0];
    row.cNs[q] = ns[1];
    row.nativeNs[q] = ns.size() > 2 ? ns[2] : 0;
  }
  return row;
}

// ---- report ----------------------------------------------------------------------------------

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string nanoseconds(double ns) {
  if (ns >= 1e6) return fmt("%.2f ms", ns * 1e-6);
  if (ns >= 1e4) return fmt("%.1f µs", ns * 1e-3);
  if (ns >= 1e3) return fmt("%.2f µs", ns * 1e-3);
  return fmt("%.0f ns", ns);
}

void printTable(const std::vector<Row>& rows) {
  std::cout << "| model | nx | np | nnz(J) | nnz(JJ) | instructions f / J / a / JJ "
               "| f: tape / native / C | J: tape / native / C | a: tape / native / C "
               "| JJ: tape / native / C | tape/C f, J, a, JJ | native/C f, J, a, JJ "
               "| mismatches C, native | C compile | native compile (all tapes) |\n"
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  auto ratios = [](const Row& r, const double* num) {
    if (num[0] == 0) return std::string("–");
    std::string s;
    for (int q = 0; q < kNumQuantities; ++q)
      s += (q ? ", " : "") + fmt("%.2f", num[q] / r.cNs[q]);
    return s;
  };
  for (const Row& r : rows) {
    std::cout << "| " << r.name << " | " << r.nx << " | " << r.np << " | " << r.nnzJ << " | "
              << r.nnzJJ << " | " << r.instructions[0] << " / " << r.instructions[1] << " / "
              << r.instructions[2] << " / " << r.instructions[3];
    for (int q = 0; q < kNumQuantities; ++q)
      std::cout << " | " << nanoseconds(r.tapeNs[q]) << " / "
                << (r.nativeNs[q] > 0 ? nanoseconds(r.nativeNs[q]) : std::string("–")) << " / "
                << nanoseconds(r.cNs[q]);
    std::cout << " | " << ratios(r, r.tapeNs) << " | " << ratios(r, r.nativeNs) << " | "
              << r.cMismatches << ", " << (r.nativeNs[0] > 0 ? std::to_string(r.nativeMismatches) : "–")
              << " | " << fmt("%.2f s", r.cCompileSeconds) << " | "
              << (r.nativeNs[0] > 0 ? fmt("%.2f s", r.nativeCompileSeconds) + " (" +
                                          std::to_string(r.totalInstructions) + " instr.)"
                                    : "– (" + r.nativeNote + ")")
              << " |\n";
  }
  std::cout << "\n";
  std::cout << "| quantity | geometric mean tape/C | worst tape/C (model) | tape within 3× on "
               "| geometric mean native/C | worst native/C (model) | native within 3× on |\n"
               "|---|--:|--:|--:|--:|--:|--:|\n";
  for (int q = 0; q < kNumQuantities; ++q) {
    std::cout << "| " << kQuantities[q];
    for (bool native : {false, true}) {
      double logSum = 0, worst = 0;
      std::string worstName;
      int within = 0, count = 0;
      for (const Row& r : rows) {
        const double num = native ? r.nativeNs[q] : r.tapeNs[q];
        if (num <= 0) continue;
        const double ratio = num / r.cNs[q];
        ++count;
        logSum += std::log(ratio);
        if (ratio > worst) {
          worst = ratio;
          worstName = r.name;
        }
        if (ratio <= 3.0) ++within;
      }
      if (count == 0) {
        std::cout << " | – | – | –";
        continue;
      }
      std::cout << " | " << fmt("%.2f×", std::exp(logSum / count)) << " | " << fmt("%.2f×", worst)
                << " (" << worstName << ") | " << within << " of " << count;
    }
    std::cout << " |\n";
  }
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
    else if (arg == "--network") s.networkSizes = parseSizes(value());
    else if (arg == "--rounds") s.rounds = std::stoi(value());
    else if (arg == "--round-seconds") s.roundSeconds = std::stod(value());
    else if (arg == "--keep") s.keep = true;
    else if (arg == "--filter") s.filter = value();
    else if (arg == "--chunk") s.chunkStatements = std::stoul(value());
    else if (arg == "--native-timeout") s.nativeTimeout = std::stod(value());
    else throw std::runtime_error("unknown argument " + arg);
  }

  // Every PEtab model plus the generated networks, benchmarked smallest first.
  struct Input {
    std::string name;
    fs::path file;
  };
  std::vector<Input> inputs;
  if (fs::is_directory(s.petabDir))
    for (const auto& problem : fs::directory_iterator(s.petabDir)) {
      if (!problem.is_directory()) continue;
      for (const auto& f : fs::directory_iterator(problem.path())) {
        const std::string fn = f.path().filename().string();
        if (fn.starts_with("model_") && fn.ends_with(".xml"))
          inputs.push_back({fn.substr(6, fn.size() - 10), f.path()});
      }
    }
  else
    std::cerr << "note: no PEtab folder at " << s.petabDir << "\n";
  // The native path compiles into a fresh cache (so its compile time is measured, not a cache
  // hit) and starts only when benchmarkModel() waits for it, after the C reference is built.
  TempDir cache(false);
  setenv("SENSODE_CACHE_DIR", cache.path().c_str(), 1);
  setenv("SENSODE_NATIVE_DELAY", "1e9", 1);
  TempDir networks(false);
  for (int n : s.networkSizes) {
    const fs::path file = networks.path() / ("network_" + std::to_string(n) + ".xml");
    sensode::bench::NetworkOptions opt;
    opt.species = n;
    sensode::bench::writeMassActionNetwork(opt, file);
    inputs.push_back({"generated mass-action " + std::to_string(n), file});
  }

  std::vector<Row> rows;
  for (const Input& in : inputs) {
    if (!s.filter.empty() && in.name.find(s.filter) == std::string::npos) continue;
    std::cerr << "bench_eval: " << in.name << " ..." << std::flush;
    const auto t0 = Clock::now();
    try {
      rows.push_back(benchmarkModel(in.name, in.file, s));
      std::cerr << fmt(" %.1f s", secondsSince(t0));
      if (rows.back().cMismatches || rows.back().nativeMismatches)
        std::cerr << "  (outputs differ from the tape: C " << rows.back().cMismatches
                  << ", native " << rows.back().nativeMismatches << ")";
      std::cerr << "\n";
    } catch (const std::exception& e) {
      std::cerr << " skipped: " << e.what() << "\n";
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.nx, a.nnzJJ, a.name) < std::tie(b.nx, b.nnzJJ, b.name);
  });
  if (rows.empty()) {
    std::cerr << "bench_eval: nothing to benchmark\n";
    return 1;
  }
  printTable(rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_eval: " << e.what() << "\n";
    return 1;
  }
}
