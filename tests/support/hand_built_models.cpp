// SPDX-License-Identifier: MIT
#include "support/hand_built_models.h"

#include <QtTest/QtTest>

#include <span>

namespace sensode::testing {

using symbolic::Expr;

SystemBuilder::SystemBuilder() {
  sys_.pool = std::make_shared<symbolic::ExprPool>();
  sys_.time = sys_.pool->symbol("time");
}

Expr SystemBuilder::param(const std::string& id, double nominal, symbolic::ParamKind kind) {
  const Expr s = e().symbol(id);
  sys_.params.push_back({id, kind, nominal, s});
  return s;
}

Expr SystemBuilder::state(const std::string& id, Expr initial) {
  const Expr s = e().symbol(id);
  sys_.states.push_back({id, symbolic::StateKind::SpeciesAmount, s});
  sys_.initial.push_back(initial);
  sys_.rhs.push_back(e().zero());
  sys_.outputs.push_back({id, symbolic::OutputKind::Species, s, s, s});
  return s;
}

void SystemBuilder::rhs(Expr stateSymbol, Expr f) {
  for (std::size_t i = 0; i < sys_.states.size(); ++i) {
    if (sys_.states[i].symbol == stateSymbol) {
      sys_.rhs[i] = f;
      return;
    }
  }
  QFAIL("rhs(): not a state");
}

HandBuiltModel SystemBuilder::compile() {
  return std::make_shared<symbolic::CompiledModel>(std::move(sys_));
}

Expr mul(symbolic::ExprPool& e, std::initializer_list<Expr> f) {
  return e.mul(std::span<const Expr>(f.begin(), f.size()));
}
Expr add(symbolic::ExprPool& e, std::initializer_list<Expr> f) {
  return e.add(std::span<const Expr>(f.begin(), f.size()));
}

HandBuiltModel decayModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr k = b.param("k", 0.7);
  const Expr x = b.state("x", 2.0);
  b.rhs(x, e.neg(e.mul(k, x)));
  return b.compile();
}

HandBuiltModel michaelisMentenModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr k1 = b.param("k1", 1e3), k2 = b.param("k2", 1e2), k3 = b.param("k3", 1);
  const Expr E = b.state("E", 0.1), S = b.state("S", 1.0), C = b.state("C", 0.0),
             P = b.state("P", 0.0);
  const Expr v1 = mul(e, {k1, E, S}), v2 = e.mul(k2, C), v3 = e.mul(k3, C);
  b.rhs(E, add(e, {e.neg(v1), v2, v3}));
  b.rhs(S, e.add(e.neg(v1), v2));
  b.rhs(C, add(e, {v1, e.neg(v2), e.neg(v3)}));
  b.rhs(P, v3);
  return b.compile();
}

HandBuiltModel robertsonModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr k1 = b.param("k1", 0.04), k2 = b.param("k2", 1e4), k3 = b.param("k3", 3e7);
  const Expr y1 = b.state("y1", 1.0), y2 = b.state("y2", 0.0), y3 = b.state("y3", 0.0);
  const Expr r1 = e.mul(k1, y1), r2 = mul(e, {k2, y2, y3}), r3 = mul(e, {k3, y2, y2});
  b.rhs(y1, e.add(e.neg(r1), r2));
  b.rhs(y2, add(e, {r1, e.neg(r2), e.neg(r3)}));
  b.rhs(y3, r3);
  return b.compile();
}

HandBuiltModel repressilatorModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr a0 = b.param("alpha0", 0.216), al = b.param("alpha", 216), be = b.param("beta", 5),
             nh = b.param("n", 2);
  const Expr m1 = b.state("m1", 0.0), m2 = b.state("m2", 0.0), m3 = b.state("m3", 0.0);
  const Expr p1 = b.state("p1", 2.0), p2 = b.state("p2", 1.0), p3 = b.state("p3", 3.0);
  auto hill = [&](Expr rep) { return e.div(al, e.add(e.one(), e.pow(rep, nh))); };
  b.rhs(m1, add(e, {e.neg(m1), hill(p3), a0}));
  b.rhs(m2, add(e, {e.neg(m2), hill(p1), a0}));
  b.rhs(m3, add(e, {e.neg(m3), hill(p2), a0}));
  b.rhs(p1, e.neg(e.mul(be, e.sub(p1, m1))));
  b.rhs(p2, e.neg(e.mul(be, e.sub(p2, m2))));
  b.rhs(p3, e.neg(e.mul(be, e.sub(p3, m3))));
  return b.compile();
}

HandBuiltModel linear2Model() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr p0 = b.param("p0", 1000), p1 = b.param("p1", 1);
  const Expr y0 = b.state("y0", 1.0), y1 = b.state("y1", 1.0);
  b.rhs(y0, e.add(e.neg(e.mul(p0, y0)), e.mul(p1, y1)));
  b.rhs(y1, e.neg(e.mul(p1, y1)));
  return b.compile();
}

HandBuiltModel chuaModel() {
  SystemBuilder b;
  auto& e = b.e();
  const Expr p1 = b.param("p1", 7), p2 = b.param("p2", 15);
  const Expr x1 = b.state("x1", 0.0), x2 = b.state("x2", 0.0), x3 = b.state("x3", -0.1);
  // g(x1) = -(8/7) x1 + (4/63) x1^3
  const Expr g = e.add(e.mul(b.c(-8.0 / 7.0), x1), e.mul(b.c(4.0 / 63.0), e.pow(x1, b.c(3))));
  b.rhs(x1, e.mul(p1, add(e, {x2, e.neg(x1), e.neg(g)})));
  b.rhs(x2, add(e, {x1, e.neg(x2), x3}));
  b.rhs(x3, e.neg(e.mul(p2, x2)));
  return b.compile();
}

}  // namespace sensode::testing
