// SPDX-License-Identifier: MIT
#include "core/symbolic/expression.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <string_view>
#include <cmath>
#include <map>
#include <sstream>

#include "core/common/errors.h"

namespace sensode::symbolic {
namespace {

bool isUnaryFunction(Op op) { return op >= Op::Exp && op <= Op::Sign; }
bool isRelational(Op op) { return op >= Op::Lt && op <= Op::Ne; }

double truthy(double v) { return v != 0.0 ? 1.0 : 0.0; }

double applyUnary(Op op, double x) {
  switch (op) {
    case Op::Exp: return std::exp(x);
    case Op::Log: return std::log(x);
    case Op::Sin: return std::sin(x);
    case Op::Cos: return std::cos(x);
    case Op::Tan: return std::tan(x);
    case Op::Sec: return 1.0 / std::cos(x);
    case Op::Csc: return 1.0 / std::sin(x);
    case Op::Cot: return 1.0 / std::tan(x);
    case Op::Sinh: return std::sinh(x);
    case Op::Cosh: return std::cosh(x);
    case Op::Tanh: return std::tanh(x);
    case Op::Sech: return 1.0 / std::cosh(x);
    case Op::Csch: return 1.0 / std::sinh(x);
    case Op::Coth: return 1.0 / std::tanh(x);
    case Op::ArcSin: return std::asin(x);
    case Op::ArcCos: return std::acos(x);
    case Op::ArcTan: return std::atan(x);
    case Op::ArcSec: return std::acos(1.0 / x);
    case Op::ArcCsc: return std::asin(1.0 / x);
    case Op::ArcCot: return std::atan(1.0 / x);
    case Op::ArcSinh: return std::asinh(x);
    case Op::ArcCosh: return std::acosh(x);
    case Op::ArcTanh: return std::atanh(x);
    case Op::ArcSech: return std::acosh(1.0 / x);
    case Op::ArcCsch: return std::asinh(1.0 / x);
    case Op::ArcCoth: return std::atanh(1.0 / x);
    case Op::Abs: return std::abs(x);
    case Op::Floor: return std::floor(x);
    case Op::Ceil: return std::ceil(x);
    case Op::Factorial: return std::tgamma(x + 1.0);
    case Op::Sign: return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case Op::Not: return x == 0.0 ? 1.0 : 0.0;
    default: return std::nan("");
  }
}

double applyBinary(Op op, double a, double b) {
  switch (op) {
    case Op::Pow: return std::pow(a, b);
    case Op::Rem: return std::fmod(a, b);
    case Op::Quotient: return std::trunc(a / b);
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    default: return std::nan("");
  }
}

}  // namespace

const char* opName(Op op) {
  static const char* names[] = {
      "const", "symbol", "+", "*", "pow", "exp", "ln", "sin", "cos", "tan", "sec", "csc", "cot",
      "sinh", "cosh", "tanh", "sech", "csch", "coth", "arcsin", "arccos", "arctan", "arcsec",
      "arccsc", "arccot", "arcsinh", "arccosh", "arctanh", "arcsech", "arccsch", "arccoth", "abs",
      "floor", "ceil", "factorial", "sign", "rem", "quotient", "min", "max", "<", "<=", ">", ">=",
      "==", "!=", "and", "or", "xor", "not", "piecewise", "powlog", "delay"};
  return names[static_cast<int>(op)];
}

double powLog(double u, double v, int k) {
  // The limit of u^v·ln^k u at u = 0 is 0 for v > 0 (u^v wins over any power of ln u); 0^v·ln 0
  // would be 0·(−∞) = NaN. For v <= 0 the product is infinite (or NaN) and stays so.
  if (u == 0.0 && v > 0.0) return 0.0;
  const double l = std::log(u);
  double r = std::pow(u, v);
  for (int i = 0; i < k; ++i) r *= l;
  return r;
}

// Numeric value of an op applied to already-evaluated children (shared by evaluate() and
// constant folding, so that folding and evaluation can never disagree).
double applyOp(Op op, std::span<const double> v) {
  switch (op) {
    case Op::Add: {
      double s = 0;
      for (double x : v) s += x;
      return s;
    }
    case Op::Mul: {
      double s = 1;
      for (double x : v) s *= x;
      return s;
    }
    case Op::Min: return *std::min_element(v.begin(), v.end());
    case Op::Max: return *std::max_element(v.begin(), v.end());
    case Op::And: {
      for (double x : v)
        if (x == 0.0) return 0.0;
      return 1.0;
    }
    case Op::Or: {
      for (double x : v)
        if (x != 0.0) return 1.0;
      return 0.0;
    }
    case Op::Xor: {
      double s = 0;
      for (double x : v) s += truthy(x);
      return std::fmod(s, 2.0);
    }
    case Op::Piecewise: {
      const std::size_t n = v.size();
      for (std::size_t i = 0; i + 1 < n; i += 2)
        if (v[i + 1] != 0.0) return v[i];
      return v[n - 1];
    }
    case Op::PowLog: return powLog(v[0], v[1], static_cast<int>(v[2]));
    default:
      if (v.size() == 1) return applyUnary(op, v[0]);
      return applyBinary(op, v[0], v[1]);
  }
}

// ---------------------------------------------------------------------------------------------
// Interning: nodes are looked up by content in an open-addressing table of handles, so a lookup
// allocates nothing.

namespace {
inline std::uint64_t mix(std::uint64_t h, std::uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}
inline std::size_t slotOf(std::uint64_t h, std::size_t mask) {
  return static_cast<std::size_t>((h ^ (h >> 29)) & mask);
}
}  // namespace

std::uint64_t ExprPool::hashContent(Op op, double value, std::uint32_t symbol,
                                    std::span<const Expr> kids) const {
  std::uint64_t h = mix(0x243f6a8885a308d3ull, static_cast<std::uint64_t>(op));
  h = mix(h, std::bit_cast<std::uint64_t>(value));
  h = mix(h, symbol);
  for (Expr k : kids) h = mix(h, k);
  return h;
}

void ExprPool::growInternTable() {
  std::vector<Expr> table(std::max<std::size_t>(1024, internTable_.size() * 2), 0);
  const std::size_t mask = table.size() - 1;
  for (Expr e = 0; e < nodes_.size(); ++e) {
    const Node& n = nodes_[e];
    std::size_t i = slotOf(hashContent(n.op, n.value, n.symbol, children(e)), mask);
    while (table[i] != 0) i = (i + 1) & mask;
    table[i] = e + 1;
  }
  internTable_ = std::move(table);
}

ExprPool::ExprPool() {
  zero_ = constant(0.0);
  one_ = constant(1.0);
}

Expr ExprPool::intern(Op op, double value, std::uint32_t symbol, std::span<const Expr> kids) {
  if ((internCount_ + 1) * 2 > internTable_.size()) growInternTable();
  const std::uint64_t valueBits = std::bit_cast<std::uint64_t>(value);
  const std::size_t mask = internTable_.size() - 1;
  std::size_t i = slotOf(hashContent(op, value, symbol, kids), mask);
  for (; internTable_[i] != 0; i = (i + 1) & mask) {
    const Expr c = internTable_[i] - 1;
    const Node& n = nodes_[c];
    if (n.op == op && std::bit_cast<std::uint64_t>(n.value) == valueBits && n.symbol == symbol &&
        n.numChildren == kids.size() &&
        std::equal(kids.begin(), kids.end(), children_.begin() + n.firstChild))
      return c;
  }
  // `kids` may point into children_ itself (a sub-range of an existing node), which the appends
  // below can reallocate: take a copy first.
  Expr small[8];
  std::vector<Expr> large;
  std::span<const Expr> src = kids;
  if (kids.size() <= 8) {
    std::copy(kids.begin(), kids.end(), small);
    src = std::span<const Expr>(small, kids.size());
  } else {
    large.assign(kids.begin(), kids.end());
    src = large;
  }
  Node n;
  n.op = op;
  n.value = value;
  n.symbol = symbol;
  n.firstChild = static_cast<std::uint32_t>(children_.size());
  n.numChildren = static_cast<std::uint32_t>(src.size());
  children_.insert(children_.end(), src.begin(), src.end());
  Mask m;
  if (op == Op::Symbol) {
    const std::uint32_t bit = static_cast<std::uint32_t>((symbol * 0x9e3779b1u) >> 24);  // 0..255
    m.w[bit >> 6] = 1ull << (bit & 63);
  }
  for (Expr k : src) m.add(masks_[k]);
  const Expr id = static_cast<Expr>(nodes_.size());
  nodes_.push_back(n);
  masks_.push_back(m);
  internTable_[i] = id + 1;
  ++internCount_;
  return id;
}

const ExprPool::MemoEntry* ExprPool::findMemo(std::uint64_t key) const {
  if (diffMemo_.empty()) return nullptr;
  const std::size_t mask = diffMemo_.size() - 1;
  for (std::size_t i = slotOf(mix(0, key), mask);; i = (i + 1) & mask) {
    if (diffMemo_[i].key == key) return &diffMemo_[i];
    if (diffMemo_[i].key == ~std::uint64_t{0}) return nullptr;
  }
}

void ExprPool::insertMemo(std::uint64_t key, Expr value) {
  if ((diffMemoCount_ + 1) * 2 > diffMemo_.size()) {
    std::vector<MemoEntry> old = std::move(diffMemo_);
    diffMemo_.assign(std::max<std::size_t>(1024, old.size() * 2), MemoEntry{});
    diffMemoCount_ = 0;
    for (const MemoEntry& e : old)
      if (e.key != ~std::uint64_t{0}) insertMemo(e.key, e.value);
  }
  const std::size_t mask = diffMemo_.size() - 1;
  std::size_t i = slotOf(mix(0, key), mask);
  while (diffMemo_[i].key != ~std::uint64_t{0} && diffMemo_[i].key != key) i = (i + 1) & mask;
  if (diffMemo_[i].key != key) ++diffMemoCount_;
  diffMemo_[i] = {key, value};
}

Expr ExprPool::constant(double v) {
  if (v == 0.0) v = 0.0;  // fold -0 into +0 so that both intern to one node
  return intern(Op::Constant, v, 0, {});
}

Expr ExprPool::symbol(const std::string& name) {
  auto it = symbolIndex_.find(name);
  if (it != symbolIndex_.end()) return symbolNodes_[it->second];
  const auto index = static_cast<std::uint32_t>(symbolNames_.size());
  symbolNames_.push_back(name);
  symbolIndex_.emplace(name, index);
  const Expr e = intern(Op::Symbol, 0.0, index, {});
  symbolNodes_.push_back(e);
  return e;
}

bool ExprPool::findSymbol(const std::string& name, Expr& out) const {
  auto it = symbolIndex_.find(name);
  if (it == symbolIndex_.end()) return false;
  out = symbolNodes_[it->second];
  return true;
}

// ---------------------------------------------------------------------------------------------
// Simplifying builders.

void ExprPool::Weights::sorted() {
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.first < b.first; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < entries_.size();) {
    const Expr key = entries_[i].first;
    double sum = 0;  // as map[key] += value from a value-initialised 0
    for (; i < entries_.size() && entries_[i].first == key; ++i) sum += entries_[i].second;
    entries_[out++] = {key, sum};
  }
  entries_.resize(out);
}

std::vector<ExprPool::Weights::Entry>::iterator ExprPool::Weights::find(Expr key) {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                   [](const Entry& e, Expr k) { return e.first < k; });
  return it != entries_.end() && it->first == key ? it : entries_.end();
}

void ExprPool::Weights::erase(Expr key) {
  if (const auto it = find(key); it != end()) entries_.erase(it);
}

double& ExprPool::Weights::operator[](Expr key) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, Expr k) { return e.first < k; });
  if (it == entries_.end() || it->first != key) it = entries_.insert(it, {key, 0.0});
  return it->second;
}

Expr ExprPool::add(Expr a, Expr b) {
  const Expr t[2] = {a, b};
  return add(std::span<const Expr>(t, 2));
}

Expr ExprPool::add(std::span<const Expr> terms) {
  // Flatten, fold constants and combine like terms c1·u + c2·u = (c1+c2)·u.
  double constantSum = 0;
  ScratchPool<Weights::Entry>::Lease weights(weightScratch_);
  Weights coefficient(*weights);  // ordered by handle: canonical operand order
  ScratchPool<Expr>::Lease stackLease(exprScratch_), outLease(exprScratch_);
  std::vector<Expr>& stack = *stackLease;
  stack.assign(terms.begin(), terms.end());
  while (!stack.empty()) {
    const Expr t = stack.back();
    stack.pop_back();
    const Node& n = nodes_[t];
    if (n.op == Op::Constant) {
      constantSum += n.value;
    } else if (n.op == Op::Add) {
      for (Expr c : children(t)) stack.push_back(c);
    } else {
      double c = 1;
      Expr base = t;
      if (n.op == Op::Mul && isConstant(children(t)[0])) {
        c = nodes_[children(t)[0]].value;
        auto rest = children(t).subspan(1);
        base = rest.size() == 1 ? rest[0] : intern(Op::Mul, 0, 0, rest);
      }
      coefficient.collect(base, c);
    }
  }
  coefficient.sorted();
  std::vector<Expr>& out = *outLease;
  if (constantSum != 0.0 || std::isnan(constantSum)) out.push_back(constant(constantSum));
  for (auto [base, c] : coefficient) {
    if (c == 0.0) continue;
    out.push_back(c == 1.0 ? base : mul(constant(c), base));
  }
  if (out.empty()) return zero_;
  if (out.size() == 1) return out[0];
  std::sort(out.begin(), out.end());
  return intern(Op::Add, 0, 0, out);
}

Expr ExprPool::sub(Expr a, Expr b) { return add(a, neg(b)); }
Expr ExprPool::neg(Expr a) { return mul(constant(-1.0), a); }

Expr ExprPool::mul(Expr a, Expr b) {
  const Expr t[2] = {a, b};
  return mul(std::span<const Expr>(t, 2));
}

Expr ExprPool::mul(std::span<const Expr> factors) {
  // Flatten, fold constants, drop ones, combine powers of one base: u^a·u^b = u^(a+b) for
  // constant exponents (so x·x is x^2 and x/x is 1).
  double coef = 1;
  ScratchPool<Weights::Entry>::Lease weights(weightScratch_);
  Weights exponent(*weights);
  ScratchPool<Expr>::Lease stackLease(exprScratch_), outLease(exprScratch_);
  std::vector<Expr>& stack = *stackLease;
  stack.assign(factors.begin(), factors.end());
  while (!stack.empty()) {
    const Expr f = stack.back();
    stack.pop_back();
    const Node& n = nodes_[f];
    if (n.op == Op::Constant) {
      coef *= n.value;
    } else if (n.op == Op::Mul) {
      for (Expr c : children(f)) stack.push_back(c);
    } else if (n.op == Op::Pow && isConstant(children(f)[1])) {
      exponent.collect(children(f)[0], nodes_[children(f)[1]].value);
    } else {
      exponent.collect(f, 1.0);
    }
  }
  if (coef == 0.0) return zero_;
  exponent.sorted();
  mergeSymbolicPowers(exponent);
  foldLogFactors(exponent);
  std::vector<Expr>& out = *outLease;
  for (auto [base, e] : exponent) {
    if (e == 0.0) continue;
    out.push_back(e == 1.0 ? base : pow(base, constant(e)));
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) return constant(coef);
  if (coef != 1.0) out.insert(out.begin(), constant(coef));
  if (out.size() == 1) return out[0];
  return intern(Op::Mul, 0, 0, out);
}

// Powers of one base with exponents that are not all constant, u^a·u^b·u^c, become u^(a+b+c):
// x^n·x^(n−1) (the quotient rule on a Hill term) is 0·∞ = NaN at x = 0 for n < 1, while
// x^(2n−1) is the limit (+∞ there, a genuinely infinite derivative that must stay infinite,
// not turn into NaN).
void ExprPool::mergeSymbolicPowers(Weights& exponent) {
  std::map<Expr, std::vector<std::pair<Expr, double>>> byBase;  // base → (power node, count)
  for (auto [f, e] : exponent) {
    if (nodes_[f].op == Op::Pow && !isConstant(children(f)[1]))
      byBase[children(f)[0]].push_back({f, e});
  }
  for (auto& [base, powers] : byBase) {
    const auto plain = exponent.find(base);
    if (powers.size() + (plain != exponent.end() ? 1 : 0) < 2) continue;
    std::vector<Expr> terms;
    if (plain != exponent.end()) {
      terms.push_back(constant(plain->second));
      exponent.erase(plain);
    }
    for (auto [f, count] : powers) {
      terms.push_back(mul(constant(count), children(f)[1]));
      exponent.erase(f);
    }
    const Expr merged = pow(base, add(terms));
    if (merged == one_) continue;
    if (nodes_[merged].op == Op::Pow && isConstant(children(merged)[1]))
      exponent[children(merged)[0]] += nodes_[children(merged)[1]].value;
    else
      exponent[merged] += 1.0;
  }
}

// (ln u)^k times u^a (constant a > 0), u^v (v not constant) or u^v·(ln u)^j in one product
// becomes the guarded u^v·(ln u)^k, whose value at u = 0 is the limit 0 instead of 0·(−∞) = NaN
// (u·ln u, x^n·ln x from ∂(x^n)/∂n divided by a denominator, ...). Only positive integer k:
// the other powers of ln u have no such limit to take.
void ExprPool::foldLogFactors(Weights& exponent) {
  std::vector<std::pair<Expr, double>> logs;
  for (auto [f, k] : exponent) {
    if (nodes_[f].op == Op::Log && k >= 1 && k <= 16 && k == std::floor(k)) logs.push_back({f, k});
  }
  for (auto [logNode, k] : logs) {
    if (!exponent.count(logNode)) continue;  // already folded as the base of another ln
    const Expr u = children(logNode)[0];
    Expr partner = 0, folded = 0;
    if (auto it = exponent.find(u); it != exponent.end() && it->second > 0) {
      partner = u;
      folded = powLog(u, constant(it->second), static_cast<int>(k));
    } else {
      for (auto [f, e] : exponent) {
        if (e != 1.0 || children(f).empty() || children(f)[0] != u) continue;
        if (nodes_[f].op == Op::Pow && !isConstant(children(f)[1])) {
          partner = f;
          folded = powLog(u, children(f)[1], static_cast<int>(k));
          break;
        }
        if (nodes_[f].op == Op::PowLog) {
          partner = f;
          folded = powLog(u, children(f)[1],
                          static_cast<int>(nodes_[children(f)[2]].value + k));
          break;
        }
      }
    }
    if (folded == 0) continue;
    exponent.erase(logNode);
    exponent.erase(partner);
    exponent[folded] += 1.0;
  }
}

Expr ExprPool::div(Expr a, Expr b) {
  if (isConstant(b) && isConstant(a)) return constant(nodes_[a].value / nodes_[b].value);
  return mul(a, pow(b, constant(-1.0)));
}

Expr ExprPool::pow(Expr base, Expr exponent) {
  if (isConstant(exponent)) {
    const double e = nodes_[exponent].value;
    if (e == 0.0) return one_;
    if (e == 1.0) return base;
    if (isConstant(base)) return constant(std::pow(nodes_[base].value, e));
    // (u^a)^e = u^(a·e) holds for integer e.
    if (nodes_[base].op == Op::Pow && isConstant(children(base)[1]) && e == std::floor(e))
      return pow(children(base)[0], constant(nodes_[children(base)[1]].value * e));
    // (c·u·v)^e = c^e·u^e·v^e for integer e keeps products flat.
    if (nodes_[base].op == Op::Mul && e == std::floor(e)) {
      const std::vector<Expr> factors(children(base).begin(), children(base).end());
      std::vector<Expr> f;
      for (Expr c : factors) f.push_back(pow(c, exponent));
      return mul(f);
    }
  } else if (isConstant(base, 1.0)) {
    return one_;
  }
  const Expr k[2] = {base, exponent};
  return intern(Op::Pow, 0, 0, k);
}

Expr ExprPool::sqrt(Expr a) { return pow(a, constant(0.5)); }
Expr ExprPool::log10(Expr a) { return div(unary(Op::Log, a), constant(std::log(10.0))); }
Expr ExprPool::logBase(Expr base, Expr a) { return div(unary(Op::Log, a), unary(Op::Log, base)); }
Expr ExprPool::root(Expr degree, Expr a) { return pow(a, div(one_, degree)); }

Expr ExprPool::powLog(Expr base, Expr exponent, int logPower) {
  if (logPower == 0) return pow(base, exponent);
  if (logPower < 0) throw Error("ExprPool::powLog: negative power of ln");
  if (isConstant(base, 1.0)) return zero_;
  const Expr k[3] = {base, exponent, constant(logPower)};
  if (isConstant(base) && isConstant(exponent))
    return constant(symbolic::powLog(nodes_[base].value, nodes_[exponent].value, logPower));
  return intern(Op::PowLog, 0, 0, k);
}

Expr ExprPool::unary(Op op, Expr a) {
  if (!isUnaryFunction(op) && op != Op::Not)
    throw Error(std::string("ExprPool::unary: not a unary operator: ") + opName(op));
  if (isConstant(a)) return constant(applyUnary(op, nodes_[a].value));
  if (op == Op::Exp && nodes_[a].op == Op::Log) return children(a)[0];
  return intern(op, 0, 0, std::span<const Expr>(&a, 1));
}

Expr ExprPool::binary(Op op, Expr a, Expr b) {
  if (op == Op::Pow) return pow(a, b);
  if (!(isRelational(op) || op == Op::Rem || op == Op::Quotient))
    throw Error(std::string("ExprPool::binary: not a binary operator: ") + opName(op));
  if (isConstant(a) && isConstant(b)) return constant(applyBinary(op, nodes_[a].value, nodes_[b].value));
  const Expr k[2] = {a, b};
  return intern(op, 0, 0, k);
}

Expr ExprPool::delay(Expr value, Expr tau, Expr before) {
  if (before == kNoExpr || before == value) {
    if (isConstant(value)) return value;
    const Expr k[2] = {value, tau};
    return intern(Op::Delay, 0, 0, k);
  }
  const Expr k[3] = {value, tau, before};
  return intern(Op::Delay, 0, 0, k);
}

Expr ExprPool::nary(Op op, std::span<const Expr> args) {
  if (!(op == Op::Min || op == Op::Max || op == Op::And || op == Op::Or || op == Op::Xor))
    throw Error(std::string("ExprPool::nary: not an n-ary operator: ") + opName(op));
  if (args.empty()) {
    if (op == Op::And) return one_;
    if (op == Op::Or || op == Op::Xor) return zero_;
    throw Error(std::string(opName(op)) + " needs at least one argument");
  }
  bool allConstant = true;
  std::vector<double> v;
  for (Expr a : args) {
    allConstant = allConstant && isConstant(a);
    if (allConstant) v.push_back(nodes_[a].value);
  }
  if (allConstant) return constant(applyOp(op, v));
  if (args.size() == 1 && (op == Op::Min || op == Op::Max)) return args[0];
  return intern(op, 0, 0, args);
}

Expr ExprPool::piecewise(std::span<const Expr> pieces, Expr otherwise) {
  std::vector<Expr> kept;
  for (std::size_t i = 0; i + 1 < pieces.size(); i += 2) {
    const Expr value = pieces[i], cond = pieces[i + 1];
    if (isConstant(cond)) {
      if (nodes_[cond].value == 0.0) continue;  // never taken
      otherwise = value;                        // always taken: later pieces are unreachable
      break;
    }
    kept.push_back(value);
    kept.push_back(cond);
  }
  bool allSame = true;
  for (std::size_t i = 0; i < kept.size(); i += 2) allSame = allSame && kept[i] == otherwise;
  if (kept.empty() || allSame) return otherwise;
  kept.push_back(otherwise);
  return intern(Op::Piecewise, 0, 0, kept);
}

// ---------------------------------------------------------------------------------------------
// Substitution, dependencies, evaluation, printing.

Expr ExprPool::rebuildNode(Expr e, std::span<const Expr> kids) {
  const Node n = nodes_[e];
  switch (n.op) {
    case Op::Constant:
    case Op::Symbol: return e;
    case Op::Add: return add(kids);
    case Op::Mul: return mul(kids);
    case Op::Pow: return pow(kids[0], kids[1]);
    case Op::Min: case Op::Max: case Op::And: case Op::Or: case Op::Xor: return nary(n.op, kids);
    case Op::Piecewise: return piecewise(kids.first(kids.size() - 1), kids.back());
    case Op::PowLog: return powLog(kids[0], kids[1], static_cast<int>(nodes_[kids[2]].value));
    case Op::Delay: return delay(kids[0], kids[1], kids.size() > 2 ? kids[2] : kNoExpr);
    default:
      if (kids.size() == 1) return unary(n.op, kids[0]);
      return binary(n.op, kids[0], kids[1]);
  }
}

Expr ExprPool::rebuild(Expr root, std::unordered_map<Expr, Expr>& memo,
                       const std::unordered_map<Expr, Expr>& leafMap) {
  // Iterative post-order: model expressions can be deep (long chains of assignment rules).
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  std::vector<Expr> kids;
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    if (memo.count(e)) {
      stack.pop_back();
      continue;
    }
    if (nodes_[e].op == Op::Symbol || nodes_[e].op == Op::Constant) {
      auto it = leafMap.find(e);
      memo[e] = it == leafMap.end() ? e : it->second;
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      stack.back().second = true;
      for (Expr c : children(e))
        if (!memo.count(c)) stack.push_back({c, false});
      continue;
    }
    stack.pop_back();
    kids.clear();
    bool same = true;
    for (Expr c : children(e)) {
      kids.push_back(memo.at(c));
      same = same && kids.back() == c;
    }
    memo[e] = same ? e : rebuildNode(e, kids);
  }
  return memo.at(root);
}

Expr ExprPool::substitute(Expr e, const std::unordered_map<Expr, Expr>& replacement) {
  std::unordered_map<Expr, Expr> memo;
  return rebuild(e, memo, replacement);
}

std::vector<Expr> ExprPool::dependencies(Expr e) const {
  // Visited marks are epoch stamps reused across calls (per thread), so one call costs the size
  // of e's subgraph, not the size of the pool.
  thread_local std::vector<std::uint32_t> stamp;
  thread_local std::uint32_t epoch = 0;
  if (stamp.size() < nodes_.size()) stamp.resize(nodes_.size() + nodes_.size() / 2, 0);
  if (++epoch == 0) {
    std::fill(stamp.begin(), stamp.end(), 0);
    epoch = 1;
  }
  std::vector<Expr> out;
  std::vector<Expr> stack{e};
  while (!stack.empty()) {
    const Expr x = stack.back();
    stack.pop_back();
    if (stamp[x] == epoch) continue;
    stamp[x] = epoch;
    if (nodes_[x].op == Op::Symbol) out.push_back(x);
    for (Expr c : children(x))
      if (stamp[c] != epoch) stack.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool ExprPool::dependsOn(Expr e, Expr sym) const {
  if (!masks_[e].intersects(masks_[sym])) return false;
  const auto deps = dependencies(e);
  return std::binary_search(deps.begin(), deps.end(), sym);
}

double ExprPool::evaluate(Expr root, std::span<const double> symbolValues) const {
  // The memo lives per thread and is stamped per call: the PEtab objective evaluates observable
  // formulas and their derivatives once per measurement, and a fresh hash map per call was a
  // quarter of a fit's time (Boehm). An entry counts only with this call's stamp.
  struct Scratch {
    std::vector<std::uint64_t> stamp;
    std::vector<double> value;
    std::vector<std::pair<Expr, bool>> stack;
    std::vector<double> args;
    std::uint64_t call = 0;
  };
  thread_local Scratch memo;
  if (memo.stamp.size() < nodes_.size()) {
    memo.stamp.resize(nodes_.size(), 0);
    memo.value.resize(nodes_.size());
  }
  const std::uint64_t call = ++memo.call;
  const auto known = [&](Expr e) { return memo.stamp[e] == call; };
  const auto store = [&](Expr e, double v) {
    memo.stamp[e] = call;
    memo.value[e] = v;
  };
  // Not reentrant (applyOp evaluates nothing), so the thread's stack starts empty.
  auto& stack = memo.stack;
  stack.clear();
  stack.push_back({root, false});
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    if (known(e)) {
      stack.pop_back();
      continue;
    }
    const Node& n = nodes_[e];
    if (n.op == Op::Constant || n.op == Op::Symbol) {
      store(e, n.op == Op::Constant
                   ? n.value
                   : (n.symbol < symbolValues.size() ? symbolValues[n.symbol] : std::nan("")));
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      stack.back().second = true;
      for (Expr c : children(e))
        if (!known(c)) stack.push_back({c, false});
      continue;
    }
    stack.pop_back();
    std::vector<double>& v = memo.args;
    v.clear();
    for (Expr c : children(e)) v.push_back(memo.value[c]);
    store(e, applyOp(n.op, v));
  }
  return memo.value[root];
}

std::string ExprPool::toString(Expr e) const {
  const Node& n = nodes_[e];
  std::ostringstream s;
  s.precision(17);
  auto kids = children(e);
  switch (n.op) {
    case Op::Constant: {
      // Shortest text that reads back as the same double (0.1, not 0.10000000000000001).
      char buf[32];
      const auto res = std::to_chars(buf, buf + sizeof buf, n.value);
      s << std::string_view(buf, static_cast<std::size_t>(res.ptr - buf));
      break;
    }
    case Op::Symbol: s << symbolNames_[n.symbol]; break;
    case Op::Add:
    case Op::Mul:
      s << '(';
      for (std::size_t i = 0; i < kids.size(); ++i) {
        if (i) s << (n.op == Op::Add ? " + " : "*");
        s << toString(kids[i]);
      }
      s << ')';
      break;
    case Op::Pow: s << toString(kids[0]) << '^' << toString(kids[1]); break;
    case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne:
      s << '(' << toString(kids[0]) << ' ' << opName(n.op) << ' ' << toString(kids[1]) << ')';
      break;
    default:
      s << opName(n.op) << '(';
      for (std::size_t i = 0; i < kids.size(); ++i) s << (i ? ", " : "") << toString(kids[i]);
      s << ')';
  }
  return s.str();
}

}  // namespace sensode::symbolic
