// SPDX-License-Identifier: MIT
#include "core/symbolic/tape.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "core/common/errors.h"
#include "core/symbolic/power_families.h"

namespace sensode::symbolic {
namespace {

// Tape opcodes. Sums and products are fused with their constant coefficients and reciprocal
// factors (c·u inside a sum, u^-1 and u^2 inside a product), which removes most of the
// instructions a mass-action or Michaelis–Menten rate law would otherwise need.
enum TapeOp : std::uint8_t {
  kLinComb,   // out = c + Σ coef[k]·s[arg k]                    a = first, b = count
  kProdDiv,   // out = c · Π s[num k] / Π s[den k]                a = first, b = #num, n2 = #den
  kSquare,    // out = s[a]²
  kRecip,     // out = 1 / s[a]
  kSqrt,      // out = sqrt(s[a])
  kPowConst,  // out = s[a]^c
  kPowInt,    // out = s[a]^c with small integer c (repeated multiplication)
  kPow,       // out = s[a]^s[b]
  kUnary,     // out = fn(s[a]); fn in n2 (an Op)
  kBinary,    // out = fn(s[a], s[b]); fn in n2
  kNary,      // out = fn(s[args]); fn in n2; a = first, b = count
  kSelect,    // piecewise: a = first, b = count (v1, c1, ..., otherwise)
  kPowLog,    // out = powLog(s[a], s[b], c): s[a]^s[b]·ln^c s[a], its limit 0 at s[a] = 0
  kPowStep,   // out = powStep(s[a], s[b], c, s[n2]): s[b] = s[a]^e' computed before, the
              // result s[a]^(e'−c) = s[b]/s[a]^c, pow(s[a], s[n2]) where that could differ
              // (power_families.h)
};

struct Term {
  double coef;
  Expr child;
};

bool isInteger(double v) { return v == std::floor(v) && std::abs(v) <= 64; }

}  // namespace

Tape::Tape(const ExprPool& pool, const TapeInputs& inputs, std::span<const Expr> roots) {
  // ---- which node gets which fused form -------------------------------------------------
  // Add → linear combination over (coef, child) with a constant offset;
  // Mul → c · Π numerators / Π denominators (integer powers expanded).
  auto sumTerms = [&](Expr e, double& offset, std::vector<Term>& terms) {
    offset = 0;
    terms.clear();
    for (Expr c : pool.children(e)) {
      const Node& n = pool.node(c);
      if (n.op == Op::Constant) {
        offset += n.value;
      } else if (n.op == Op::Mul && n.numChildren == 2 && pool.isConstant(pool.children(c)[0])) {
        terms.push_back({pool.node(pool.children(c)[0]).value, pool.children(c)[1]});
      } else {
        terms.push_back({1.0, c});
      }
    }
  };
  auto productFactors = [&](Expr e, double& coef, std::vector<Expr>& num, std::vector<Expr>& den) {
    coef = 1;
    num.clear();
    den.clear();
    for (Expr c : pool.children(e)) {
      const Node& n = pool.node(c);
      if (n.op == Op::Constant) {
        coef *= n.value;
        continue;
      }
      if (n.op == Op::Pow && pool.isConstant(pool.children(c)[1])) {
        const double k = pool.node(pool.children(c)[1]).value;
        if (k == std::floor(k) && std::abs(k) <= 3) {
          auto& side = k > 0 ? num : den;
          for (int i = 0; i < std::abs(static_cast<int>(k)); ++i) side.push_back(pool.children(c)[0]);
          continue;
        }
      }
      num.push_back(c);
    }
  };
  // Powers computed from a higher power of the same base (power_families.h): empty in the first
  // ordering, which finds the nodes the families are formed among.
  std::unordered_map<Expr, PowerStep> powerSteps;
  // Operands a node's instruction reads (after fusion).
  std::vector<Term> terms;
  std::vector<Expr> num, den;
  auto operands = [&](Expr e, std::vector<Expr>& out) {
    out.clear();
    const Node& n = pool.node(e);
    if (n.op == Op::Pow && !powerSteps.empty()) {
      if (auto it = powerSteps.find(e); it != powerSteps.end()) {
        for (Expr c : pool.children(e)) out.push_back(c);  // the exponent: pow()'s fallback
        out.push_back(it->second.anchor);
        return;
      }
    }
    if (n.op == Op::Add) {
      double off;
      sumTerms(e, off, terms);
      for (auto& t : terms) out.push_back(t.child);
    } else if (n.op == Op::Mul) {
      double c;
      productFactors(e, c, num, den);
      out.insert(out.end(), num.begin(), num.end());
      out.insert(out.end(), den.begin(), den.end());
    } else if (n.op == Op::Pow && pool.isConstant(pool.children(e)[1])) {
      out.push_back(pool.children(e)[0]);
    } else if (n.op == Op::PowLog) {  // the power of ln is an immediate
      out.push_back(pool.children(e)[0]);
      out.push_back(pool.children(e)[1]);
    } else {
      for (Expr c : pool.children(e)) out.push_back(c);
    }
  };

  // ---- topological order of the reachable nodes (iterative post-order) -------------------
  std::vector<Expr> order;
  // Per-node scratch arrays indexed by handle: one allocation each instead of hash maps.
  const std::size_t poolSize = pool.size();
  std::vector<std::uint8_t> state(poolSize, 0);  // 2 = done
  std::vector<std::pair<Expr, bool>> stack;
  std::vector<Expr> ops;
  auto sortTopologically = [&] {
    order.clear();
    std::fill(state.begin(), state.end(), std::uint8_t{0});
    for (Expr r : roots) {
      stack.push_back({r, false});
      while (!stack.empty()) {
        auto [e, expanded] = stack.back();
        auto& st = state[e];
        if (st == 2) {
          stack.pop_back();
          continue;
        }
        if (!expanded) {
          stack.back().second = true;
          operands(e, ops);
          for (Expr c : ops)
            if (state[c] != 2) stack.push_back({c, false});
          continue;
        }
        stack.pop_back();
        st = 2;
        order.push_back(e);
      }
    }
  };
  sortTopologically();
  // Again with the families' anchors as operands of their members, so that each anchor comes
  // first and keeps its slot until its last member has read it.
  powerSteps = powerFamilies(pool, order);
  if (!powerSteps.empty()) sortTopologically();

  // ---- slots: inputs and constants first, then temporaries with reuse ----------------------
  std::vector<std::uint32_t> slotOf(poolSize, UINT32_MAX);
  auto slotFor = [&](Expr x) {
    if (slotOf[x] == UINT32_MAX) throw Error("internal: tape operand evaluated before its definition");
    return slotOf[x];
  };
  std::vector<double> initial;
  auto newSlot = [&](double v) {
    initial.push_back(v);
    return static_cast<std::uint32_t>(initial.size() - 1);
  };
  std::vector<int> xIndex(poolSize, -1), pIndex(poolSize, -1);
  for (std::size_t i = 0; i < inputs.x.size(); ++i) xIndex[inputs.x[i]] = static_cast<int>(i);
  for (std::size_t i = 0; i < inputs.p.size(); ++i) pIndex[inputs.p[i]] = static_cast<int>(i);
  for (Expr e : order) {
    const Node& n = pool.node(e);
    if (n.op == Op::Constant) {
      slotOf[e] = newSlot(n.value);
    } else if (n.op == Op::Symbol) {
      const std::uint32_t s = newSlot(0.0);
      slotOf[e] = s;
      if (inputs.time != 0 && e == inputs.time) {
        tSlot_ = s;
      } else if (xIndex[e] >= 0) {
        xInputs_.push_back({s, static_cast<std::uint32_t>(xIndex[e])});
      } else if (pIndex[e] >= 0) {
        pInputs_.push_back({s, static_cast<std::uint32_t>(pIndex[e])});
      } else {
        throw Error("internal: symbol '" + pool.symbolName(n.symbol) +
                    "' is neither time, a state nor a parameter");
      }
    }
  }
  // Last use of each node, so temporaries can be recycled (keeps the slot array small enough to
  // stay in cache on large models). Roots are never recycled.
  std::vector<std::size_t> lastUse(poolSize, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    operands(order[i], ops);
    for (Expr c : ops) lastUse[c] = i;
  }
  for (Expr r : roots) lastUse[r] = order.size();
  std::vector<std::uint32_t> freeSlots;

  for (std::size_t i = 0; i < order.size(); ++i) {
    const Expr e = order[i];
    const Node& n = pool.node(e);
    if (n.op == Op::Constant || n.op == Op::Symbol) continue;
    Instr ins{};
    auto pushArgs = [&](const std::vector<Expr>& list) {
      ins.a = static_cast<std::uint32_t>(args_.size());
      for (Expr c : list) {
        args_.push_back(slotFor(c));
        coefs_.push_back(1.0);
      }
    };
    switch (n.op) {
      case Op::Add: {
        double off;
        sumTerms(e, off, terms);
        ins.op = kLinComb;
        ins.c = off;
        ins.a = static_cast<std::uint32_t>(args_.size());
        ins.b = static_cast<std::uint32_t>(terms.size());
        for (auto& t : terms) {
          args_.push_back(slotFor(t.child));
          coefs_.push_back(t.coef);
        }
        break;
      }
      case Op::Mul: {
        double c;
        productFactors(e, c, num, den);
        ins.op = kProdDiv;
        ins.c = c;
        std::vector<Expr> all = num;
        all.insert(all.end(), den.begin(), den.end());
        pushArgs(all);
        ins.b = static_cast<std::uint32_t>(num.size());
        ins.n2 = static_cast<std::uint32_t>(den.size());
        break;
      }
      case Op::Pow: {
        const Expr base = pool.children(e)[0], ex = pool.children(e)[1];
        ins.a = slotFor(base);
        if (pool.isConstant(ex)) {
          const double k = pool.node(ex).value;
          ins.c = k;
          if (k == 2.0) ins.op = kSquare;
          else if (k == -1.0) ins.op = kRecip;
          else if (k == 0.5) ins.op = kSqrt;
          else if (isInteger(k)) ins.op = kPowInt;
          else ins.op = kPowConst;
        } else if (auto it = powerSteps.find(e); it != powerSteps.end()) {
          ins.op = kPowStep;
          ins.b = slotFor(it->second.anchor);
          ins.c = it->second.step;
          ins.n2 = slotFor(ex);
        } else {
          ins.op = kPow;
          ins.b = slotFor(ex);
        }
        break;
      }
      case Op::Min: case Op::Max: case Op::And: case Op::Or: case Op::Xor: {
        ins.op = kNary;
        ins.n2 = static_cast<std::uint32_t>(n.op);
        std::vector<Expr> all(pool.children(e).begin(), pool.children(e).end());
        pushArgs(all);
        ins.b = static_cast<std::uint32_t>(all.size());
        break;
      }
      case Op::PowLog:
        ins.op = kPowLog;
        ins.a = slotFor(pool.children(e)[0]);
        ins.b = slotFor(pool.children(e)[1]);
        ins.c = pool.node(pool.children(e)[2]).value;
        break;
      case Op::Delay:  // resolved into input symbols by symbolic/delays.h before compiling
        throw Error("Tape: " + pool.toString(e) + " is not resolved into history inputs");
      case Op::Piecewise: {
        ins.op = kSelect;
        std::vector<Expr> all(pool.children(e).begin(), pool.children(e).end());
        pushArgs(all);
        ins.b = static_cast<std::uint32_t>(all.size());
        break;
      }
      default:
        ins.n2 = static_cast<std::uint32_t>(n.op);
        ins.a = slotFor(pool.children(e)[0]);
        if (n.numChildren == 1) {
          ins.op = kUnary;
        } else {
          ins.op = kBinary;
          ins.b = slotFor(pool.children(e)[1]);
        }
    }
    // Recycle operand slots whose last use is this instruction (after reading them: the output
    // may safely reuse one of its own operands' slots because each op reads all before writing).
    operands(e, ops);
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    for (Expr c : ops) {
      const Node& cn = pool.node(c);
      if (cn.op != Op::Constant && cn.op != Op::Symbol && lastUse[c] == i)
        freeSlots.push_back(slotFor(c));
    }
    if (!freeSlots.empty()) {
      ins.out = freeSlots.back();
      freeSlots.pop_back();
    } else {
      ins.out = newSlot(0.0);
    }
    slotOf[e] = ins.out;
    code_.push_back(ins);
  }
  for (Expr r : roots) outputSlots_.push_back(slotFor(r));
  slots_ = std::move(initial);
}

void Tape::evaluate(double t, const double* x, const double* p, double* out) const {
  if (native_) {
    const NativeFunction fn = native_->fn.load(std::memory_order_acquire);
    if (native_->firstCall.load(std::memory_order_relaxed) == 0)
      native_->firstCall.store(fn ? 1 : 2, std::memory_order_relaxed);
    if (fn) {
      fn(t, x, p, out, slots_.data());
      return;
    }
  }
  interpret(t, x, p, out);
}

void Tape::interpret(double t, const double* x, const double* p, double* out) const {
  double* s = slots_.data();
  if (tSlot_ != UINT32_MAX) s[tSlot_] = t;
  for (const auto& in : xInputs_) s[in.slot] = x[in.index];
  for (const auto& in : pInputs_) s[in.slot] = p[in.index];
  const std::uint32_t* args = args_.data();
  const double* coefs = coefs_.data();
  double buf[64];
  for (const Instr& ins : code_) {
    double v;
    switch (ins.op) {
      case kLinComb: {
        v = ins.c;
        const std::uint32_t* a = args + ins.a;
        const double* c = coefs + ins.a;
        for (std::uint32_t k = 0; k < ins.b; ++k) v += c[k] * s[a[k]];
        break;
      }
      case kProdDiv: {
        v = ins.c;
        const std::uint32_t* a = args + ins.a;
        for (std::uint32_t k = 0; k < ins.b; ++k) v *= s[a[k]];
        if (ins.n2) {
          double d = 1;
          for (std::uint32_t k = 0; k < ins.n2; ++k) d *= s[a[ins.b + k]];
          v /= d;
        }
        break;
      }
      case kSquare: v = s[ins.a] * s[ins.a]; break;
      case kRecip: v = 1.0 / s[ins.a]; break;
      case kSqrt: v = std::sqrt(s[ins.a]); break;
      case kPowInt: {
        const int k = static_cast<int>(ins.c);
        double b = s[ins.a], r = 1;
        for (int m = std::abs(k); m > 0; m >>= 1, b *= b)
          if (m & 1) r *= b;
        v = k < 0 ? 1.0 / r : r;
        break;
      }
      case kPowConst: v = std::pow(s[ins.a], ins.c); break;
      case kPow: v = std::pow(s[ins.a], s[ins.b]); break;
      case kPowLog: v = powLog(s[ins.a], s[ins.b], static_cast<int>(ins.c)); break;
      case kPowStep: v = powStep(s[ins.a], s[ins.b], static_cast<int>(ins.c), s[ins.n2]); break;
      case kUnary: {
        const double a = s[ins.a];
        v = applyOp(static_cast<Op>(ins.n2), std::span<const double>(&a, 1));
        break;
      }
      case kBinary: {
        const double ab[2] = {s[ins.a], s[ins.b]};
        v = applyOp(static_cast<Op>(ins.n2), std::span<const double>(ab, 2));
        break;
      }
      case kNary:
      case kSelect: {
        // Operand lists of n-ary ops are short in practice; long ones are gathered in chunks.
        const std::uint32_t* a = args + ins.a;
        if (ins.b <= 64) {
          for (std::uint32_t k = 0; k < ins.b; ++k) buf[k] = s[a[k]];
          v = applyOp(ins.op == kSelect ? Op::Piecewise : static_cast<Op>(ins.n2),
                      std::span<const double>(buf, ins.b));
        } else {
          std::vector<double> big(ins.b);  // rare: allocation acceptable here
          for (std::uint32_t k = 0; k < ins.b; ++k) big[k] = s[a[k]];
          v = applyOp(ins.op == kSelect ? Op::Piecewise : static_cast<Op>(ins.n2), big);
        }
        break;
      }
      default: v = std::nan("");
    }
    s[ins.out] = v;
  }
  for (std::size_t i = 0; i < outputSlots_.size(); ++i) out[i] = s[outputSlots_[i]];
}

// ---- C emission ------------------------------------------------------------------------------
//
// The emitted C must compute the same numbers as evaluate(): every instruction becomes one C
// expression with the interpreter's operations in the interpreter's order (left-to-right sums
// and products, the same libm calls, integer powers by the same square-and-multiply sequence),
// so that a compiler that keeps IEEE semantics (no -ffast-math, -ffp-contract=off) reproduces
// the tape bit for bit.

namespace {

// A double as a C literal that reads back exactly. Non-finite values use the <math.h> macros
// (a bare `nan` or `inf` is not C); negative values are parenthesised so they can follow any
// operator.
std::string cLiteral(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "(-NAN)" : "NAN";
  if (std::isinf(v)) return v < 0 ? "(-INFINITY)" : "INFINITY";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string text(buf, res.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // a double, not an int
  return text[0] == '-' ? "(" + text + ")" : text;
}

// out = base^k as the interpreter's kPowInt computes it: r = 1; for m = |k|, halving m and
// squaring b each round, r *= b when m is odd; 1/r for negative k. The leading 1·b is exact and
// left out.
std::string cIntegerPower(const std::string& base, int k) {
  std::string b = base, r;
  for (int m = std::abs(k); m > 0; m >>= 1) {
    if (m & 1) r = r.empty() ? b : "(" + r + "*" + b + ")";
    if (m > 1) b = "(" + b + "*" + b + ")";
  }
  if (r.empty()) r = "1.0";
  return k < 0 ? "(1.0/" + r + ")" : r;
}

}  // namespace

std::string Tape::cPrelude() {
  // Bodies with the semantics of applyOp (core/symbolic/expression.cpp), generated from the Op
  // enum so the numbers cannot drift; static inline with a constant op, so the C compiler folds
  // the switch. min/max follow std::min_element / std::max_element (first of equals wins, NaN
  // handling included), which fmin/fmax do not.
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
       "static inline double sensode_unary(int op, double x) {\n  switch (op) {\n";
  for (const auto& [op, body] : unary)
    c << "    case " << static_cast<int>(op) << ": return " << body << ";\n";
  c << "    default: return NAN;\n  }\n}\n"
       "static inline double sensode_binary(int op, double a, double b) {\n  switch (op) {\n";
  for (const auto& [op, body] : binary)
    c << "    case " << static_cast<int>(op) << ": return " << body << ";\n";
  c << "    default: return NAN;\n  }\n}\n"
       "static inline double sensode_min(double acc, double y) { return y < acc ? y : acc; }\n"
       "static inline double sensode_max(double acc, double y) { return acc < y ? y : acc; }\n"
       // powLog() of core/symbolic/expression.cpp, statement for statement.
       "static inline double sensode_powlog(double u, double v, int k) {\n"
       "  if (u == 0.0 && v > 0.0) return 0.0;\n"
       "  const double l = log(u);\n"
       "  double r = pow(u, v);\n"
       "  for (int i = 0; i < k; ++i) r *= l;\n"
       "  return r;\n"
       "}\n"
       // powStep() of core/symbolic/power_families.cpp, statement for statement.
       "static inline int sensode_normal(double v) {\n"
       "  const double a = fabs(v);\n"
       "  return a >= 2.2250738585072014e-308 && a <= 1.7976931348623157e308;\n"
       "}\n"
       "static inline double sensode_powstep(double u, double anchor, int step, double e) {\n"
       "  if (!sensode_normal(u) || !sensode_normal(anchor)) return pow(u, e);\n"
       "  double v = anchor;\n"
       "  for (int i = 0; i < step; ++i) v /= u;\n"
       "  return v;\n"
       "}\n\n";
  return c.str();
}

std::string Tape::cExpression(const Instr& ins,
                              const std::function<std::string(std::uint32_t)>& sl) const {
  std::string c;
  switch (ins.op) {
    case kLinComb:
      c = cLiteral(ins.c);
      for (std::uint32_t k = 0; k < ins.b; ++k)
        c += " + " + cLiteral(coefs_[ins.a + k]) + "*" + sl(args_[ins.a + k]);
      break;
    case kProdDiv:
      c = cLiteral(ins.c);
      for (std::uint32_t k = 0; k < ins.b; ++k) c += "*" + sl(args_[ins.a + k]);
      if (ins.n2) {
        c += "/(1.0";
        for (std::uint32_t k = 0; k < ins.n2; ++k) c += "*" + sl(args_[ins.a + ins.b + k]);
        c += ")";
      }
      break;
    case kSquare: c = sl(ins.a) + "*" + sl(ins.a); break;
    case kRecip: c = "1.0/" + sl(ins.a); break;
    case kSqrt: c = "sqrt(" + sl(ins.a) + ")"; break;
    case kPowInt: c = cIntegerPower(sl(ins.a), static_cast<int>(ins.c)); break;
    case kPowConst: c = "pow(" + sl(ins.a) + ", " + cLiteral(ins.c) + ")"; break;
    case kPow: c = "pow(" + sl(ins.a) + ", " + sl(ins.b) + ")"; break;
    case kPowLog:
      c = "sensode_powlog(" + sl(ins.a) + ", " + sl(ins.b) + ", " +
          std::to_string(static_cast<int>(ins.c)) + ")";
      break;
    case kPowStep:
      c = "sensode_powstep(" + sl(ins.a) + ", " + sl(ins.b) + ", " +
          std::to_string(static_cast<int>(ins.c)) + ", " + sl(ins.n2) + ")";
      break;
    case kUnary: {
      const Op op = static_cast<Op>(ins.n2);
      const std::string a = sl(ins.a);
      switch (op) {
        case Op::Exp: c = "exp(" + a + ")"; break;
        case Op::Log: c = "log(" + a + ")"; break;
        case Op::Sin: c = "sin(" + a + ")"; break;
        case Op::Cos: c = "cos(" + a + ")"; break;
        case Op::Tanh: c = "tanh(" + a + ")"; break;
        case Op::Abs: c = "fabs(" + a + ")"; break;
        case Op::Floor: c = "floor(" + a + ")"; break;
        case Op::Ceil: c = "ceil(" + a + ")"; break;
        default: c = "sensode_unary(" + std::to_string(static_cast<int>(op)) + ", " + a + ")";
      }
      break;
    }
    case kBinary: {
      const Op op = static_cast<Op>(ins.n2);
      const char* rel = op == Op::Lt ? "<" : op == Op::Le ? "<=" : op == Op::Gt ? ">"
                      : op == Op::Ge ? ">=" : op == Op::Eq ? "==" : op == Op::Ne ? "!=" : nullptr;
      if (rel) c = "(double)(" + sl(ins.a) + " " + rel + " " + sl(ins.b) + ")";
      else c = "sensode_binary(" + std::to_string(static_cast<int>(op)) + ", " + sl(ins.a) + ", " + sl(ins.b) + ")";
      break;
    }
    case kNary: {
      const Op op = static_cast<Op>(ins.n2);
      std::string acc = sl(args_[ins.a]);
      for (std::uint32_t k = 1; k < ins.b; ++k) {
        const std::string y = sl(args_[ins.a + k]);
        if (op == Op::Min) acc = "sensode_min(" + acc + ", " + y + ")";
        else if (op == Op::Max) acc = "sensode_max(" + acc + ", " + y + ")";
        else if (op == Op::And) acc = "(double)((" + acc + ") != 0 && " + y + " != 0)";
        else if (op == Op::Or) acc = "(double)((" + acc + ") != 0 || " + y + " != 0)";
        else acc = "(double)(((" + acc + ") != 0) != (" + y + " != 0))";
      }
      if (ins.b == 1 && (op == Op::And || op == Op::Or || op == Op::Xor))
        acc = "(double)(" + acc + " != 0)";
      c = acc;
      break;
    }
    case kSelect: {
      for (std::uint32_t k = 0; k + 1 < ins.b; k += 2)
        c += "(" + sl(args_[ins.a + k + 1]) + " != 0) ? " + sl(args_[ins.a + k]) + " : ";
      c += sl(args_[ins.a + ins.b - 1]);
      break;
    }
    default: c = "NAN";
  }
  return c;
}

std::string Tape::emitC(const std::string& name) const {
  // One C statement per instruction over a local slot array; the C compiler then does its own
  // register allocation. Every constant slot is written (a local array starts undefined, unlike
  // the tape's zero-filled slots).
  std::vector<bool> computed(slots_.size(), false);
  for (const Instr& ins : code_) computed[ins.out] = true;
  for (const auto& in : xInputs_) computed[in.slot] = true;
  for (const auto& in : pInputs_) computed[in.slot] = true;
  if (tSlot_ != UINT32_MAX) computed[tSlot_] = true;

  std::ostringstream c;
  c << "void " << name << "(double t, const double* x, const double* p, double* out) {\n";
  c << "  double s[" << std::max<std::size_t>(slots_.size(), 1) << "];\n";
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (!computed[i]) c << "  s[" << i << "] = " << cLiteral(slots_[i]) << ";\n";
  if (tSlot_ != UINT32_MAX) c << "  s[" << tSlot_ << "] = t;\n";
  c << "  (void)t; (void)x; (void)p;\n";
  for (const auto& in : xInputs_) c << "  s[" << in.slot << "] = x[" << in.index << "];\n";
  for (const auto& in : pInputs_) c << "  s[" << in.slot << "] = p[" << in.index << "];\n";
  auto sl = [](std::uint32_t k) { return "s[" + std::to_string(k) + "]"; };
  for (const Instr& ins : code_) c << "  " << sl(ins.out) << " = " << cExpression(ins, sl) << ";\n";
  for (std::size_t i = 0; i < outputSlots_.size(); ++i)
    c << "  out[" << i << "] = " << sl(outputSlots_[i]) << ";\n";
  c << "}\n";
  return c.str();
}

std::string Tape::emitCScratch(const std::string& name, std::size_t chunkStatements) const {
  // GCC and Clang need minutes for -O2 on one function with tens of thousands of statements over
  // one array (alias walking is quadratic), so this form is written for the compiler: every
  // instruction defines its own `const double` (SSA form: plain values, not memory), constants
  // and inputs are read in place, and long bodies are cut into noinline chunks (compile time
  // then grows linearly); only values read in a later chunk go through the caller's scratch
  // array `s`, at their tape slot. No large array lives on the stack.
  enum Kind : std::uint8_t { kTemp, kConst, kTime, kX, kP };
  std::vector<Kind> kind(slots_.size(), kConst);
  std::vector<std::uint32_t> inputIndex(slots_.size(), 0);
  for (const Instr& ins : code_) kind[ins.out] = kTemp;
  for (const auto& in : xInputs_) kind[in.slot] = kX, inputIndex[in.slot] = in.index;
  for (const auto& in : pInputs_) kind[in.slot] = kP, inputIndex[in.slot] = in.index;
  if (tSlot_ != UINT32_MAX) kind[tSlot_] = kTime;

  // Statements: the instructions, then the output copies. Statement k < code_.size() defines
  // version k; a temporary slot's current version is the last statement that wrote it.
  const std::size_t numStatements = code_.size() + outputSlots_.size();
  constexpr std::size_t kSingleChunk = 1000;  // up to this many statements compile in about 1 s
  const std::size_t chunk = numStatements <= kSingleChunk
                                ? std::max<std::size_t>(1, numStatements)
                                : std::max<std::size_t>(1, chunkStatements);
  std::vector<std::uint32_t> current(slots_.size(), UINT32_MAX);
  std::vector<bool> stored(code_.size(), false);
  std::vector<std::uint32_t> readVersions;
  auto versionsRead = [&](std::size_t k) {
    readVersions.clear();
    auto note = [&](std::uint32_t slot) {
      if (kind[slot] == kTemp) readVersions.push_back(current[slot]);
      return std::string();
    };
    if (k < code_.size()) cExpression(code_[k], note);
    else note(outputSlots_[k - code_.size()]);
  };
  for (std::size_t k = 0; k < numStatements; ++k) {
    versionsRead(k);
    for (std::uint32_t v : readVersions)
      if (v / chunk != k / chunk) stored[v] = true;
    if (k < code_.size()) current[code_[k].out] = static_cast<std::uint32_t>(k);
  }

  std::ostringstream c;
  std::fill(current.begin(), current.end(), UINT32_MAX);
  std::size_t k = 0;
  auto ref = [&](std::uint32_t slot) -> std::string {
    switch (kind[slot]) {
      case kConst: return cLiteral(slots_[slot]);
      case kTime: return "t";
      case kX: return "x[" + std::to_string(inputIndex[slot]) + "]";
      case kP: return "p[" + std::to_string(inputIndex[slot]) + "]";
      default: break;
    }
    const std::uint32_t v = current[slot];
    if (v / chunk == k / chunk) return "v" + std::to_string(v);
    return "s[" + std::to_string(slot) + "]";
  };
  const std::size_t numChunks = std::max<std::size_t>(1, (numStatements + chunk - 1) / chunk);
  const char* params =
      "(double t, const double* restrict x, const double* restrict p, double* restrict out, "
      "double* restrict s)";
  for (std::size_t ch = 0; ch < numChunks; ++ch) {
    if (numChunks > 1) c << "static __attribute__((noinline)) void " << name << "_" << ch;
    else c << "void " << name;
    c << params << " {\n  (void)t; (void)x; (void)p; (void)out; (void)s;\n";
    for (k = ch * chunk; k < std::min(numStatements, (ch + 1) * chunk); ++k) {
      if (k < code_.size()) {
        const Instr& ins = code_[k];
        c << "  const double v" << k << " = " << cExpression(ins, ref) << ";\n";
        current[ins.out] = static_cast<std::uint32_t>(k);
        if (stored[k]) c << "  s[" << ins.out << "] = v" << k << ";\n";
      } else {
        const std::size_t i = k - code_.size();
        c << "  out[" << i << "] = " << ref(outputSlots_[i]) << ";\n";
      }
    }
    c << "}\n";
  }
  if (numChunks > 1) {
    c << "void " << name << params << " {\n";
    for (std::size_t ch = 0; ch < numChunks; ++ch)
      c << "  " << name << "_" << ch << "(t, x, p, out, s);\n";
    c << "}\n";
  }
  return c.str();
}

}  // namespace sensode::symbolic
