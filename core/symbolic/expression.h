// SPDX-License-Identifier: MIT
// The expression graph every model quantity is built from.
//
// An ExprPool owns hash-consed nodes: building the same node twice returns the same handle, so
// equal subexpressions are shared by construction (this is the first half of common-subexpression
// elimination; the tape compiler does the rest by evaluating each node once). Builders apply light
// simplification — constant folding, 0/1 identities, flattening of nested sums and products,
// canonical operand order — so `x*1`, `0+x` and `x+0` are all the node `x`.
//
// Derivatives are exact (symbolic) and memoised per (node, symbol): differentiating J·f after J
// reuses every ∂f/∂x node already built. Booleans are the numbers 0 and 1 (SBML semantics of
// relational operators inside arithmetic).
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace sensode::symbolic {

using Expr = std::uint32_t;  // handle of a node inside one ExprPool

enum class Op : std::uint8_t {
  Constant,  // value
  Symbol,    // a named leaf; symbolIndex says which
  Add,       // n-ary sum of children
  Mul,       // n-ary product of children
  Pow,       // children[0] ^ children[1]
  // Unary functions of children[0].
  Exp, Log, Sin, Cos, Tan, Sec, Csc, Cot, Sinh, Cosh, Tanh, Sech, Csch, Coth,
  ArcSin, ArcCos, ArcTan, ArcSec, ArcCsc, ArcCot,
  ArcSinh, ArcCosh, ArcTanh, ArcSech, ArcCsch, ArcCoth,
  Abs, Floor, Ceil, Factorial, Sign,
  // Binary.
  Rem,       // SBML L3V2 rem: a - b*trunc(a/b)
  Quotient,  // SBML L3V2 quotient: trunc(a/b)
  // n-ary.
  Min, Max,
  // Relational, value 0 or 1, binary.
  Lt, Le, Gt, Ge, Eq, Ne,
  // Logical, value 0 or 1 (children are tested against 0). And/Or/Xor n-ary, Not unary.
  And, Or, Xor, Not,
  // Piecewise: children = v1, c1, v2, c2, ..., vk, ck, otherwise (odd count; the last child is
  // the otherwise value, NaN when SBML gives none). The first piece whose condition is non-zero
  // wins.
  Piecewise,
  // u^v·(ln u)^k: children = u, v, k (k a constant integer >= 1). The guarded primitive of the
  // removable singularity at u = 0: for v > 0 its limit 0 there (0·(−∞) would be NaN). The
  // differentiator builds it for ∂(u^v)/∂v (Hill exponents at a species that is 0) and the
  // simplifier for products u^a·(ln u)^k with a > 0 (u·ln u). Value: powLog().
  PowLog,
  // SBML delay(x, τ): children = x (any expression), τ[, x before t0]. The value of x at t − τ on
  // the solution's history. The optional third child is x's history before t0 where it differs
  // from x with the states frozen at x0 (a rateOf inside x is 0 there, not the rate at x0).
  // Not evaluable from (t, x, p): symbolic/delays.h replaces every delay node by input symbols
  // that the simulation driver fills from its history before the tapes are built.
  Delay,
};

const char* opName(Op op);
// Value of `op` applied to evaluated children (folding, slow evaluation and tapes agree on it).
double applyOp(Op op, std::span<const double> childValues);
// u^v·(ln u)^k for integer k >= 1, 0 at u = 0 when v > 0 (the limit; 0·(−∞) otherwise),
// else pow(u, v) times ln u k times, in that order. The C prelude of Tape has the same body
// (the emitted evaluators must agree with the interpreter bit for bit).
double powLog(double u, double v, int k);

struct Node {
  Op op;
  double value = 0;          // Constant only
  std::uint32_t symbol = 0;  // Symbol only: index into the pool's symbol table
  std::uint32_t firstChild = 0, numChildren = 0;  // range inside the pool's child array
};

class ExprPool {
 public:
  ExprPool();

  // ---- leaves ----
  Expr constant(double v);
  Expr zero() const { return zero_; }
  Expr one() const { return one_; }
  // The symbol named `name`, created on first use. Names are unique within a pool.
  Expr symbol(const std::string& name);
  // The symbol if it exists, else nullopt-like: returns false and leaves out untouched.
  bool findSymbol(const std::string& name, Expr& out) const;
  std::uint32_t numSymbols() const { return static_cast<std::uint32_t>(symbolNames_.size()); }
  const std::string& symbolName(std::uint32_t symbolIndex) const { return symbolNames_[symbolIndex]; }
  Expr symbolExpr(std::uint32_t symbolIndex) const { return symbolNodes_[symbolIndex]; }

  // ---- arithmetic (simplifying builders) ----
  Expr add(Expr a, Expr b);
  Expr add(std::span<const Expr> terms);
  Expr sub(Expr a, Expr b);
  Expr mul(Expr a, Expr b);
  Expr mul(std::span<const Expr> factors);
  Expr div(Expr a, Expr b);
  Expr neg(Expr a);
  Expr pow(Expr base, Expr exponent);
  Expr sqrt(Expr a);
  Expr log10(Expr a);
  Expr logBase(Expr base, Expr a);  // log of a to base `base`
  Expr root(Expr degree, Expr a);   // a^(1/degree)
  // u^v·(ln u)^k (Op::PowLog; k = 0 is pow(u, v)).
  Expr powLog(Expr base, Expr exponent, int logPower);
  // delay(value, tau[, before]) (Op::Delay); the delay of a constant is that constant. `before`
  // (kNoExpr = none) is the value's history before t0 when it is not `value` with frozen states.
  static constexpr Expr kNoExpr = ~Expr{0};
  Expr delay(Expr value, Expr tau, Expr before = kNoExpr);

  // Any unary function op (Exp ... Sign) or Not.
  Expr unary(Op op, Expr a);
  // Rem, Quotient, Lt ... Ne (binary).
  Expr binary(Op op, Expr a, Expr b);
  // Min, Max, And, Or, Xor (n-ary; at least one argument).
  Expr nary(Op op, std::span<const Expr> args);
  // pieces = v1, c1, ..., vk, ck; otherwise may be nanExpr() when SBML gives none.
  Expr piecewise(std::span<const Expr> pieces, Expr otherwise);
  Expr nanExpr() { return constant(std::numeric_limits<double>::quiet_NaN()); }

  // ---- inspection ----
  const Node& node(Expr e) const { return nodes_[e]; }
  Op op(Expr e) const { return nodes_[e].op; }
  std::span<const Expr> children(Expr e) const {
    const Node& n = nodes_[e];
    return {children_.data() + n.firstChild, n.numChildren};
  }
  bool isConstant(Expr e) const { return nodes_[e].op == Op::Constant; }
  bool isConstant(Expr e, double v) const {
    return nodes_[e].op == Op::Constant && nodes_[e].value == v;
  }
  bool isSymbol(Expr e) const { return nodes_[e].op == Op::Symbol; }
  std::size_t size() const { return nodes_.size(); }

  // ---- transformation ----
  // Exact derivative of e with respect to the symbol node `sym`. Memoised.
  Expr diff(Expr e, Expr sym);
  // Replaces symbols by expressions (map keyed by symbol node). Memoised per call.
  Expr substitute(Expr e, const std::unordered_map<Expr, Expr>& replacement);
  // Rebuild of `e` through `rebuild` applied to each node bottom-up (children already mapped).
  // Used by substitute(); exposed for passes such as rateOf resolution.
  Expr rebuild(Expr e, std::unordered_map<Expr, Expr>& memo,
               const std::unordered_map<Expr, Expr>& leafMap);
  // Symbol nodes e depends on, sorted by handle.
  std::vector<Expr> dependencies(Expr e) const;
  // True when e depends on the symbol node sym.
  bool dependsOn(Expr e, Expr sym) const;

  // Numeric evaluation of e with symbol values given by `symbolValues` indexed by symbol index
  // (slow path for initial values and tests; compiled tapes are the fast path).
  double evaluate(Expr e, std::span<const double> symbolValues) const;

  // Readable infix text (for error messages, debugging and the C emitter's tests).
  std::string toString(Expr e) const;

 private:
  Expr intern(Op op, double value, std::uint32_t symbol, std::span<const Expr> kids);
  Expr diffNode(Expr e, Expr sym);
  Expr rebuildNode(Expr e, std::span<const Expr> kids);
  // An ordered map Expr → double in a sorted vector, for the builders' like terms and powers: a
  // std::map allocated a node per operand, and with the vectors around it malloc and free were
  // a fifth of loading a large model. collect() then sorted() gives each key the sum of its
  // values in the order they were collected, as map[key] += value did.
  class Weights {
   public:
    using Entry = std::pair<Expr, double>;
    explicit Weights(std::vector<Entry>& storage) : entries_(storage) {}
    void collect(Expr key, double value) { entries_.push_back({key, value}); }
    void sorted();
    std::vector<Entry>::iterator begin() { return entries_.begin(); }
    std::vector<Entry>::iterator end() { return entries_.end(); }
    std::vector<Entry>::iterator find(Expr key);
    std::size_t count(Expr key) { return find(key) != end() ? 1 : 0; }
    void erase(std::vector<Entry>::iterator it) { entries_.erase(it); }
    void erase(Expr key);
    double& operator[](Expr key);  // inserted as 0 when absent, in order
    std::size_t size() const { return entries_.size(); }

   private:
    std::vector<Entry>& entries_;
  };
  // Buffers the builders and diff() reuse, one per depth of their recursion (a Lease takes the
  // next and gives it back when it goes out of scope): allocating them afresh on every call was
  // most of the malloc and free above.
  template <class T>
  class ScratchPool {
   public:
    class Lease {
     public:
      explicit Lease(ScratchPool& pool) : pool_(pool), buffer_(pool.acquire()) {}
      ~Lease() { --pool_.used_; }
      Lease(const Lease&) = delete;
      Lease& operator=(const Lease&) = delete;
      std::vector<T>& operator*() { return buffer_; }

     private:
      ScratchPool& pool_;
      std::vector<T>& buffer_;
    };

   private:
    std::vector<T>& acquire() {
      if (used_ == buffers_.size()) buffers_.emplace_back();  // a deque keeps the others in place
      std::vector<T>& b = buffers_[used_++];
      b.clear();
      return b;
    }
    std::deque<std::vector<T>> buffers_;
    std::size_t used_ = 0;
  };
  ScratchPool<Expr> exprScratch_;
  ScratchPool<Weights::Entry> weightScratch_;
  void foldLogFactors(Weights& exponent);
  void mergeSymbolicPowers(Weights& exponent);

  std::vector<Node> nodes_;
  std::vector<Expr> children_;
  // Per node: bit (symbol index mod 64) set for every symbol it depends on. A clear bit proves
  // independence, which lets diff() skip whole subgraphs without a traversal.
  // 256-bit masks: with 64 bits, nodes over a few dozen symbols (rows of ẍ) have most bits set,
  // and three quarters of all derivative calls then ran on nodes that do not depend on the symbol.
  struct Mask {
    std::uint64_t w[4] = {0, 0, 0, 0};
    void add(const Mask& o) {
      for (int k = 0; k < 4; ++k) w[k] |= o.w[k];
    }
    bool intersects(const Mask& o) const {
      return ((w[0] & o.w[0]) | (w[1] & o.w[1]) | (w[2] & o.w[2]) | (w[3] & o.w[3])) != 0;
    }
  };
  std::vector<Mask> masks_;
  std::vector<std::string> symbolNames_;
  std::vector<Expr> symbolNodes_;
  std::unordered_map<std::string, std::uint32_t> symbolIndex_;
  // Hash-consing table: open addressing over node handles (handle + 1; 0 = empty), hashed and
  // compared by node content, so a lookup allocates nothing and touches one cache line.
  std::vector<Expr> internTable_;
  std::size_t internCount_ = 0;
  std::uint64_t hashContent(Op op, double value, std::uint32_t symbol,
                            std::span<const Expr> kids) const;
  void growInternTable();
  // Derivative memo, (node << 32 | symbol) → derivative, open addressing.
  struct MemoEntry {
    std::uint64_t key = ~std::uint64_t{0};
    Expr value = 0;
  };
  std::vector<MemoEntry> diffMemo_;
  std::size_t diffMemoCount_ = 0;
  const MemoEntry* findMemo(std::uint64_t key) const;
  void insertMemo(std::uint64_t key, Expr value);
  Expr zero_ = 0, one_ = 0;
};

}  // namespace sensode::symbolic
