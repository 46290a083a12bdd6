// SPDX-License-Identifier: MIT
#include "core/petab/formula.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/petab/petab_problem.h"

namespace sensode::petab {

using symbolic::Expr;
using symbolic::ExprPool;
using symbolic::Op;

namespace {

class FormulaParser {
 public:
  FormulaParser(const std::string& text, ExprPool& pool,
                const std::function<Expr(const std::string&)>& resolve, const std::string& where)
      : s_(text), pool_(pool), resolve_(resolve), where_(where) {}

  Expr parse() {
    const Expr e = expression();
    skip();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw PetabError(where_ + ": cannot parse formula '" + s_ + "' at position " +
                     std::to_string(pos_ + 1) + ": " + why);
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(const char* token) {
    skip();
    const std::size_t n = std::char_traits<char>::length(token);
    if (s_.compare(pos_, n, token) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }
  Expr expression() {
    Expr e = term();
    for (;;) {
      if (accept("+")) e = pool_.add(e, term());
      else if (accept("-")) e = pool_.sub(e, term());
      else return e;
    }
  }
  Expr term() {
    Expr e = unary();
    for (;;) {
      skip();
      if (s_.compare(pos_, 2, "**") == 0) return e;  // handled in power()
      if (accept("*")) e = pool_.mul(e, unary());
      else if (accept("/")) e = pool_.div(e, unary());
      else return e;
    }
  }
  Expr unary() {
    if (accept("-")) return pool_.neg(unary());
    if (accept("+")) return unary();
    return power();
  }
  Expr power() {
    const Expr base = primary();
    if (accept("^") || accept("**")) return pool_.pow(base, unary());  // right-associative
    return base;
  }
  Expr primary() {
    skip();
    if (pos_ >= s_.size()) fail("unexpected end");
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      const Expr e = expression();
      if (!accept(")")) fail("missing ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = pos_;
      while (end < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_'))
        ++end;
      const std::string id = s_.substr(pos_, end - pos_);
      pos_ = end;
      if (accept("(")) return call(id);
      if (id == "inf" || id == "INF") return pool_.constant(INFINITY);
      return resolve_(id);
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
  Expr number() {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) fail("bad number");
    pos_ += static_cast<std::size_t>(end - begin);
    return pool_.constant(v);
  }
  Expr call(const std::string& name) {
    std::vector<Expr> args;
    if (!accept(")")) {
      do args.push_back(expression());
      while (accept(","));
      if (!accept(")")) fail("missing ')' after the arguments of " + name);
    }
    const auto want = [&](std::size_t n) {
      if (args.size() != n)
        fail(name + " takes " + std::to_string(n) + " argument(s), got " +
             std::to_string(args.size()));
    };
    static const std::map<std::string, Op> unaryOps = {
        {"exp", Op::Exp},   {"ln", Op::Log},     {"abs", Op::Abs},   {"sin", Op::Sin},
        {"cos", Op::Cos},   {"tan", Op::Tan},    {"sinh", Op::Sinh}, {"cosh", Op::Cosh},
        {"tanh", Op::Tanh}, {"floor", Op::Floor}, {"ceil", Op::Ceil}};
    if (auto it = unaryOps.find(name); it != unaryOps.end()) {
      want(1);
      return pool_.unary(it->second, args[0]);
    }
    if (name == "log") {
      if (args.size() == 1) return pool_.unary(Op::Log, args[0]);
      want(2);
      return pool_.logBase(args[1], args[0]);
    }
    if (name == "log10") {
      want(1);
      return pool_.log10(args[0]);
    }
    if (name == "log2") {
      want(1);
      return pool_.logBase(pool_.constant(2), args[0]);
    }
    if (name == "sqrt") {
      want(1);
      return pool_.sqrt(args[0]);
    }
    if (name == "pow") {
      want(2);
      return pool_.pow(args[0], args[1]);
    }
    fail("unsupported function '" + name + "'");
  }

  const std::string& s_;
  ExprPool& pool_;
  const std::function<Expr(const std::string&)>& resolve_;
  const std::string& where_;
  std::size_t pos_ = 0;
};

}  // namespace

Expr parseFormula(const std::string& text, ExprPool& pool,
                  const std::function<Expr(const std::string&)>& resolve,
                  const std::string& where) {
  FormulaParser parser(text, pool, resolve, where);
  return parser.parse();
}

}  // namespace sensode::petab
