// SPDX-License-Identifier: MIT
#include "core/symbolic/tape.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "core/common/errors.h"

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
  // Operands a node's instruction reads (after fusion).
  std::vector<Term> terms;
  std::vector<Expr> num, den;
  auto operands = [&](Expr e, std::vector<Expr>& out) {
    out.clear();
    const Node& n = pool.node(e);
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
    } else {
      for (Expr c : pool.children(e)) out.push_back(c);
    }
  };

  // ---- topological order of the reachable nodes (iterative post-order) -------------------
  std::vector<Expr> order;
  std::unordered_map<Expr, int> state;  // 1 = on stack, 2 = done
  std::vector<std::pair<Expr, bool>> stack;
  std::vector<Expr> ops;
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

  // ---- slots: inputs and constants first, then temporaries with reuse ----------------------
  std::unordered_map<Expr, std::uint32_t> slotOf;
  std::vector<double> initial;
  auto newSlot = [&](double v) {
    initial.push_back(v);
    return static_cast<std::uint32_t>(initial.size() - 1);
  };
  std::unordered_map<Expr, int> xIndex, pIndex;
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
      } else if (auto it = xIndex.find(e); it != xIndex.end()) {
        xInputs_.push_back({s, static_cast<std::uint32_t>(it->second)});
      } else if (auto jt = pIndex.find(e); jt != pIndex.end()) {
        pInputs_.push_back({s, static_cast<std::uint32_t>(jt->second)});
      } else {
        throw Error("internal: symbol '" + pool.symbolName(n.symbol) +
                    "' is neither time, a state nor a parameter");
      }
    }
  }
  // Last use of each node, so temporaries can be recycled (keeps the slot array small enough to
  // stay in cache on large models). Roots are never recycled.
  std::unordered_map<Expr, std::size_t> lastUse;
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
        args_.push_back(slotOf.at(c));
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
          args_.push_back(slotOf.at(t.child));
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
        ins.a = slotOf.at(base);
        if (pool.isConstant(ex)) {
          const double k = pool.node(ex).value;
          ins.c = k;
          if (k == 2.0) ins.op = kSquare;
          else if (k == -1.0) ins.op = kRecip;
          else if (k == 0.5) ins.op = kSqrt;
          else if (isInteger(k)) ins.op = kPowInt;
          else ins.op = kPowConst;
        } else {
          ins.op = kPow;
          ins.b = slotOf.at(ex);
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
      case Op::Piecewise: {
        ins.op = kSelect;
        std::vector<Expr> all(pool.children(e).begin(), pool.children(e).end());
        pushArgs(all);
        ins.b = static_cast<std::uint32_t>(all.size());
        break;
      }
      default:
        ins.n2 = static_cast<std::uint32_t>(n.op);
        ins.a = slotOf.at(pool.children(e)[0]);
        if (n.numChildren == 1) {
          ins.op = kUnary;
        } else {
          ins.op = kBinary;
          ins.b = slotOf.at(pool.children(e)[1]);
        }
    }
    // Recycle operand slots whose last use is this instruction (after reading them: the output
    // may safely reuse one of its own operands' slots because each op reads all before writing).
    operands(e, ops);
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    for (Expr c : ops) {
      const Node& cn = pool.node(c);
      if (cn.op != Op::Constant && cn.op != Op::Symbol && lastUse.at(c) == i)
        freeSlots.push_back(slotOf.at(c));
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
  for (Expr r : roots) outputSlots_.push_back(slotOf.at(r));
  slots_ = std::move(initial);
}

void Tape::evaluate(double t, const double* x, const double* p, double* out) const {
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

std::string Tape::emitC(const std::string& name) const {
  // One C statement per instruction over a local slot array; the C compiler then does its own
  // register allocation. Opcodes without a direct C form call the same libm functions.
  std::ostringstream c;
  c.precision(17);
  c << "void " << name << "(double t, const double* x, const double* p, double* out) {\n";
  c << "  double s[" << std::max<std::size_t>(slots_.size(), 1) << "];\n";
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i] != 0.0) c << "  s[" << i << "] = " << slots_[i] << ";\n";
  if (tSlot_ != UINT32_MAX) c << "  s[" << tSlot_ << "] = t;\n";
  c << "  (void)t; (void)x; (void)p;\n";
  for (const auto& in : xInputs_) c << "  s[" << in.slot << "] = x[" << in.index << "];\n";
  for (const auto& in : pInputs_) c << "  s[" << in.slot << "] = p[" << in.index << "];\n";
  auto sl = [](std::uint32_t k) { return "s[" + std::to_string(k) + "]"; };
  for (const Instr& ins : code_) {
    c << "  " << sl(ins.out) << " = ";
    switch (ins.op) {
      case kLinComb:
        c << ins.c;
        for (std::uint32_t k = 0; k < ins.b; ++k)
          c << " + " << coefs_[ins.a + k] << "*" << sl(args_[ins.a + k]);
        break;
      case kProdDiv:
        c << ins.c;
        for (std::uint32_t k = 0; k < ins.b; ++k) c << "*" << sl(args_[ins.a + k]);
        if (ins.n2) {
          c << "/(1.0";
          for (std::uint32_t k = 0; k < ins.n2; ++k) c << "*" << sl(args_[ins.a + ins.b + k]);
          c << ")";
        }
        break;
      case kSquare: c << sl(ins.a) << "*" << sl(ins.a); break;
      case kRecip: c << "1.0/" << sl(ins.a); break;
      case kSqrt: c << "sqrt(" << sl(ins.a) << ")"; break;
      case kPowInt:
      case kPowConst: c << "pow(" << sl(ins.a) << ", " << ins.c << ")"; break;
      case kPow: c << "pow(" << sl(ins.a) << ", " << sl(ins.b) << ")"; break;
      case kUnary: {
        const Op op = static_cast<Op>(ins.n2);
        switch (op) {
          case Op::Exp: c << "exp(" << sl(ins.a) << ")"; break;
          case Op::Log: c << "log(" << sl(ins.a) << ")"; break;
          case Op::Sin: c << "sin(" << sl(ins.a) << ")"; break;
          case Op::Cos: c << "cos(" << sl(ins.a) << ")"; break;
          case Op::Tanh: c << "tanh(" << sl(ins.a) << ")"; break;
          case Op::Abs: c << "fabs(" << sl(ins.a) << ")"; break;
          case Op::Floor: c << "floor(" << sl(ins.a) << ")"; break;
          case Op::Ceil: c << "ceil(" << sl(ins.a) << ")"; break;
          case Op::Sign: c << "(double)((" << sl(ins.a) << " > 0) - (" << sl(ins.a) << " < 0))"; break;
          default: c << "sensode_unary(" << static_cast<int>(op) << ", " << sl(ins.a) << ")";
        }
        break;
      }
      case kBinary: {
        const Op op = static_cast<Op>(ins.n2);
        const char* rel = op == Op::Lt ? "<" : op == Op::Le ? "<=" : op == Op::Gt ? ">"
                        : op == Op::Ge ? ">=" : op == Op::Eq ? "==" : op == Op::Ne ? "!=" : nullptr;
        if (rel) c << "(double)(" << sl(ins.a) << " " << rel << " " << sl(ins.b) << ")";
        else c << "sensode_binary(" << static_cast<int>(op) << ", " << sl(ins.a) << ", " << sl(ins.b) << ")";
        break;
      }
      case kNary: {
        const Op op = static_cast<Op>(ins.n2);
        std::string acc = sl(args_[ins.a]);
        for (std::uint32_t k = 1; k < ins.b; ++k) {
          const std::string y = sl(args_[ins.a + k]);
          if (op == Op::Min) acc = "fmin(" + acc + ", " + y + ")";
          else if (op == Op::Max) acc = "fmax(" + acc + ", " + y + ")";
          else if (op == Op::And) acc = "(double)((" + acc + ") != 0 && " + y + " != 0)";
          else if (op == Op::Or) acc = "(double)((" + acc + ") != 0 || " + y + " != 0)";
          else acc = "(double)(((" + acc + ") != 0) != (" + y + " != 0))";
        }
        if (ins.b == 1 && (op == Op::And || op == Op::Or || op == Op::Xor))
          acc = "(double)(" + acc + " != 0)";
        c << acc;
        break;
      }
      case kSelect: {
        for (std::uint32_t k = 0; k + 1 < ins.b; k += 2)
          c << "(" << sl(args_[ins.a + k + 1]) << " != 0) ? " << sl(args_[ins.a + k]) << " : ";
        c << sl(args_[ins.a + ins.b - 1]);
        break;
      }
      default: c << "0";
    }
    c << ";\n";
  }
  for (std::size_t i = 0; i < outputSlots_.size(); ++i)
    c << "  out[" << i << "] = " << sl(outputSlots_[i]) << ";\n";
  c << "}\n";
  return c.str();
}

}  // namespace sensode::symbolic
