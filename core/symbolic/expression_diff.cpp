// SPDX-License-Identifier: MIT
// ExprPool's differentiation (expression.h: diff): derivative rules per operation, memoised per
// (node, symbol), built with the simplifying builders of expression.cpp.
#include <cmath>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/symbolic/expression.h"

namespace sensode::symbolic {

namespace {
// An expression's or symbol's text as its model reads: the builder's "@x:" (state) and "@p:"
// (parameter) prefixes dropped, for messages (SBML ids contain neither '@' nor ':').
std::string asModelReads(std::string text) {
  for (const char* prefix : {"@x:", "@p:"}) {
    for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at))
      text.erase(at, 3);
  }
  return text;
}
}  // namespace

Expr ExprPool::diff(Expr e, Expr sym) {
  if (!isSymbol(sym)) throw Error("ExprPool::diff: can only differentiate by a symbol");
  // The dependency mask has no false negatives: a clear bit proves independence.
  if (!masks_[e].intersects(masks_[sym])) return zero_;
  if (e == sym) return one_;
  const std::uint64_t key = (static_cast<std::uint64_t>(e) << 32) | sym;
  if (const MemoEntry* m = findMemo(key)) return m->value;
  const Expr d = diffNode(e, sym);
  insertMemo(key, d);
  return d;
}

Expr ExprPool::diffNode(Expr e, Expr sym) {
  const Node n = nodes_[e];  // copy: building nodes may reallocate nodes_
  ScratchPool<Expr>::Lease childLease(exprScratch_);
  std::vector<Expr>& c = *childLease;  // a copy too: children_ may be reallocated
  c.assign(children(e).begin(), children(e).end());
  auto u = [&]() { return c[0]; };
  auto du = [&]() { return diff(c[0], sym); };
  auto sq = [&](Expr x) { return pow(x, constant(2.0)); };
  switch (n.op) {
    case Op::Constant: return zero_;
    case Op::Symbol: return e == sym ? one_ : zero_;
    case Op::Add: {
      ScratchPool<Expr>::Lease terms(exprScratch_);
      for (Expr x : c) (*terms).push_back(diff(x, sym));
      return add(*terms);
    }
    case Op::Mul: {
      ScratchPool<Expr>::Lease terms(exprScratch_), factors(exprScratch_);
      for (std::size_t i = 0; i < c.size(); ++i) {
        const Expr di = diff(c[i], sym);
        if (di == zero_) continue;
        std::vector<Expr>& f = *factors;
        f.clear();
        for (std::size_t j = 0; j < c.size(); ++j)
          if (j != i) f.push_back(c[j]);
        f.push_back(di);
        (*terms).push_back(mul(f));
      }
      return add(*terms);
    }
    case Op::Pow: {
      const Expr base = c[0], ex = c[1];
      const Expr db = diff(base, sym), de = diff(ex, sym);
      if (de == zero_) {  // d(u^k) = k·u^(k−1)·du
        if (db == zero_) return zero_;
        return mul(std::vector<Expr>{ex, pow(base, sub(ex, one_)), db});
      }
      // d(u^v) = v·u^(v−1)·u' + u^v·ln u·v', the last product the guarded u^v·ln u: at u = 0
      // (a Hill term of a species that is 0) it is the limit 0 for v > 0, where the textbook
      // u^v·(v'·ln u + v·u'/u) gives 0·(−∞) = NaN. A constant base c > 0 keeps c^v·ln c·v'.
      if (isConstant(base) && nodes_[base].value > 0)
        return mul(std::vector<Expr>{e, constant(std::log(nodes_[base].value)), de});
      const Expr t1 = mul(de, powLog(base, ex, 1));
      if (db == zero_) return t1;
      return add(t1, mul(std::vector<Expr>{ex, pow(base, sub(ex, one_)), db}));
    }
    case Op::PowLog: {
      // d(u^v·ln^k u) = u'·(v·u^(v−1)·ln^k u + k·u^(v−1)·ln^(k−1) u) + v'·u^v·ln^(k+1) u, every
      // term again guarded (its limit at u = 0 is 0 where the exponent of u is positive).
      const Expr base = c[0], ex = c[1];
      const int k = static_cast<int>(nodes_[c[2]].value);
      const Expr db = diff(base, sym), de = diff(ex, sym);
      std::vector<Expr> t;
      if (de != zero_) t.push_back(mul(de, powLog(base, ex, k + 1)));
      if (db != zero_) {
        const Expr exm1 = sub(ex, one_);
        t.push_back(mul(db, add(mul(ex, powLog(base, exm1, k)),
                                mul(constant(k), powLog(base, exm1, k - 1)))));
      }
      return add(t);
    }
    case Op::Exp: return mul(e, du());
    case Op::Log: return div(du(), u());
    case Op::Sin: return mul(unary(Op::Cos, u()), du());
    case Op::Cos: return neg(mul(unary(Op::Sin, u()), du()));
    case Op::Tan: return mul(add(one_, sq(e)), du());
    case Op::Sec: return mul(std::vector<Expr>{e, unary(Op::Tan, u()), du()});
    case Op::Csc: return neg(mul(std::vector<Expr>{e, unary(Op::Cot, u()), du()}));
    case Op::Cot: return neg(mul(sq(unary(Op::Csc, u())), du()));
    case Op::Sinh: return mul(unary(Op::Cosh, u()), du());
    case Op::Cosh: return mul(unary(Op::Sinh, u()), du());
    case Op::Tanh: return mul(sub(one_, sq(e)), du());
    case Op::Sech: return neg(mul(std::vector<Expr>{e, unary(Op::Tanh, u()), du()}));
    case Op::Csch: return neg(mul(std::vector<Expr>{e, unary(Op::Coth, u()), du()}));
    case Op::Coth: return neg(mul(sq(unary(Op::Csch, u())), du()));
    case Op::ArcSin: return div(du(), sqrt(sub(one_, sq(u()))));
    case Op::ArcCos: return neg(div(du(), sqrt(sub(one_, sq(u())))));
    case Op::ArcTan: return div(du(), add(one_, sq(u())));
    case Op::ArcCot: return neg(div(du(), add(one_, sq(u()))));
    case Op::ArcSec:
      return div(du(), mul(unary(Op::Abs, u()), sqrt(sub(sq(u()), one_))));
    case Op::ArcCsc:
      return neg(div(du(), mul(unary(Op::Abs, u()), sqrt(sub(sq(u()), one_)))));
    case Op::ArcSinh: return div(du(), sqrt(add(sq(u()), one_)));
    case Op::ArcCosh: return div(du(), sqrt(sub(sq(u()), one_)));
    case Op::ArcTanh:
    case Op::ArcCoth: return div(du(), sub(one_, sq(u())));
    case Op::ArcSech: return neg(div(du(), mul(u(), sqrt(sub(one_, sq(u()))))));
    case Op::ArcCsch: return neg(div(du(), mul(unary(Op::Abs, u()), sqrt(add(one_, sq(u()))))));
    case Op::Abs: return mul(unary(Op::Sign, u()), du());
    case Op::Floor:
    case Op::Ceil:
    case Op::Sign:
    case Op::Quotient:
      return zero_;  // piecewise constant: zero almost everywhere
    case Op::Factorial:
      if (du() == zero_) return zero_;
      throw Error("cannot differentiate factorial(" + asModelReads(toString(u())) +
                  ") with respect to '" + asModelReads(symbolName(nodes_[sym].symbol)) +
                  "': factorial of a varying argument is not supported");
    case Op::Rem:  // rem(a, b) = a − b·trunc(a/b), trunc piecewise constant
      return sub(diff(c[0], sym), mul(diff(c[1], sym), binary(Op::Quotient, c[0], c[1])));
    case Op::Min:
    case Op::Max: {
      // min(a, rest) = piecewise(a, a <= min(rest), min(rest)), differentiated piecewise.
      const Expr a = c[0];
      const Expr rest = nary(n.op, std::span<const Expr>(c).subspan(1));
      const Expr cond = binary(n.op == Op::Min ? Op::Le : Op::Ge, a, rest);
      const Expr p[2] = {diff(a, sym), cond};
      return piecewise(p, diff(rest, sym));
    }
    case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne:
    case Op::And: case Op::Or: case Op::Xor: case Op::Not:
      return zero_;
    case Op::Delay:
      // The driver's history supplies delayed values as input symbols (symbolic/delays.h), whose
      // derivatives the chain rule there adds; a delay node itself is never differentiated.
      if (!dependsOn(e, sym)) return zero_;
      throw Error("cannot differentiate " + asModelReads(toString(e)) + " with respect to '" +
                  asModelReads(symbolName(nodes_[sym].symbol)) + "' before its delay is resolved");
    case Op::Piecewise: {
      std::vector<Expr> p;
      for (std::size_t i = 0; i + 1 < c.size(); i += 2) {
        p.push_back(diff(c[i], sym));
        p.push_back(c[i + 1]);
      }
      return piecewise(p, diff(c.back(), sym));
    }
  }
  return zero_;
}

}  // namespace sensode::symbolic
