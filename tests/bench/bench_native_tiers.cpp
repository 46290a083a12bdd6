// SPDX-License-Identifier: MIT
// Compile latency against evaluation cost of the native evaluators' candidate tiers, by model
// size (issue 13): what decides which compilers core/symbolic/native_compiler.h runs, and when.
//
// Per model: load (import, ODE, derivatives, tapes; SENSODE_NATIVE=0 so that no background job
// competes), emit all fourteen tapes as one C unit (emitNativeSource, exactly what the product
// compiles), then compile it with
//   tcc       libtcc in memory (TccModule, the product's quick tier)
//   cc -O0 / -O1 / -O2   the system compiler, `-shared -fPIC -ffp-contract=off`, then dlopen
// and time evaluations of f (the right-hand side) and J_JJ (odeSD's Newton-matrix pair) with
// each, and with the tape interpreter. Load, emission and tcc times are thread CPU time of one
// run; cc times are wall time of one compilation (the machine is shared: read them as orders of
// magnitude); evaluation times are thread CPU time, median of 5 rounds. Every tier's outputs are compared with the interpreter's bit for bit.
// The last column is the product's own path: wall time from the end of loading until f runs
// native code (NativeCompiler's early units through tcc on its background thread).
//
//   bench_native_tiers [--sizes 10,30,100,...] [--cc-max-instructions N] [MODEL.xml ...]
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/native_compiler.h"
#include "core/symbolic/tcc_jit.h"
#include "tests/bench/network_generator.h"

namespace fs = std::filesystem;
using namespace sensode;
using namespace sensode::symbolic;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

// Seconds per call of `call`, median of 5 rounds of ~20 ms.
template <class F>
double timePerCall(F&& call) {
  long reps = 1;
  for (;;) {
    const double t0 = threadCpuSeconds();
    for (long r = 0; r < reps; ++r) call();
    if (threadCpuSeconds() - t0 > 0.02 || reps > (1L << 26)) break;
    reps *= 2;
  }
  std::vector<double> rounds;
  for (int k = 0; k < 5; ++k) {
    const double t0 = threadCpuSeconds();
    for (long r = 0; r < reps; ++r) call();
    rounds.push_back((threadCpuSeconds() - t0) / static_cast<double>(reps));
  }
  return median(rounds);
}

std::string fmtTime(double s) {
  char b[32];
  if (!std::isfinite(s)) return "–";
  if (s < 1e-6) std::snprintf(b, sizeof b, "%.0f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(b, sizeof b, "%.1f µs", s * 1e6);
  else if (s < 1) std::snprintf(b, sizeof b, "%.1f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

struct Tier {
  std::string name;
  double compileSeconds = NAN;
  NativeFunction f = nullptr, pair = nullptr;
  std::shared_ptr<void> owner;
  std::string error;
};

Tier compileWithCc(const std::string& source, const std::string& opt, std::size_t fIndex,
                   std::size_t pairIndex) {
  Tier tier;
  tier.name = "cc " + opt;
  const fs::path dir = fs::temp_directory_path() / ("sensode-tiers-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path c = dir / "m.c", so = dir / ("m" + opt + ".so");
  std::ofstream(c) << source;
  const std::string cmd = "cc " + opt + " -shared -fPIC -ffp-contract=off -o " + so.string() +
                          " " + c.string() + " -lm";
  const auto t0 = Clock::now();
  if (std::system(cmd.c_str()) != 0) {
    tier.error = "cc failed";
    return tier;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  tier.compileSeconds = secondsSince(t0);
  if (!h) {
    tier.error = dlerror();
    return tier;
  }
  tier.owner = std::shared_ptr<void>(h, [](void* p) { dlclose(p); });
  auto sym = [&](std::size_t i) {
    void* s = dlsym(h, nativeSymbol(i).c_str());
    NativeFunction fn;
    std::memcpy(&fn, &s, sizeof fn);
    return fn;
  };
  tier.f = sym(fIndex);
  tier.pair = sym(pairIndex);
  fs::remove_all(dir);
  return tier;
}

struct Input {
  std::string name;
  std::string xml;  // SBML text
};

// The product's path (native_compiler.h) from the end of loading: wall time until f runs tcc's
// code (the early units: f, x0, y, compiled alone on the background thread), and the size of
// their C. A fresh cache, no optimised tier (start delay beyond the run).
std::string firstNative(const Input& in) {
  const fs::path cache = fs::temp_directory_path() / ("sensode-bench-first-" + std::to_string(getpid()));
  setenv("SENSODE_NATIVE", "1", 1);
  setenv("SENSODE_NATIVE_DELAY", "3600", 1);
  setenv("SENSODE_CACHE_DIR", cache.c_str(), 1);
  std::string cell;
  {
    const auto model = std::make_unique<CompiledModel>(
        buildOdeSystem(model::importSbmlString(in.xml, in.name)));
    const auto loaded = Clock::now();
    const Tape* f = nullptr;
    for (const auto& named : model->tapes())
      if (named.name == "f") f = named.tape;
    while (!f->isNative() && secondsSince(loaded) < 30)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    const double waited = secondsSince(loaded);
    // The status carries the compiler's own figure once its quick tier is through.
    while (model->nativeStatus().firstNativeSeconds < 0 && secondsSince(loaded) < 30)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const NativeStatus st = model->nativeStatus();
    std::ostringstream c;
    c << (f->isNative() ? fmtTime(waited) : "not native") << " (" << st.firstSourceBytes / 1024
      << " kB)";
    cell = c.str();
  }
  std::error_code ec;
  fs::remove_all(cache, ec);
  setenv("SENSODE_NATIVE", "0", 1);
  return cell;
}

void run(const Input& in, std::size_t ccMaxInstructions) {
  const double t0 = threadCpuSeconds();
  const auto model = std::make_unique<CompiledModel>(
      buildOdeSystem(model::importSbmlString(in.xml, in.name)));
  const double loadSeconds = threadCpuSeconds() - t0;
  std::vector<const Tape*> tapes;
  std::size_t fIndex = 0, pairIndex = 0;
  for (const auto& named : model->tapes()) {
    if (named.name == "f") fIndex = tapes.size();
    if (named.name == "J_JJ") pairIndex = tapes.size();
    tapes.push_back(named.tape);
  }
  const Tape& fTape = *tapes[fIndex];
  const Tape& pairTape = *tapes[pairIndex];
  double t1 = threadCpuSeconds();
  const std::string source = emitNativeSource(tapes);
  const double emitSeconds = threadCpuSeconds() - t1;

  std::vector<Tier> tiers;
  {
    Tier tcc;
    tcc.name = "tcc";
    t1 = threadCpuSeconds();
    auto module = TccModule::compile(source, tcc.error);
    tcc.compileSeconds = threadCpuSeconds() - t1;
    if (module) {
      tcc.f = module->function(nativeSymbol(fIndex));
      tcc.pair = module->function(nativeSymbol(pairIndex));
      tcc.owner = module;
    }
    tiers.push_back(std::move(tcc));
  }
  const std::size_t instructions = model->timings().tapeInstructions;
  for (const char* opt : {"-O0", "-O1", "-O2"})
    if (instructions <= ccMaxInstructions)
      tiers.push_back(compileWithCc(source, opt, fIndex, pairIndex));

  const std::vector<double> p = model->nominalParameters();
  std::vector<double> x(static_cast<std::size_t>(model->nx()));
  model->initialState(0.0, p.data(), x.data());
  std::vector<double> fRef(fTape.numOutputs() + 1), pairRef(pairTape.numOutputs() + 1),
      out(std::max(fRef.size(), pairRef.size())),
      scratch(std::max(fTape.numSlots(), pairTape.numSlots()) + 1);
  fTape.interpret(0.0, x.data(), p.data(), fRef.data());
  pairTape.interpret(0.0, x.data(), p.data(), pairRef.data());
  const double fInterp = timePerCall([&] { fTape.interpret(0.0, x.data(), p.data(), out.data()); });
  const double pairInterp =
      timePerCall([&] { pairTape.interpret(0.0, x.data(), p.data(), out.data()); });

  std::ostringstream row;
  row << "| " << in.name << " | " << model->nx() << " | " << instructions << " | "
      << source.size() / 1024 << " kB | " << fmtTime(loadSeconds) << " | " << fmtTime(emitSeconds)
      << " | " << fmtTime(fInterp) << " / " << fmtTime(pairInterp);
  std::size_t mismatches = 0;
  for (const Tier& tier : tiers) {
    if (!tier.f || !tier.pair) {
      row << " | " << tier.name << " failed: " << tier.error;
      continue;
    }
    auto check = [&](NativeFunction fn, const std::vector<double>& ref, std::size_t n) {
      fn(0.0, x.data(), p.data(), out.data(), scratch.data());
      for (std::size_t i = 0; i < n; ++i)
        mismatches += std::memcmp(&out[i], &ref[i], sizeof(double)) != 0 &&
                      !(std::isnan(out[i]) && std::isnan(ref[i]));
    };
    check(tier.f, fRef, fTape.numOutputs());
    check(tier.pair, pairRef, pairTape.numOutputs());
    const double fT = timePerCall([&] { tier.f(0.0, x.data(), p.data(), out.data(), scratch.data()); });
    const double pT = timePerCall([&] { tier.pair(0.0, x.data(), p.data(), out.data(), scratch.data()); });
    row << " | " << fmtTime(tier.compileSeconds) << "; " << fmtTime(fT) << " / " << fmtTime(pT);
  }
  for (std::size_t k = tiers.size(); k < 4; ++k) row << " | –";
  row << " | " << mismatches << " | " << firstNative(in) << " |";
  std::cout << row.str() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  sensode::symbolic::installTccBackend();
  setenv("SENSODE_NATIVE", "0", 1);
  std::vector<int> sizes = {10, 30, 100, 300, 1000, 2000};
  std::size_t ccMax = 200000;
  std::vector<Input> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string s; std::getline(ss, s, ',');) sizes.push_back(std::stoi(s));
    } else if (a == "--cc-max-instructions" && i + 1 < argc) {
      ccMax = std::stoul(argv[++i]);
    } else {
      std::ifstream f(a);
      std::stringstream text;
      text << f.rdbuf();
      inputs.push_back({fs::path(a).stem().string(), text.str()});
    }
  }
  for (int n : sizes) {
    bench::NetworkOptions o;
    o.species = n;
    inputs.push_back({"network " + std::to_string(n), bench::generateMassActionNetwork(o)});
  }
  std::cout << "| model | nx | tape instr. | C | load | emit C | interpreter f / J_JJ | tcc: compile; f / J_JJ"
               " | cc -O0 | cc -O1 | cc -O2 | mismatches | first native f (wall from loading; early C) |\n"
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const Input& in : inputs) {
    try {
      run(in, ccMax);
    } catch (const std::exception& e) {
      std::cout << "| " << in.name << " | failed: " << e.what() << " |\n";
    }
  }
}
