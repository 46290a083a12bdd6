// SPDX-License-Identifier: MIT
// Tape's C emission (tape.h: cPrelude, emitC, emitCScratch): the same operations as the
// interpreter in tape.cpp, in the same order, for the native tiers (native_compiler.h).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/symbolic/tape.h"
#include "core/symbolic/tape_ops.h"

namespace sensode::symbolic {
using namespace tape_ops;

// ---- C emission ------------------------------------------------------------------------------
//
// The emitted C must compute the same numbers as evaluate(): every instruction becomes one C
// expression with the interpreter's operations in the interpreter's order (left-to-right sums
// and products, the same libm calls, integer powers by the same square-and-multiply sequence),
// so that a compiler that keeps IEEE semantics (no -ffast-math, -ffp-contract=off) reproduces
// the tape bit for bit.

namespace {

// A double as a C literal that reads back exactly, appended to c. Non-finite values use the
// <math.h> macros (a bare `nan` or `inf` is not C); negative values are parenthesised so they can
// follow any operator.
void appendLiteral(std::string& c, double v) {
  if (std::isnan(v)) {
    c += std::signbit(v) ? "(-NAN)" : "NAN";
    return;
  }
  if (std::isinf(v)) {
    c += v < 0 ? "(-INFINITY)" : "INFINITY";
    return;
  }
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  const std::string_view text(buf, static_cast<std::size_t>(res.ptr - buf));
  const bool negative = text.front() == '-';
  if (negative) c += '(';
  c += text;
  if (text.find_first_of(".e") == std::string_view::npos) c += ".0";  // a double, not an int
  if (negative) c += ')';
}

std::string cLiteral(double v) {
  std::string c;
  appendLiteral(c, v);
  return c;
}

void appendNumber(std::string& c, std::uint64_t k) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, k);
  c.append(buf, res.ptr);
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

// Emission writes into one growing string: it runs on the loading thread of every run whose
// model is in the compiled-model cache (the key is the hash of the C), so it is part of every
// run's start (docs/native-cache.md).
template <class SlotRef>
void Tape::appendCExpression(std::string& c, const Instr& ins, SlotRef&& sl) const {
  auto text = [&](std::uint32_t k) {
    std::string t;
    sl(k, t);
    return t;
  };
  // `open` then the two slots, comma-separated: "pow(a, b", "sensode_powlog(a, b", ...
  auto twoSlots = [&](const char* open, std::uint32_t a, std::uint32_t b) {
    c += open;
    sl(a, c);
    c += ", ";
    sl(b, c);
  };
  switch (ins.op) {
    case kLinComb:
      appendLiteral(c, ins.c);
      for (std::uint32_t k = 0; k < ins.b; ++k) {
        c += " + ";
        appendLiteral(c, coefs_[ins.a + k]);
        c += '*';
        sl(args_[ins.a + k], c);
      }
      break;
    case kProdDiv:
      appendLiteral(c, ins.c);
      for (std::uint32_t k = 0; k < ins.b; ++k) {
        c += '*';
        sl(args_[ins.a + k], c);
      }
      if (ins.n2) {
        c += "/(1.0";
        for (std::uint32_t k = 0; k < ins.n2; ++k) {
          c += '*';
          sl(args_[ins.a + ins.b + k], c);
        }
        c += ')';
      }
      break;
    case kSquare:
      sl(ins.a, c);
      c += '*';
      sl(ins.a, c);
      break;
    case kRecip:
      c += "1.0/";
      sl(ins.a, c);
      break;
    case kSqrt:
      c += "sqrt(";
      sl(ins.a, c);
      c += ')';
      break;
    case kPowInt: c += cIntegerPower(text(ins.a), static_cast<int>(ins.c)); break;
    case kPowConst:
      c += "pow(";
      sl(ins.a, c);
      c += ", ";
      appendLiteral(c, ins.c);
      c += ')';
      break;
    case kPow:
      twoSlots("pow(", ins.a, ins.b);
      c += ')';
      break;
    case kPowLog:
      twoSlots("sensode_powlog(", ins.a, ins.b);
      c += ", " + std::to_string(static_cast<int>(ins.c)) + ")";
      break;
    case kPowStep:
      twoSlots("sensode_powstep(", ins.a, ins.b);
      c += ", " + std::to_string(static_cast<int>(ins.c)) + ", ";
      sl(ins.n2, c);
      c += ')';
      break;
    case kUnary: {
      const Op op = static_cast<Op>(ins.n2);
      const char* name = op == Op::Exp     ? "exp("
                         : op == Op::Log   ? "log("
                         : op == Op::Sin   ? "sin("
                         : op == Op::Cos   ? "cos("
                         : op == Op::Tanh  ? "tanh("
                         : op == Op::Abs   ? "fabs("
                         : op == Op::Floor ? "floor("
                         : op == Op::Ceil  ? "ceil("
                                           : nullptr;
      if (name) c += name;
      else c += "sensode_unary(" + std::to_string(static_cast<int>(op)) + ", ";
      sl(ins.a, c);
      c += ')';
      break;
    }
    case kBinary: {
      const Op op = static_cast<Op>(ins.n2);
      const char* rel = op == Op::Lt ? "<" : op == Op::Le ? "<=" : op == Op::Gt ? ">"
                      : op == Op::Ge ? ">=" : op == Op::Eq ? "==" : op == Op::Ne ? "!=" : nullptr;
      if (rel) {
        c += "(double)(";
        sl(ins.a, c);
        c += ' ';
        c += rel;
        c += ' ';
        sl(ins.b, c);
        c += ')';
      } else {
        c += "sensode_binary(" + std::to_string(static_cast<int>(op)) + ", ";
        twoSlots("", ins.a, ins.b);
        c += ')';
      }
      break;
    }
    case kNary: {
      const Op op = static_cast<Op>(ins.n2);
      std::string acc = text(args_[ins.a]);
      for (std::uint32_t k = 1; k < ins.b; ++k) {
        const std::string y = text(args_[ins.a + k]);
        if (op == Op::Min) acc = "sensode_min(" + acc + ", " + y + ")";
        else if (op == Op::Max) acc = "sensode_max(" + acc + ", " + y + ")";
        else if (op == Op::And) acc = "(double)((" + acc + ") != 0 && " + y + " != 0)";
        else if (op == Op::Or) acc = "(double)((" + acc + ") != 0 || " + y + " != 0)";
        else acc = "(double)(((" + acc + ") != 0) != (" + y + " != 0))";
      }
      if (ins.b == 1 && (op == Op::And || op == Op::Or || op == Op::Xor))
        acc = "(double)(" + acc + " != 0)";
      c += acc;
      break;
    }
    case kSelect: {
      for (std::uint32_t k = 0; k + 1 < ins.b; k += 2) {
        c += '(';
        sl(args_[ins.a + k + 1], c);
        c += " != 0) ? ";
        sl(args_[ins.a + k], c);
        c += " : ";
      }
      sl(args_[ins.a + ins.b - 1], c);
      break;
    }
    default: c += "NAN";
  }
}

template <class Read>
void Tape::forEachSlotRead(const Instr& ins, Read&& read) const {
  switch (ins.op) {
    case kLinComb:
    case kSelect:
      for (std::uint32_t k = 0; k < ins.b; ++k) read(args_[ins.a + k]);
      break;
    case kNary:  // the first argument is read even when the count is 0, as appendCExpression does
      read(args_[ins.a]);
      for (std::uint32_t k = 1; k < ins.b; ++k) read(args_[ins.a + k]);
      break;
    case kProdDiv:
      for (std::uint32_t k = 0; k < ins.b + ins.n2; ++k) read(args_[ins.a + k]);
      break;
    case kSquare:
    case kRecip:
    case kSqrt:
    case kPowInt:
    case kPowConst:
    case kUnary: read(ins.a); break;
    case kPow:
    case kPowLog:
    case kBinary:
      read(ins.a);
      read(ins.b);
      break;
    case kPowStep:
      read(ins.a);
      read(ins.b);
      read(ins.n2);
      break;
    default: break;
  }
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
  auto sl = [](std::uint32_t k, std::string& out) {
    out += "s[";
    appendNumber(out, k);
    out += ']';
  };
  std::string statement;
  for (const Instr& ins : code_) {
    statement = "  ";
    sl(ins.out, statement);
    statement += " = ";
    appendCExpression(statement, ins, sl);
    c << statement << ";\n";
  }
  for (std::size_t i = 0; i < outputSlots_.size(); ++i)
    c << "  out[" << i << "] = s[" << outputSlots_[i] << "];\n";
  c << "}\n";
  return c.str();
}

std::string Tape::emitCScratch(const std::string& name, std::size_t chunkStatements) const {
  std::string c;
  appendCScratch(c, name, chunkStatements);
  return c;
}

void Tape::appendCScratch(std::string& c, const std::string& name,
                          std::size_t chunkStatements) const {
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
  for (std::size_t k = 0; k < numStatements; ++k) {
    // A value read in a later chunk than its own goes through the scratch array.
    auto note = [&](std::uint32_t slot) {
      if (kind[slot] == kTemp && current[slot] / chunk != k / chunk) stored[current[slot]] = true;
    };
    if (k < code_.size()) {
      forEachSlotRead(code_[k], note);
      current[code_[k].out] = static_cast<std::uint32_t>(k);
    } else {
      note(outputSlots_[k - code_.size()]);
    }
  }

  c.reserve(c.size() + 64 * numStatements + 256);
  std::fill(current.begin(), current.end(), UINT32_MAX);
  std::size_t k = 0;
  auto ref = [&](std::uint32_t slot, std::string& out) {
    switch (kind[slot]) {
      case kConst: appendLiteral(out, slots_[slot]); return;
      case kTime: out += 't'; return;
      case kX:
        out += "x[";
        appendNumber(out, inputIndex[slot]);
        out += ']';
        return;
      case kP:
        out += "p[";
        appendNumber(out, inputIndex[slot]);
        out += ']';
        return;
      default: break;
    }
    const std::uint32_t v = current[slot];
    if (v / chunk == k / chunk) {
      out += 'v';
      appendNumber(out, v);
    } else {
      out += "s[";
      appendNumber(out, slot);
      out += ']';
    }
  };
  const std::size_t numChunks = std::max<std::size_t>(1, (numStatements + chunk - 1) / chunk);
  const char* params =
      "(double t, const double* restrict x, const double* restrict p, double* restrict out, "
      "double* restrict s)";
  for (std::size_t ch = 0; ch < numChunks; ++ch) {
    if (numChunks > 1) {
      c += "static __attribute__((noinline)) void " + name + "_";
      appendNumber(c, ch);
    } else {
      c += "void " + name;
    }
    c += params;
    c += " {\n  (void)t; (void)x; (void)p; (void)out; (void)s;\n";
    for (k = ch * chunk; k < std::min(numStatements, (ch + 1) * chunk); ++k) {
      if (k < code_.size()) {
        const Instr& ins = code_[k];
        c += "  const double v";
        appendNumber(c, k);
        c += " = ";
        appendCExpression(c, ins, ref);
        c += ";\n";
        current[ins.out] = static_cast<std::uint32_t>(k);
        if (stored[k]) {
          c += "  s[";
          appendNumber(c, ins.out);
          c += "] = v";
          appendNumber(c, k);
          c += ";\n";
        }
      } else {
        const std::size_t i = k - code_.size();
        c += "  out[";
        appendNumber(c, i);
        c += "] = ";
        ref(outputSlots_[i], c);
        c += ";\n";
      }
    }
    c += "}\n";
  }
  if (numChunks > 1) {
    c += "void " + name + params + " {\n";
    for (std::size_t ch = 0; ch < numChunks; ++ch) {
      c += "  " + name + "_";
      appendNumber(c, ch);
      c += "(t, x, p, out, s);\n";
    }
    c += "}\n";
  }
}

}  // namespace sensode::symbolic
