// SPDX-License-Identifier: MIT
// Evaluation speed of the compiled tapes against the same computation compiled as C.
//
// For each model the tapes of f, J = ∂f/∂x, a = ẍ and JJ = ∂a/∂x are emitted with
// Tape::emitC, compiled by the system C compiler (`cc -O2 -shared -fPIC`, override with $CC and
// $SENSODE_BENCH_CFLAGS) and loaded with dlopen; the emitted statements are only regrouped (SSA
// form, chunks; see restructureEmittedC) so that the compiler copes with very large models. Both
// evaluate at the initial state with the
// nominal parameters; their outputs are compared (max abs difference) before anything is timed,
// so the two compute the same thing. Timings are the median of several rounds of many
// repetitions, tape and C rounds interleaved so drifting clock speeds hit both alike, measured
// in thread CPU time so that other processes on a shared machine do not count.
//
//   bench_eval [--petab DIR] [--network N,N,...] [--rounds K] [--round-seconds S] [--chunk N]
//              [--filter SUBSTRING] [--keep]
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
using CFunction = void (*)(double, const double*, const double*, double*);

const char* const kQuantities[] = {"f", "J", "a", "JJ"};
constexpr int kNumQuantities = 4;

struct Settings {
  fs::path petabDir = fs::path(SENSODE_SHARED_DIR) / "petab";
  std::vector<int> networkSizes = {250, 1000};
  int rounds = 7;
  double roundSeconds = 0.02;
  bool keep = false;  // keep the temporary C sources and libraries
  std::size_t chunkStatements = 100;
  std::string filter;  // only models whose name contains this
};

// ---- the C reference -------------------------------------------------------------------------

// C bodies of the functions the emitted code calls through sensode_unary/sensode_binary, with
// the semantics of applyOp (core/symbolic/expression.cpp). Generated from the Op enum so the
// numbers cannot drift; static inline with a constant op, so the C compiler folds the switch.
std::string cPrelude() {
  const std::pair<Op, const char*> unary[] = {
      {Op::Exp, "exp(x)"},          {Op::Log, "log(x)"},          {Op::Sin, "sin(x)"},
      {Op::Cos, "cos(x)"},          {Op::Tan, "tan(x)"},          {Op::Sec, "1.0 / cos(x)"},
      {Op::Csc, "1.0 / sin(x)"},    {Op::Cot, "1.0 / tan(x)"},    {Op::Sinh, "sinh(x)"},
      {Op::Cosh, "cosh(x)"},        {Op::Tanh, "tanh(x)"},        {Op::Sech, "1.0 / cosh(x)"},
      {Op::Csch, "1.0 / sinh(x)"},  {Op::Coth, "1.0 / tanh(x)"},  {Op::ArcSin, "asin(x)"},
      {Op::ArcCos, "acos(x)"},      {Op::ArcTan, "atan(x)"},      {Op::ArcSec, "acos(1.0 / x)"},
      {Op::ArcCsc, "asin(1.0 / x)"}, {Op::ArcCot, "atan(1.0 / x)"}, {Op::ArcSinh, "asinh(x)"},
      {Op::ArcCosh, "acosh(x)"},    {Op::ArcTanh, "atanh(x)"},    {Op::ArcSech, "acosh(1.0 / x)"},
      {Op::ArcCsch, "asinh(1.0 / x)"}, {Op::ArcCoth, "atanh(1.0 / x)"}, {Op::Abs, "fabs(x)"},
      {Op::Floor, "floor(x)"},      {Op::Ceil, "ceil(x)"},        {Op::Factorial, "tgamma(x + 1.0)"},
      {Op::Sign, "x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0)"},          {Op::Not, "x == 0.0 ? 1.0 : 0.0"},
  };
  const std::pair<Op, const char*> binary[] = {
      {Op::Pow, "pow(a, b)"}, {Op::Rem, "fmod(a, b)"}, {Op::Quotient, "trunc(a / b)"},
      {Op::Lt, "a < b"},      {Op::Le, "a <= b"},      {Op::Gt, "a > b"},
      {Op::Ge, "a >= b"},     {Op::Eq, "a == b"},      {Op::Ne, "a != b"},
  };
  std::ostringstream c;
  c << "#include <math.h>\n"
       "/* Tape::emitC prints non-finite constants as nan / inf. */\n"
       "#define nan NAN\n#define inf INFINITY\n"
       "static inline double sensode_unary(int op, double x) {\n  switch (op) {\n";
  for (const auto& [op, body] : unary)
    c << "    case " << static_cast<int>(op) << ": return " << body << ";\n";
  c << "    default: return NAN;\n  }\n}\n"
       "static inline double sensode_binary(int op, double a, double b) {\n  switch (op) {\n";
  for (const auto& [op, body] : binary)
    c << "    case " << static_cast<int>(op) << ": return " << body << ";\n";
  c << "    default: return NAN;\n  }\n}\n\n";
  return c.str();
}

// Tape::emitC writes one function whose statements all go through one local slot array. GCC and
// Clang need minutes for -O2 on such functions once they reach tens of thousands of statements
// (alias walking over the array is quadratic), so the reference rewrites them first, without
// changing a single operation: each assignment becomes its own `const double` (SSA form, so the
// compiler sees plain values instead of memory), and bodies of more than 1000 statements are cut
// into chunks of `chunkStatements` (compile time is then linear, about 0.6 ms per statement);
// only values read in a later chunk go through the slot array.
std::string restructureEmittedC(const std::string& emitted, std::size_t chunkStatements) {
  std::vector<std::string> lines;
  {
    std::istringstream in(emitted);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  auto fail = [](const std::string& line) -> std::runtime_error {
    return std::runtime_error("unexpected line in Tape::emitC output: " + line.substr(0, 80));
  };
  if (lines.size() < 3 || !lines[0].starts_with("void ") || !lines[1].starts_with("  double s[") ||
      lines.back() != "}")
    throw fail(lines.empty() ? std::string() : lines[0]);
  const std::string name = lines[0].substr(5, lines[0].find('(') - 5);

  // Statements as text pieces around references to earlier values (versions).
  struct Statement {
    bool toOut = false;
    std::uint32_t target = 0;  // out index, or the version this statement defines
    std::vector<std::string> text;   // text.size() == refs.size() + 1
    std::vector<std::uint32_t> refs;  // versions read
  };
  std::vector<Statement> statements;
  std::vector<std::uint32_t> versionSlot, currentVersion;
  auto parseIndex = [&](const std::string& l, std::size_t& pos) {
    std::size_t end = pos;
    while (end < l.size() && std::isdigit(static_cast<unsigned char>(l[end]))) ++end;
    if (end == pos || end >= l.size() || l[end] != ']') throw fail(l);
    const auto v = static_cast<std::uint32_t>(std::stoul(l.substr(pos, end - pos)));
    pos = end + 1;
    return v;
  };
  for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.starts_with("  (void)")) continue;
    Statement st;
    std::size_t pos;
    if (l.starts_with("  s[")) {
      pos = 4;
    } else if (l.starts_with("  out[")) {
      pos = 6;
      st.toOut = true;
    } else {
      throw fail(l);
    }
    const std::uint32_t lhs = parseIndex(l, pos);
    if (l.compare(pos, 3, " = ") != 0 || l.back() != ';') throw fail(l);
    pos += 3;
    const std::size_t stop = l.size() - 1;
    std::string text;
    while (pos < stop) {
      const bool ref = l.compare(pos, 2, "s[") == 0 &&
                       (pos == 0 || !(std::isalnum(static_cast<unsigned char>(l[pos - 1])) ||
                                      l[pos - 1] == '_'));
      if (!ref) {
        text += l[pos++];
        continue;
      }
      pos += 2;
      const std::uint32_t slot = parseIndex(l, pos);
      if (slot >= currentVersion.size() || currentVersion[slot] == UINT32_MAX) {
        // Never assigned: a constant 0, which emitC leaves out (the tape's slots start at 0).
        text += "0.0";
        continue;
      }
      st.text.push_back(std::move(text));
      text.clear();
      st.refs.push_back(currentVersion[slot]);
    }
    st.text.push_back(std::move(text));
    if (st.toOut) {
      st.target = lhs;
    } else {
      st.target = static_cast<std::uint32_t>(versionSlot.size());
      versionSlot.push_back(lhs);
      if (currentVersion.size() <= lhs) currentVersion.resize(lhs + 1, UINT32_MAX);
      currentVersion[lhs] = st.target;
    }
    statements.push_back(std::move(st));
  }

  // Which versions are read outside the chunk that defines them. Functions of up to
  // `kSingleChunk` statements stay whole (they compile in about a second).
  constexpr std::size_t kSingleChunk = 1000;
  const std::size_t chunk = statements.size() <= kSingleChunk
                                ? std::max<std::size_t>(1, statements.size())
                                : std::max<std::size_t>(1, chunkStatements);
  std::vector<std::size_t> defChunk(versionSlot.size());
  std::vector<bool> stored(versionSlot.size(), false);
  for (std::size_t k = 0; k < statements.size(); ++k) {
    if (!statements[k].toOut) defChunk[statements[k].target] = k / chunk;
    for (std::uint32_t v : statements[k].refs)
      if (defChunk[v] != k / chunk) stored[v] = true;
  }

  std::ostringstream c;
  const std::size_t numChunks = (statements.size() + chunk - 1) / chunk;
  for (std::size_t ch = 0; ch < numChunks; ++ch) {
    c << "static __attribute__((noinline)) void " << name << "_" << ch
      << "(double t, const double* restrict x, const double* restrict p, double* restrict out, "
         "double* restrict s) {\n  (void)t; (void)x; (void)p; (void)out; (void)s;\n";
    for (std::size_t k = ch * chunk; k < std::min(statements.size(), (ch + 1) * chunk); ++k) {
      const Statement& st = statements[k];
      if (st.toOut) c << "  out[" << st.target << "] = ";
      else c << "  const double v" << st.target << " = ";
      for (std::size_t r = 0; r < st.refs.size(); ++r) {
        c << st.text[r];
        const std::uint32_t v = st.refs[r];
        if (defChunk[v] == ch) c << "v" << v;
        else c << "s[" << versionSlot[v] << "]";
      }
      c << st.text.back() << ";\n";
      if (!st.toOut && stored[st.target])
        c << "  s[" << versionSlot[st.target] << "] = v" << st.target << ";\n";
    }
    c << "}\n";
  }
  c << lines[0] << "\n" << lines[1] << "\n";
  for (std::size_t ch = 0; ch < numChunks; ++ch) c << "  " << name << "_" << ch << "(t, x, p, out, s);\n";
  c << "}\n";
  return c.str();
}

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

// Repetitions of the slower of the two calls that take about `seconds`.
template <class A, class B>
long calibrate(const A& a, const B& b, double seconds) {
  long reps = 1;
  for (;;) {
    const double t = std::max(secondsFor(a, reps), secondsFor(b, reps));
    if (t >= seconds / 4 || reps > (1L << 40)) {
      const double perCall = t / static_cast<double>(reps);
      return std::max(1L, static_cast<long>(seconds / perCall));
    }
    reps *= 4;
  }
}

// Median nanoseconds per call of a and b over `rounds` interleaved rounds.
template <class A, class B>
std::pair<double, double> timePair(const A& a, const B& b, const Settings& s) {
  const long reps = calibrate(a, b, s.roundSeconds);
  std::vector<double> ta, tb;
  for (int r = 0; r < s.rounds; ++r) {
    ta.push_back(secondsFor(a, reps) * 1e9 / static_cast<double>(reps));
    tb.push_back(secondsFor(b, reps) * 1e9 / static_cast<double>(reps));
  }
  return {median(ta), median(tb)};
}

// ---- one model -------------------------------------------------------------------------------

struct Row {
  std::string name;
  int nx = 0, np = 0;
  std::size_t nnzJ = 0, nnzJJ = 0;
  std::size_t instructions[kNumQuantities] = {};
  double tapeNs[kNumQuantities] = {}, cNs[kNumQuantities] = {};
  double maxAbsDiff = 0;  // over all outputs of all four functions
  double maxRelDiff = 0;  // |Δ| / max(1, |value|)
  double cCompileSeconds = 0;
  std::size_t cSourceBytes = 0;
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

  // Emit, compile, load.
  TempDir dir(settings.keep);
  std::string source = cPrelude();
  for (int q = 0; q < kNumQuantities; ++q)
    source += restructureEmittedC(tapes[q]->emitC(std::string("sensode_") + kQuantities[q]),
                                  settings.chunkStatements) + "\n";
  row.cSourceBytes = source.size();
  const fs::path cFile = dir.path() / "model.c", soFile = dir.path() / "model.so";
  std::ofstream(cFile) << source;
  const char* cc = std::getenv("CC");
  const char* flags = std::getenv("SENSODE_BENCH_CFLAGS");
  const std::string command = std::string(cc && *cc ? cc : "cc") + " " +
                              (flags && *flags ? flags : "-O2") + " -shared -fPIC -o '" +
                              soFile.string() + "' '" + cFile.string() + "' -lm";
  const auto compileStart = Clock::now();
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("C compilation failed: " + command);
  row.cCompileSeconds = secondsSince(compileStart);
  SharedLibrary lib(soFile);

  for (int q = 0; q < kNumQuantities; ++q) {
    const Tape& tape = *tapes[q];
    const CFunction cf = lib.function(std::string("sensode_") + kQuantities[q]);
    const std::size_t n = tape.numOutputs();
    std::vector<double> outTape(std::max<std::size_t>(n, 1)), outC(std::max<std::size_t>(n, 1));

    // Honesty check: same outputs.
    tape.evaluate(t, x.data(), p.data(), outTape.data());
    cf(t, x.data(), p.data(), outC.data());
    for (std::size_t i = 0; i < n; ++i) {
      if (sameValue(outTape[i], outC[i])) continue;
      const double d = std::abs(outTape[i] - outC[i]);
      const double rel = d / std::max(1.0, std::abs(outTape[i]));
      row.maxAbsDiff = std::max(row.maxAbsDiff, std::isnan(d) ? INFINITY : d);
      row.maxRelDiff = std::max(row.maxRelDiff, std::isnan(rel) ? INFINITY : rel);
    }

    const auto [tapeNs, cNs] = timePair(
        [&] { tape.evaluate(t, x.data(), p.data(), outTape.data()); },
        [&] { cf(t, x.data(), p.data(), outC.data()); }, settings);
    row.tapeNs[q] = tapeNs;
    row.cNs[q] = cNs;
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
               "| f: tape / C (ratio) | J: tape / C (ratio) | a: tape / C (ratio) "
               "| JJ: tape / C (ratio) | max abs diff | C compile |\n"
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const Row& r : rows) {
    std::cout << "| " << r.name << " | " << r.nx << " | " << r.np << " | " << r.nnzJ << " | "
              << r.nnzJJ << " | " << r.instructions[0] << " / " << r.instructions[1] << " / "
              << r.instructions[2] << " / " << r.instructions[3];
    for (int q = 0; q < kNumQuantities; ++q)
      std::cout << " | " << nanoseconds(r.tapeNs[q]) << " / " << nanoseconds(r.cNs[q]) << " ("
                << fmt("%.2f", r.tapeNs[q] / r.cNs[q]) << "×)";
    std::cout << " | " << fmt("%.1e", r.maxAbsDiff) << " | " << fmt("%.2f s", r.cCompileSeconds)
              << " |\n";
  }
  std::cout << "\n";
  std::cout << "| quantity | geometric mean tape/C | worst tape/C (model) | "
               "tape ns per instruction (median) | within 3× on |\n|---|--:|--:|--:|--:|\n";
  for (int q = 0; q < kNumQuantities; ++q) {
    double logSum = 0, worst = 0;
    std::string worstName;
    int within = 0;
    std::vector<double> perInstr;
    for (const Row& r : rows) {
      const double ratio = r.tapeNs[q] / r.cNs[q];
      logSum += std::log(ratio);
      if (ratio > worst) {
        worst = ratio;
        worstName = r.name;
      }
      if (ratio <= 3.0) ++within;
      if (r.instructions[q] > 0)
        perInstr.push_back(r.tapeNs[q] / static_cast<double>(r.instructions[q]));
    }
    std::cout << "| " << kQuantities[q] << " | "
              << fmt("%.2f×", std::exp(logSum / static_cast<double>(rows.size()))) << " | "
              << fmt("%.2f×", worst) << " (" << worstName << ") | "
              << (perInstr.empty() ? std::string("–") : fmt("%.2f", median(perInstr))) << " | "
              << within << " of " << rows.size() << " |\n";
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
      if (rows.back().maxRelDiff > 1e-12)
        std::cerr << fmt("  (tape and C differ: max rel diff %.2e)", rows.back().maxRelDiff);
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
