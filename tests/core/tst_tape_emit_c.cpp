// SPDX-License-Identifier: MIT
// Tape::emitC and Tape::emitCScratch against Tape::evaluate: the emitted C, compiled by the
// system C compiler with IEEE semantics kept (-O2 -ffp-contract=off, no -ffast-math), must give
// the interpreter's numbers bit for bit (NaN matches any NaN). The expressions cover what broke
// the C reference before: zero-valued constants (a local slot array starts undefined), NaN and
// infinite constants (printed as bare `nan`/`inf`), integer powers (the tape multiplies, pow()
// may round differently), plus non-integer powers, piecewise, min/max on signed zeros and the
// less common functions.
#include <QtTest/QtTest>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/symbolic/expression.h"
#include "core/symbolic/tape.h"

using namespace sensode::symbolic;
namespace fs = std::filesystem;

namespace {

using PlainFn = void (*)(double, const double*, const double*, double*);
using ScratchFn = void (*)(double, const double*, const double*, double*, double*);

bool sameBits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class Fn>
Fn symbolOf(void* handle, const char* name) {
  void* sym = dlsym(handle, name);
  Fn f = nullptr;
  if (sym) std::memcpy(&f, &sym, sizeof f);  // POSIX object/function pointer round trip
  return f;
}

// The test expressions over symbols t, x0, x1, p0.
struct Fixture {
  ExprPool pool;
  TapeInputs inputs;
  std::vector<Expr> roots;
  std::vector<std::string> labels;

  Fixture() {
    const Expr t = pool.symbol("t"), x = pool.symbol("x0"), y = pool.symbol("x1"),
               k = pool.symbol("p0");
    inputs.time = t;
    inputs.x = {x, y};
    inputs.p = {k};
    auto c = [&](double v) { return pool.constant(v); };
    auto add = [&](const char* label, Expr e) {
      roots.push_back(e);
      labels.emplace_back(label);
    };
    const double inf = std::numeric_limits<double>::infinity();
    // Zero constants as operands.
    add("x < 0", pool.binary(Op::Lt, x, pool.zero()));
    add("max(x, 0)", pool.nary(Op::Max, std::vector<Expr>{x, pool.zero()}));
    add("min(0, y)", pool.nary(Op::Min, std::vector<Expr>{pool.zero(), y}));
    add("x == 0 ? 0 : y", pool.piecewise(std::vector<Expr>{pool.zero(), pool.binary(Op::Eq, x, pool.zero())}, y));
    // Non-finite constants.
    add("piecewise without otherwise (NaN)",
        pool.piecewise(std::vector<Expr>{x, pool.binary(Op::Gt, x, c(1.5))}, pool.nanExpr()));
    add("min(x, inf)", pool.nary(Op::Min, std::vector<Expr>{x, c(inf)}));
    add("max(y, -inf)", pool.nary(Op::Max, std::vector<Expr>{y, c(-inf)}));
    add("x + inf*k", pool.add(x, pool.mul(c(inf), k)));
    // Integer powers (standalone and fused into products), non-integer powers.
    for (int e : {3, 4, 5, 6, 7, 11, 16, -2, -3, -5, 63})
      add("x^int", pool.pow(pool.add(x, pool.mul(c(0.1), y)), c(e)));
    add("x^3 * y^-2 * k", pool.mul(std::vector<Expr>{pool.pow(x, c(3)), pool.pow(y, c(-2)), k}));
    add("x^2.5", pool.pow(x, c(2.5)));
    add("y^-0.75", pool.pow(y, c(-0.75)));
    add("x^y", pool.pow(x, y));
    add("x^100", pool.pow(x, c(100)));
    add("sqrt(y)", pool.sqrt(y));
    add("1/x", pool.div(pool.one(), x));
    // Piecewise with several pieces, logical and relational operators.
    add("piecewise", pool.piecewise(std::vector<Expr>{pool.mul(x, y), pool.binary(Op::Lt, t, c(1)),
                                                      pool.sub(x, y), pool.binary(Op::Ge, y, x)},
                                    pool.mul(c(0.5), k)));
    add("and/or/xor", pool.add(std::vector<Expr>{
                          pool.nary(Op::And, std::vector<Expr>{pool.binary(Op::Gt, x, c(0)), y}),
                          pool.nary(Op::Or, std::vector<Expr>{pool.binary(Op::Lt, x, c(0)), y}),
                          pool.nary(Op::Xor, std::vector<Expr>{x, y, k})}));
    add("not", pool.unary(Op::Not, pool.binary(Op::Ne, x, y)));
    // Less common functions through the prelude.
    add("sec", pool.unary(Op::Sec, x));
    add("arcsinh", pool.unary(Op::ArcSinh, y));
    add("factorial", pool.unary(Op::Factorial, pool.unary(Op::Abs, y)));
    add("sign", pool.unary(Op::Sign, x));
    add("rem", pool.binary(Op::Rem, x, k));
    add("quotient", pool.binary(Op::Quotient, y, k));
    add("exp(-k t) log(y)", pool.mul(pool.unary(Op::Exp, pool.neg(pool.mul(k, t))), pool.unary(Op::Log, y)));
    // The guarded u^v·ln^k u (its limit 0 at u = 0 for v > 0), built directly, by the
    // simplifier from u·ln u, and by the differentiator from ∂(x^k)/∂k and ∂²(x^k)/∂k∂x.
    add("powlog(x, k, 1)", pool.powLog(x, k, 1));
    add("powlog(y, 1.5, 3)", pool.powLog(y, c(1.5), 3));
    add("x ln x", pool.mul(x, pool.unary(Op::Log, x)));
    add("d(x^k/(1+y))/dk", pool.diff(pool.div(pool.pow(x, k), pool.add(pool.one(), y)), k));
    add("d2(x^k)/dk dx", pool.diff(pool.diff(pool.pow(x, k), k), x));
    // Powers of one base whose exponents differ by integers (power_families.h): one pow() and
    // products from it, with pow() again where a factor is 0, subnormal or not finite.
    for (int m = 0; m <= 3; ++m)
      add("x^(k-m) family", pool.pow(x, pool.sub(k, c(m))));
    add("d3(y^k/(1+y^k))/dy3",
        pool.diff(pool.diff(pool.diff(pool.div(pool.pow(y, k), pool.add(pool.one(), pool.pow(y, k))), y), y), y));
    // Roots that are a constant and an input (copied straight to the output).
    add("constant root", c(0.1));
    add("zero root", pool.zero());
    add("input root", y);
  }
};

// Input points: ordinary values, signed zeros, negative values, a NaN state.
std::vector<std::vector<double>> points() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {{0.3, 1.7, 0.9, 0.25},  {2.0, -1.3, 2.2, 3.0}, {0.0, 0.0, -0.0, 1.0},
          {5.0, -0.0, 0.0, -2.0}, {1.0, 1e-3, 7.5, 0.5}, {0.5, nan, 1.0, 1.0}};
}

}  // namespace

class TestTapeEmitC : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void cleanupTestCase();
  void emittedCMatchesTapeBitForBit();
  void chunkedScratchFormMatchesTape();
  void sharedDenominatorsAreInvertedOnce();

 private:
  // Compiles and loads `source`; nullptr with `noCompiler` set when there is no cc at all.
  void* compile(const std::string& source, const std::string& stem, bool& noCompiler);
  fs::path dir_;
  std::vector<void*> handles_;
};

void TestTapeEmitC::initTestCase() {
  std::string pattern = (fs::temp_directory_path() / "sensode-emit-XXXXXX").string();
  QVERIFY(mkdtemp(pattern.data()) != nullptr);
  dir_ = pattern;
}

void TestTapeEmitC::cleanupTestCase() {
  for (void* h : handles_) dlclose(h);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void* TestTapeEmitC::compile(const std::string& source, const std::string& stem,
                             bool& noCompiler) {
  noCompiler = std::system("cc --version > /dev/null 2>&1") != 0;
  if (noCompiler) return nullptr;
  const fs::path c = dir_ / (stem + ".c"), so = dir_ / (stem + ".so");
  std::ofstream(c) << source;
  const std::string cmd = "cc -O2 -shared -fPIC -ffp-contract=off -o '" + so.string() + "' '" +
                          c.string() + "' -lm 2> '" + (dir_ / (stem + ".log")).string() + "'";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(dir_ / (stem + ".log"));
    const std::string text((std::istreambuf_iterator<char>(log)), {});
    qWarning("%s", text.substr(0, 4000).c_str());
    return nullptr;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h) handles_.push_back(h);
  return h;
}

void TestTapeEmitC::emittedCMatchesTapeBitForBit() {
  Fixture fx;
  const Tape tape(fx.pool, fx.inputs, fx.roots);
  const std::string source =
      Tape::cPrelude() + tape.emitC("plain") + tape.emitCScratch("scratch");
  bool noCompiler = false;
  void* h = compile(source, "small", noCompiler);
  if (noCompiler) QSKIP("no system C compiler (cc)");
  QVERIFY2(h != nullptr, "emitted C does not compile or load");
  const auto plain = symbolOf<PlainFn>(h, "plain");
  const auto scratch = symbolOf<ScratchFn>(h, "scratch");
  QVERIFY(plain && scratch);

  const std::size_t n = tape.numOutputs();
  QCOMPARE(n, fx.roots.size());
  std::vector<double> ref(n), outPlain(n), outScratch(n), s(tape.numSlots());
  bool sawNan = false, sawInf = false;
  for (const auto& pt : points()) {
    const double t = pt[0], x[2] = {pt[1], pt[2]}, p[1] = {pt[3]};
    tape.evaluate(t, x, p, ref.data());
    // Garbage in the outputs and scratch: nothing may rely on them starting at zero.
    std::fill(outPlain.begin(), outPlain.end(), 12345.0);
    std::fill(outScratch.begin(), outScratch.end(), 12345.0);
    std::fill(s.begin(), s.end(), -777.0);
    for (double v : ref) sawNan |= std::isnan(v), sawInf |= std::isinf(v);
    plain(t, x, p, outPlain.data());
    scratch(t, x, p, outScratch.data(), s.data());
    for (std::size_t i = 0; i < n; ++i) {
      QVERIFY2(sameBits(outPlain[i], ref[i]),
               qPrintable(QString("emitC, %1 at t=%2: C %3, tape %4")
                              .arg(fx.labels[i].c_str()).arg(t).arg(outPlain[i], 0, 'g', 17)
                              .arg(ref[i], 0, 'g', 17)));
      QVERIFY2(sameBits(outScratch[i], ref[i]),
               qPrintable(QString("emitCScratch, %1 at t=%2: C %3, tape %4")
                              .arg(fx.labels[i].c_str()).arg(t).arg(outScratch[i], 0, 'g', 17)
                              .arg(ref[i], 0, 'g', 17)));
    }
  }
  // The reference is not trivial: the points exercise NaN and infinite results.
  QVERIFY(sawNan && sawInf);
}

void TestTapeEmitC::chunkedScratchFormMatchesTape() {
  // A chain long enough (> 1000 statements) to be cut into chunks of 50, with values crossing
  // chunk boundaries (x, the running sum and early terms are read much later).
  ExprPool pool;
  TapeInputs in;
  const Expr x = pool.symbol("x0"), k = pool.symbol("p0");
  in.x = {x};
  in.p = {k};
  std::vector<Expr> terms, roots;
  Expr acc = x;
  for (int i = 0; i < 400; ++i) {
    // sin() between the levels keeps the builders from flattening the chain into one sum.
    const Expr term = pool.unary(Op::Sin, acc);
    terms.push_back(term);
    acc = pool.add(pool.mul(term, k), pool.constant(0.01 * i));
    if (i % 25 == 0) roots.push_back(acc);
  }
  roots.push_back(pool.add(terms));
  const Tape tape(pool, in, roots);
  QVERIFY(tape.numInstructions() > 1000);
  // Appending to a model's C writes the same text after what is there.
  std::string appended = "/* before */\n";
  tape.appendCScratch(appended, "chain", 50);
  QCOMPARE(appended, "/* before */\n" + tape.emitCScratch("chain", 50));
  bool noCompiler = false;
  void* h = compile(Tape::cPrelude() + tape.emitCScratch("chain", 50), "chain", noCompiler);
  if (noCompiler) QSKIP("no system C compiler (cc)");
  QVERIFY2(h != nullptr, "emitted C does not compile or load");
  const auto chain = symbolOf<ScratchFn>(h, "chain");
  QVERIFY(chain);
  std::vector<double> ref(tape.numOutputs()), out(tape.numOutputs()), s(tape.numSlots(), -1.0);
  for (double xv : {0.2, -1.1, 3.0}) {
    const double xs[1] = {xv}, ps[1] = {0.7};
    tape.evaluate(0.0, xs, ps, ref.data());
    chain(0.0, xs, ps, out.data(), s.data());
    for (std::size_t i = 0; i < out.size(); ++i)
      QVERIFY2(sameBits(out[i], ref[i]), qPrintable(QString("output %1: C %2, tape %3")
                                                        .arg(i).arg(out[i], 0, 'g', 17)
                                                        .arg(ref[i], 0, 'g', 17)));
  }
}

// Products that divide by a common factor (a compartment size, a Michaelis–Menten sum) share
// one reciprocal: one division per distinct factor instead of one per product. a·(1/b) may
// differ from a/b in the last bit (1/49·49 < 1), so products compared by a relational operator
// keep their exact division: x/V ≥ 1 holds at x = V.
void TestTapeEmitC::sharedDenominatorsAreInvertedOnce() {
  ExprPool pool;
  const Expr t = pool.symbol("t"), x = pool.symbol("x0"), y = pool.symbol("x1"),
             volume = pool.symbol("V"), km = pool.symbol("Km");
  const TapeInputs inputs{t, {x, y}, {volume, km}};
  const Expr saturation = pool.add(km, y);  // Km + y
  const std::vector<Expr> roots = {
      pool.div(y, volume),                                  // y/V
      pool.div(t, pool.mul(volume, km)),                    // t/(V·Km) = t·(1/V)·(1/Km)
      pool.div(pool.mul(km, y), saturation),                // Km·y/(Km + y)
      pool.div(km, pool.pow(saturation, pool.constant(2))),  // Km/(Km + y)²
      pool.piecewise(std::vector<Expr>{pool.one(), pool.binary(Op::Ge, pool.div(x, volume),
                                                                pool.one())},
                     pool.zero()),                          // x/V ≥ 1, exactly
  };
  const Tape tape(pool, inputs, roots);
  // The reciprocals of V, Km and Km + y, and the compared x/V: five products, four divisions.
  QCOMPARE(tape.numDivisions(), std::size_t{4});

  const double xv[2] = {49.0, 49.0}, p[2] = {49.0, 0.3}, tv = 2.5;
  double out[5];
  tape.evaluate(tv, xv, p, out);
  const double expected[4] = {xv[1] / p[0], tv / (p[0] * p[1]), p[1] * xv[1] / (p[1] + xv[1]),
                              p[1] / ((p[1] + xv[1]) * (p[1] + xv[1]))};
  for (int i = 0; i < 4; ++i) {
    QVERIFY2(std::abs(out[i] - expected[i]) <= 4 * std::numeric_limits<double>::epsilon() *
                                                   std::abs(expected[i]),
             qPrintable(QString("root %1: %2 against %3").arg(i).arg(out[i], 0, 'g', 17)
                            .arg(expected[i], 0, 'g', 17)));
  }
  QVERIFY(out[0] != 1.0);  // 49·(1/49): the shared reciprocal is in use
  QCOMPARE(out[4], 1.0);   // x/V = 49/49 = 1 exactly, compared exactly
}

QTEST_GUILESS_MAIN(TestTapeEmitC)
#include "tst_tape_emit_c.moc"
