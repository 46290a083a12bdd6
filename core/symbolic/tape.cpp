// SPDX-License-Identifier: MIT
#include "core/symbolic/tape.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/common/errors.h"
#include "core/symbolic/power_families.h"
#include "core/symbolic/tape_ops.h"

namespace sensode::symbolic {
using namespace tape_ops;

namespace {

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
  // The denominator factors of the tape's products, each inverted once (kRecip) by a node of its
  // own past the pool's handles (poolSize + k, of factor reciprocalOf[k]); the products multiply
  // by it. Empty in the first ordering, which finds the products.
  const std::size_t poolSize = pool.size();
  std::vector<Expr> reciprocalOf;
  // Per pool node: its reciprocal's handle (0: none; no reciprocal has handle 0), and whether a
  // relational operator compares it: such a product keeps its division (a/b and a·(1/b) can
  // differ in the last bit, and x/V ≥ 1 must hold where x = V). Arrays, not hash maps: the sorts
  // look them up for every factor of every product.
  std::vector<Expr> reciprocalHandle;
  std::vector<std::uint8_t> comparedExactly;
  auto isReciprocal = [&](Expr e) { return e >= poolSize; };
  // Moves the denominator factors that have a reciprocal to the numerator as that node.
  auto shareReciprocals = [&](Expr e, std::vector<Expr>& num, std::vector<Expr>& den) {
    if (reciprocalOf.empty() || comparedExactly[e]) return;
    std::size_t kept = 0;
    for (Expr d : den) {
      if (const Expr r = reciprocalHandle[d]; r != 0) num.push_back(r);
      else den[kept++] = d;
    }
    den.resize(kept);
  };
  // Powers computed from a higher power of the same base (power_families.h): empty in the first
  // ordering, which finds the nodes the families are formed among.
  std::unordered_map<Expr, PowerStep> powerSteps;
  // Operands a node's instruction reads (after fusion).
  std::vector<Term> terms;
  std::vector<Expr> num, den;
  auto operands = [&](Expr e, std::vector<Expr>& out) {
    out.clear();
    if (isReciprocal(e)) {
      out.push_back(reciprocalOf[e - poolSize]);
      return;
    }
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
      shareReciprocals(e, num, den);
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
  // Shared reciprocals. Derivatives multiply denominators: Alkan's J/J_J pair divided 1145 times a
  // call by products of only 24 distinct factors (compartment sizes, Michaelis–Menten sums), and
  // a division costs the time of several multiplications. Each factor is inverted once and the
  // products multiply by its reciprocal. Every product does so, whatever else the tape holds, so
  // a value has the same bits in every tape that computes it (f alone and f beside ẍ).
  // Rounding: a·(1/b) is within an ulp or two of a/b (where b is not subnormal: 1/b overflows
  // below 2^-1024, where a/b of a tiny a need not).
  {
    double c;
    comparedExactly.assign(poolSize, 0);
    for (Expr e : order) {
      const Node& n = pool.node(e);
      if (n.op >= Op::Lt && n.op <= Op::Ne)
        for (Expr child : pool.children(e))
          if (pool.node(child).op == Op::Mul) comparedExactly[child] = 1;
    }
    std::vector<std::uint8_t> divides(poolSize, 0);
    for (Expr e : order) {
      if (pool.node(e).op != Op::Mul || comparedExactly[e]) continue;
      productFactors(e, c, num, den);
      for (Expr d : den) divides[d] = 1;
    }
    reciprocalHandle.assign(poolSize, 0);
    for (Expr e : order)
      if (divides[e] && pool.node(e).op != Op::Constant) {
        reciprocalHandle[e] = static_cast<Expr>(poolSize + reciprocalOf.size());
        reciprocalOf.push_back(e);
      }
  }
  state.assign(poolSize + reciprocalOf.size(), 0);
  if (!powerSteps.empty() || !reciprocalOf.empty()) sortTopologically();
  const std::size_t handles = poolSize + reciprocalOf.size();

  // ---- slots: inputs and constants first, then temporaries with reuse ----------------------
  std::vector<std::uint32_t> slotOf(handles, UINT32_MAX);
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
    if (isReciprocal(e)) continue;
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
  std::vector<std::size_t> lastUse(handles, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    operands(order[i], ops);
    for (Expr c : ops) lastUse[c] = i;
  }
  for (Expr r : roots) lastUse[r] = order.size();
  std::vector<std::uint32_t> freeSlots;

  for (std::size_t i = 0; i < order.size(); ++i) {
    const Expr e = order[i];
    const Node& n = pool.node(isReciprocal(e) ? reciprocalOf[e - poolSize] : e);
    if (!isReciprocal(e) && (n.op == Op::Constant || n.op == Op::Symbol)) continue;
    Instr ins{};
    auto pushArgs = [&](const std::vector<Expr>& list) {
      ins.a = static_cast<std::uint32_t>(args_.size());
      for (Expr c : list) {
        args_.push_back(slotFor(c));
        coefs_.push_back(1.0);
      }
    };
    switch (isReciprocal(e) ? Op::Constant : n.op) {
      case Op::Constant:  // a shared reciprocal
        ins.op = kRecip;
        ins.a = slotFor(reciprocalOf[e - poolSize]);
        break;
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
        shareReciprocals(e, num, den);
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
      const bool input = !isReciprocal(c) && (pool.node(c).op == Op::Constant ||
                                               pool.node(c).op == Op::Symbol);
      if (!input && lastUse[c] == i)
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

std::size_t Tape::numDivisions() const {
  return static_cast<std::size_t>(std::count_if(code_.begin(), code_.end(), [](const Instr& ins) {
    return ins.op == kRecip || (ins.op == kProdDiv && ins.n2 > 0) ||
           (ins.op == kPowInt && ins.c < 0);
  }));
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

}  // namespace sensode::symbolic
