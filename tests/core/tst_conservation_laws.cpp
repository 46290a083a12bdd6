// SPDX-License-Identifier: MIT
// Conservation laws (NUMERICS.md §8.2): the measured RREF bases, non-integer and irrational
// stoichiometries, abundance ordering, reduce/expand with totals, species outside every reaction,
// a 2000 × 4000 random network, describe() strings, and a small-matrix property check.
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/model/conservation_laws.h"
#include "support/numeric_compare.h"

using sensode::model::ConservationLaws;
using sensode::model::findConservationLaws;

namespace {

Eigen::MatrixXd michaelisMenten() {
  // Species (E, S, C, P); reactions E+S→C, C→E+S, C→E+P.
  Eigen::MatrixXd n(4, 3);
  n << -1, 1, 1,  //
      -1, 1, 0,   //
      1, -1, -1,  //
      0, 0, 1;
  return n;
}

// Entry by entry, with `what` naming the quantity in failure messages.
bool matrixClose(const Eigen::MatrixXd& actual, const Eigen::MatrixXd& expected, double atol,
                 double rtol, const char* what) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
    qWarning("%s: shape %lldx%lld, expected %lldx%lld", what, static_cast<long long>(actual.rows()),
             static_cast<long long>(actual.cols()), static_cast<long long>(expected.rows()),
             static_cast<long long>(expected.cols()));
    return false;
  }
  for (Eigen::Index i = 0; i < actual.size(); ++i) {
    const double a = actual.data()[i], e = expected.data()[i];
    if (!sensode::test::withinTolerance(a, e, atol, rtol)) {
      qWarning("%s",
               sensode::test::closeMessage(a, e, atol, rtol, what, static_cast<long>(i)).c_str());
      return false;
    }
  }
  return true;
}

// The invariants that, together with count = nullity, pin the RREF down uniquely: Γ·N = 0, Γ is
// the identity on the dependent columns, and each row vanishes before its dependent species in
// the elimination order.
bool isRrefLeftNullSpace(const ConservationLaws& laws, const Eigen::MatrixXd& n,
                         const std::vector<int>& order, double tolerance) {
  if (laws.gamma.cols() != n.rows()) return false;
  if (laws.count() > 0 && n.cols() > 0 && (laws.gamma * n).cwiseAbs().maxCoeff() > tolerance)
    return false;
  std::vector<int> positionOf(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) positionOf[order[k]] = static_cast<int>(k);
  for (int r = 0; r < laws.count(); ++r) {
    for (int s = 0; s < laws.count(); ++s)
      if (laws.gamma(r, laws.dependent[s]) != (r == s ? 1.0 : 0.0)) return false;
    for (int c = 0; c < static_cast<int>(n.rows()); ++c)
      if (positionOf[c] < positionOf[laws.dependent[r]] && laws.gamma(r, c) != 0.0) return false;
    if (r > 0 && positionOf[laws.dependent[r]] <= positionOf[laws.dependent[r - 1]]) return false;
  }
  return laws.dependent.size() + laws.independent.size() == static_cast<std::size_t>(n.rows());
}

std::vector<int> identityOrder(int n) {
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  return order;
}

}  // namespace

class TestConservationLaws : public QObject {
  Q_OBJECT

 private slots:
  void michaelisMentenRref();
  void reversibleIsomerization();
  void nonIntegerStoichiometry();
  void irrationalCoefficientGoesNumeric();
  void hugeRationalEntriesGoNumericVerified();
  void abundanceChoosesDependentSpecies();
  void reduceExpandRoundTrip();
  void speciesInNoReaction();
  void noReactionsAndNoSpecies();
  void describeStrings();
  void invalidInputThrows();
  void smallRandomMatricesAreRref();
  void largeRandomNetwork();
};

void TestConservationLaws::michaelisMentenRref() {
  const ConservationLaws laws = findConservationLaws(michaelisMenten());
  QVERIFY(laws.exact);
  QCOMPARE(laws.count(), 2);
  Eigen::MatrixXd expected(2, 4);
  expected << 1, 0, 1, 0,  // E + C
      0, 1, 1, 1;          // S + C + P
  QVERIFY(matrixClose(laws.gamma, expected, 0, 0, "gamma"));
  QCOMPARE(laws.dependent, (std::vector<int>{0, 1}));
  QCOMPARE(laws.independent, (std::vector<int>{2, 3}));
  QCOMPARE(laws.describe({"E", "S", "C", "P"}), (std::vector<std::string>{"E + C", "S + C + P"}));
}

void TestConservationLaws::reversibleIsomerization() {
  Eigen::MatrixXd n(2, 2);
  n << -1, 1, 1, -1;
  const ConservationLaws laws = findConservationLaws(n);
  QVERIFY(laws.exact);
  QCOMPARE(laws.count(), 1);
  QVERIFY(matrixClose(laws.gamma, Eigen::RowVector2d(1, 1), 0, 0, "gamma"));
  QCOMPARE(laws.dependent, std::vector<int>{0});
  QCOMPARE(laws.independent, std::vector<int>{1});
}

void TestConservationLaws::nonIntegerStoichiometry() {
  // 0.5 A → 2 B, B → 2.5 C: a = 4b and c = 0.4b, i.e. 20 A + 5 B + 2 C is conserved.
  Eigen::MatrixXd n(3, 2);
  n << -0.5, 0,  //
      2, -1,     //
      0, 2.5;
  const ConservationLaws laws = findConservationLaws(n);
  QVERIFY(laws.exact);
  QCOMPARE(laws.count(), 1);
  // Rationals 1, 1/4, 1/10, each rounded to double once.
  QVERIFY(matrixClose(laws.gamma, Eigen::RowVector3d(1.0, 0.25, 0.1), 0, 0, "gamma"));
  QVERIFY((laws.gamma * n).cwiseAbs().maxCoeff() <= 1e-15);
  QCOMPARE(laws.describe({"A", "B", "C"}), std::vector<std::string>{"20 A + 5 B + 2 C"});
}

void TestConservationLaws::irrationalCoefficientGoesNumeric() {
  // √2 A → B: A + √2 B is conserved; C is in no reaction.
  Eigen::MatrixXd n(3, 1);
  n << -std::sqrt(2.0), 1, 0;
  const ConservationLaws laws = findConservationLaws(n);
  QVERIFY(!laws.exact);
  QCOMPARE(laws.count(), 2);
  QCOMPARE(laws.dependent, (std::vector<int>{0, 2}));
  Eigen::MatrixXd expected(2, 3);
  expected << 1, std::sqrt(2.0), 0,  //
      0, 0, 1;
  QVERIFY(matrixClose(laws.gamma, expected, 1e-14, 1e-14, "gamma"));
  SENSODE_EXPECT_CLOSE((laws.gamma * n).cwiseAbs().maxCoeff(), 0.0, 1e-14, 0, "|gamma*N|", 0);
  QCOMPARE(laws.describe({"A", "B", "C"}), (std::vector<std::string>{"A + 1.41421 B", "C"}));
}

void TestConservationLaws::hugeRationalEntriesGoNumericVerified() {
  // A chain X0 → 1000 X1 → ... → 1000 X5 conserves Σ 1000^-k X_k; the RREF entries 1e-12 and
  // 1e-15 have denominators beyond rational reconstruction (2³⁰), so the result is computed
  // numerically (with the mod-p pivots) and verified.
  Eigen::MatrixXd n = Eigen::MatrixXd::Zero(6, 5);
  for (int k = 0; k < 5; ++k) n(k, k) = -1, n(k + 1, k) = 1000;
  const ConservationLaws laws = findConservationLaws(n);
  QVERIFY(!laws.exact);
  QCOMPARE(laws.count(), 1);
  QCOMPARE(laws.dependent, std::vector<int>{0});
  for (int k = 0; k < 6; ++k)
    SENSODE_EXPECT_CLOSE(laws.gamma(0, k), std::pow(1e-3, k), 0, 1e-14, "gamma", k);
  QVERIFY(isRrefLeftNullSpace(laws, n, identityOrder(6), 1e-13));
}

void TestConservationLaws::abundanceChoosesDependentSpecies() {
  const Eigen::MatrixXd n = michaelisMenten();
  // S most abundant: S becomes the first dependent species, then E.
  {
    const ConservationLaws laws = findConservationLaws(n, {0.1, 1.0, 0.0, 0.0});
    QVERIFY(laws.exact);
    QCOMPARE(laws.dependent, (std::vector<int>{1, 0}));
    QCOMPARE(laws.independent, (std::vector<int>{2, 3}));
    Eigen::MatrixXd expected(2, 4);
    expected << 0, 1, 1, 1,  //
        1, 0, 1, 0;
    QVERIFY(matrixClose(laws.gamma, expected, 0, 0, "gamma"));
  }
  // P then C most abundant: elimination order (P, C, E, S) makes P and C dependent, and the RREF
  // in that order is P − E + S and C + E.
  {
    const ConservationLaws laws = findConservationLaws(n, {0.0, 0.0, 1.0, 5.0});
    QVERIFY(laws.exact);
    QCOMPARE(laws.dependent, (std::vector<int>{3, 2}));
    QCOMPARE(laws.independent, (std::vector<int>{0, 1}));
    Eigen::MatrixXd expected(2, 4);
    expected << -1, 1, 0, 1,  //
        1, 0, 1, 0;
    QVERIFY(matrixClose(laws.gamma, expected, 0, 0, "gamma"));
    QCOMPARE(laws.describe({"E", "S", "C", "P"}), (std::vector<std::string>{"P - E + S", "C + E"}));
    QVERIFY(isRrefLeftNullSpace(laws, n, {3, 2, 0, 1}, 0));
  }
  // Ties keep the species order.
  {
    const ConservationLaws laws = findConservationLaws(n, {1.0, 1.0, 1.0, 1.0});
    QCOMPARE(laws.dependent, (std::vector<int>{0, 1}));
  }
}

void TestConservationLaws::reduceExpandRoundTrip() {
  const Eigen::MatrixXd n = michaelisMenten();
  const Eigen::Vector4d x(0.1, 1.0, 0.02, 0.3);
  for (const std::vector<double>& abundance :
       {std::vector<double>{}, std::vector<double>{0.1, 1.0, 0.0, 0.0},
        std::vector<double>{0.0, 0.0, 1.0, 5.0}}) {
    const ConservationLaws laws = findConservationLaws(n, abundance);
    const Eigen::VectorXd totals = laws.totals(x);
    QCOMPARE(totals.size(), Eigen::Index{2});
    const Eigen::VectorXd reduced = laws.reduce(x);
    QCOMPARE(reduced.size(), Eigen::Index{2});
    for (int k = 0; k < 2; ++k)
      SENSODE_EXPECT_CLOSE(reduced(k), x(laws.independent[k]), 0, 0, "reduced", k);
    const Eigen::VectorXd back = laws.expand(reduced, totals);
    for (int k = 0; k < 4; ++k) SENSODE_EXPECT_CLOSE(back(k), x(k), 1e-15, 1e-14, "expanded", k);
  }
  // The totals of MM in species order: E + C and S + C + P.
  const ConservationLaws laws = findConservationLaws(n);
  const Eigen::VectorXd totals = laws.totals(x);
  SENSODE_EXPECT_CLOSE(totals(0), 0.12, 1e-15, 1e-14, "totals", 0);
  SENSODE_EXPECT_CLOSE(totals(1), 1.32, 1e-15, 1e-14, "totals", 1);
  // Moving along a reaction keeps the totals: x + 0.01·N[:, 2] expands back from the same T.
  const Eigen::VectorXd moved = x + 0.01 * n.col(2);
  const Eigen::VectorXd back = laws.expand(laws.reduce(moved), totals);
  for (int k = 0; k < 4; ++k) SENSODE_EXPECT_CLOSE(back(k), moved(k), 1e-15, 1e-14, "moved", k);
}

void TestConservationLaws::speciesInNoReaction() {
  // A → B; C takes part in nothing.
  Eigen::MatrixXd n(3, 1);
  n << -1, 1, 0;
  const ConservationLaws laws = findConservationLaws(n);
  QVERIFY(laws.exact);
  QCOMPARE(laws.count(), 2);
  Eigen::MatrixXd expected(2, 3);
  expected << 1, 1, 0,  //
      0, 0, 1;
  QVERIFY(matrixClose(laws.gamma, expected, 0, 0, "gamma"));
  QCOMPARE(laws.dependent, (std::vector<int>{0, 2}));
  QCOMPARE(laws.independent, std::vector<int>{1});
  QCOMPARE(laws.describe({"A", "B", "C"}), (std::vector<std::string>{"A + B", "C"}));
}

void TestConservationLaws::noReactionsAndNoSpecies() {
  const ConservationLaws none = findConservationLaws(Eigen::MatrixXd(3, 0));
  QVERIFY(none.exact);
  QVERIFY(matrixClose(none.gamma, Eigen::MatrixXd::Identity(3, 3), 0, 0, "gamma"));
  QCOMPARE(none.dependent, (std::vector<int>{0, 1, 2}));
  QVERIFY(none.independent.empty());
  const Eigen::Vector3d x(1, 2, 3);
  QCOMPARE(none.reduce(x).size(), Eigen::Index{0});
  const Eigen::VectorXd back = none.expand(none.reduce(x), none.totals(x));
  for (int k = 0; k < 3; ++k) SENSODE_EXPECT_CLOSE(back(k), x(k), 0, 0, "expanded", k);

  // A zero column (a reaction that changes nothing) is the same as no reaction.
  QCOMPARE(findConservationLaws(Eigen::MatrixXd::Zero(2, 1)).count(), 2);

  const ConservationLaws empty = findConservationLaws(Eigen::MatrixXd(0, 0));
  QCOMPARE(empty.count(), 0);
  QVERIFY(empty.dependent.empty() && empty.independent.empty());
}

void TestConservationLaws::describeStrings() {
  // A → 2 B: 2 A + B.
  Eigen::MatrixXd dimer(2, 1);
  dimer << -1, 2;
  const ConservationLaws laws = findConservationLaws(dimer);
  QVERIFY(matrixClose(laws.gamma, Eigen::RowVector2d(1, 0.5), 0, 0, "gamma"));
  QCOMPARE(laws.describe({"A", "B"}), std::vector<std::string>{"2 A + B"});
  // Missing ids fall back to x<index>.
  QCOMPARE(laws.describe({}), std::vector<std::string>{"2 x0 + x1"});

  // A + B → ∅ conserves A − B.
  Eigen::MatrixXd annihilation(2, 1);
  annihilation << -1, -1;
  QCOMPARE(findConservationLaws(annihilation).describe({"A", "B"}),
           std::vector<std::string>{"A - B"});

  // 2 A + 3 B → C: in the order (A, B, C) the RREF basis is A + 2 C and B + 3 C.
  Eigen::MatrixXd binding(3, 1);
  binding << -2, -3, 1;
  QCOMPARE(findConservationLaws(binding).describe({"A", "B", "C"}),
           (std::vector<std::string>{"A + 2 C", "B + 3 C"}));
}

void TestConservationLaws::invalidInputThrows() {
  QVERIFY_THROWS_EXCEPTION(sensode::Error, findConservationLaws(michaelisMenten(), {1.0, 2.0}));
  Eigen::MatrixXd n = michaelisMenten();
  n(1, 1) = std::nan("");
  QVERIFY_THROWS_EXCEPTION(sensode::Error, findConservationLaws(n));
}

void TestConservationLaws::smallRandomMatricesAreRref() {
  // Random small stoichiometries (including multiples of 1/2 and duplicated reactions) against
  // the RREF invariants and the nullity from a rank-revealing LU (exact enough for such small
  // integers).
  std::mt19937 rng(20240611);
  const double values[] = {1, -1, 2, -2, 0.5, -1.5, 3};
  for (int trial = 0; trial < 300; ++trial) {
    const int species = 1 + static_cast<int>(rng() % 9);
    const int reactions = static_cast<int>(rng() % 9);
    const double density = (rng() % 100) / 100.0;
    Eigen::MatrixXd n = Eigen::MatrixXd::Zero(species, reactions);
    for (int i = 0; i < species; ++i)
      for (int j = 0; j < reactions; ++j)
        if ((rng() % 1000) / 1000.0 < density) n(i, j) = values[rng() % 7];
    if (reactions > 1 && rng() % 3 == 0) n.col(0) = 2 * n.col(1);
    std::vector<double> abundance;
    if (rng() % 2 == 0)
      for (int i = 0; i < species; ++i) abundance.push_back(static_cast<double>(rng() % 4));
    std::vector<int> order = identityOrder(species);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return !abundance.empty() && abundance[a] > abundance[b];
    });

    const ConservationLaws laws = findConservationLaws(n, abundance);
    QVERIFY2(laws.exact, qPrintable(QString("trial %1").arg(trial)));
    const Eigen::Index rank = reactions == 0 ? 0 : Eigen::FullPivLU<Eigen::MatrixXd>(n).rank();
    QCOMPARE(laws.count(), static_cast<int>(species - rank));
    QVERIFY2(isRrefLeftNullSpace(laws, n, order, 1e-12),
             qPrintable(QString("trial %1").arg(trial)));
  }
}

void TestConservationLaws::largeRandomNetwork() {
  // 2000 species × 4000 reactions, fixed seed. Species 0..1949 take part in random mass-action
  // reactions (conversions, bindings, dissociations, dimerizations, synthesis, degradation);
  // 1950..1989 form four isolated rings of ten conversions, so each ring's total is conserved;
  // 1990..1999 are in no reaction. mt19937's output is fixed by the standard, so the network is
  // the same everywhere.
  constexpr int kSpecies = 2000, kReactions = 4000, kOpen = 1950;
  std::mt19937 rng(42);
  auto species = [&](int count) { return static_cast<int>(rng() % count); };
  Eigen::MatrixXd n = Eigen::MatrixXd::Zero(kSpecies, kReactions);
  int j = 0;
  for (int group = 0; group < 4; ++group)
    for (int k = 0; k < 10; ++k, ++j) {  // a ring of conversions X_k → X_k+1
      const int base = kOpen + 10 * group;
      n(base + k, j) = -1;
      n(base + (k + 1) % 10, j) = 1;
    }
  for (; j < kReactions; ++j) {
    const unsigned type = rng() % 20;
    if (type < 8) {  // A → B
      n(species(kOpen), j) -= 1;
      n(species(kOpen), j) += 1;
    } else if (type < 13) {  // A + B → C
      n(species(kOpen), j) -= 1;
      n(species(kOpen), j) -= 1;
      n(species(kOpen), j) += 1;
    } else if (type < 17) {  // C → A + B
      n(species(kOpen), j) -= 1;
      n(species(kOpen), j) += 1;
      n(species(kOpen), j) += 1;
    } else if (type < 18) {  // 2 A → B
      n(species(kOpen), j) -= 2;
      n(species(kOpen), j) += 1;
    } else if (type < 19) {  // A → ∅
      n(species(kOpen), j) -= 1;
    } else {  // ∅ → A
      n(species(kOpen), j) += 1;
    }
  }

  QElapsedTimer timer;
  timer.start();
  const ConservationLaws laws = findConservationLaws(n);
  const qint64 elapsed = timer.elapsed();
  qInfo("2000 x 4000 random network: %d laws, exact=%d, %lld ms", laws.count(), laws.exact ? 1 : 0,
        static_cast<long long>(elapsed));

  QVERIFY(laws.exact);
  QVERIFY(isRrefLeftNullSpace(laws, n, identityOrder(kSpecies), 1e-12));
  // The planted laws lie in the row space: v = Σ_i v[dependent_i]·Γ_i for a basis in RREF.
  auto inRowSpace = [&](const Eigen::VectorXd& v) {
    Eigen::VectorXd rest = v;
    for (int r = 0; r < laws.count(); ++r)
      rest -= v(laws.dependent[r]) * laws.gamma.row(r).transpose();
    return rest.cwiseAbs().maxCoeff() <= 1e-12;
  };
  for (int group = 0; group < 4; ++group) {
    Eigen::VectorXd total = Eigen::VectorXd::Zero(kSpecies);
    total.segment(kOpen + 10 * group, 10).setOnes();
    QVERIFY2(inRowSpace(total), qPrintable(QString("group %1").arg(group)));
  }
  for (int s = kOpen + 40; s < kSpecies; ++s)
    QVERIFY2(inRowSpace(Eigen::VectorXd::Unit(kSpecies, s)), qPrintable(QString::number(s)));
  QVERIFY(laws.count() >= 14);
}

QTEST_GUILESS_MAIN(TestConservationLaws)
#include "tst_conservation_laws.moc"
