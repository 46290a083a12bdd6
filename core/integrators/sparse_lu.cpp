// SPDX-License-Identifier: MIT
#include "core/integrators/sparse_lu.h"

#include "core/integrators/block_dense_lu.h"
#include "core/integrators/dense_lu.h"

#include <klu.h>

#include <Eigen/Core>
#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace sensode::integrators::detail {

namespace {

// A KLU refactorisation is kept while its pivot ratio (scaledPivotRatio) stays above this
// (SUNDIALS' rule for klu_rcond).
const double kRefactorPivotRatioLimit =
    std::pow(std::numeric_limits<double>::epsilon(), 2.0 / 3.0);

// Products by A⁻¹ for dense systems up to kSmallRows rows (all that
// IntegratorOptions::kDenseLimit sends here): one kernel per row count, each column of the
// product accumulated in registers (n ≤ 16 values) from A⁻¹'s columns. Against Eigen's product
// with compile-time bounds (micro-benchmark, A⁻¹ of n × n times n × m, 2026-11-29): 4 × 16
// 0.04 against 0.10 µs, 7 × 20 0.15 against 0.25, 14 × 34 0.66 against 1.0, 16 × 150 5.0
// against 5.1. Only the kernel of the model's n runs, about one page of code; Eigen's blocked
// product runs its packing routines and a 6 kB kernel, whose first execution in a process
// faults in several pages of code (6-20 µs each on a virtual machine). Run-time sizes would
// also make Eigen ask CPUID for the cache sizes (see Impl::substituteRows).
constexpr int kSmallRows = 16;

template <int N>
void smallInverseProduct(const double* inv, const double* b, double* out, int nrhs) {
  for (int j = 0; j < nrhs; ++j) {
    const double* bj = b + static_cast<std::size_t>(j) * N;
    double acc[N];
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) acc[i] = inv[i] * bj[0];
#pragma GCC unroll 16
    for (int k = 1; k < N; ++k) {
      const double bk = bj[k];
      const double* colK = inv + static_cast<std::size_t>(k) * N;
#pragma GCC unroll 16
      for (int i = 0; i < N; ++i) acc[i] += colK[i] * bk;
    }
    std::copy(acc, acc + N, out + static_cast<std::size_t>(j) * N);
  }
}

using SmallProduct = void (*)(const double*, const double*, double*, int);
template <std::size_t... I>
constexpr std::array<SmallProduct, sizeof...(I)> smallProducts(std::index_sequence<I...>) {
  return {&smallInverseProduct<static_cast<int>(I) + 1>...};
}
constexpr auto kSmallProducts = smallProducts(std::make_index_sequence<kSmallRows>{});

}  // namespace

struct SparseLu::Impl {
  symbolic::SparsePattern pattern;
  std::vector<double> values;  // Dense and Klu: the caller's values

  // Dense: column-major n × n LU factors in place (unit lower L below the diagonal, U on and
  // above), row interchanges in `pivots` (LAPACK getrf convention, 0-based).
  std::vector<double> dense;
  std::vector<int> pivots;
  // Dense on a matrix whose block triangular form saves at least a quarter of the arithmetic
  // (BlockDenseLu::worthwhile): the blocks' factors instead of `dense`, `pivots`, `invDiag`.
  std::unique_ptr<BlockDenseLu> blocks;
  // 1 / U_kk: the back substitution is a chain through the diagonal, and a division's latency
  // on it, with the zero test waiting for the quotient, was most of a small system's solve
  // (perf, odeSD on Elowitz, nx = 8: solve 31 % of the run -> 25 % with reciprocals and no zero
  // tests; row-oriented dot products measured worse, 35 %: their vector loads stall on the
  // scalar stores just made).
  std::vector<double> invDiag;
  // Many right-hand sides: A⁻¹ as a column-major n × n matrix, formed at the first such solve
  // after a factorisation, and the product's destination. normA = ‖A‖₁ of the
  // factorised values, for the condition number that decides whether the inverse may be used.
  enum class Inverse { Stale, Usable, Unusable };
  Inverse inverseState = Inverse::Stale;
  // Solves with many right-hand sides since the last factorisation, and how many the last
  // factorisation that had any got (odeSD: 2 with S in the error test, 1 without; its Newton
  // matrices none): the inverse is formed once and serves them all.
  int manySolves = 0;
  int manySolvesPerFactorization = 1;
  std::vector<double> inverse;
  std::vector<double> product;
  std::vector<double> rows;  // the right-hand sides' rows, contiguous, during a substitution
  double normA = 0;

  // Dense: X = A⁻¹B in place for column-major b (n × nrhs): the row interchanges and both
  // triangular solves on Bᵀ, i.e. on B's rows, each stored contiguously in `rows`.
  void permuteAndSubstitute(double* b, int n, int nrhs) {
    if (blocks) {
      blocks->solve(b, nrhs);
      return;
    }
    const auto size = static_cast<std::size_t>(n), width = static_cast<std::size_t>(nrhs);
    rows.resize(size * width);
    for (std::size_t j = 0; j < width; ++j)
      for (std::size_t i = 0; i < size; ++i) rows[i * width + j] = b[j * size + i];
    substituteRows(rows.data(), size, width);
    for (std::size_t j = 0; j < width; ++j)
      for (std::size_t i = 0; i < size; ++i) b[j * size + i] = rows[i * width + j];
  }
  // The substitutions on B's rows (denseLuSolveRows).
  void substituteRows(double* t, std::size_t n, std::size_t width) const {
    denseLuSolveRows(dense.data(), static_cast<int>(n), pivots.data(), invDiag.data(), t,
                     static_cast<int>(width));
  }
  // product = A⁻¹·b for column-major b (n × nrhs); then b = product.
  void multiplyByInverse(double* b, int n, int nrhs) {
    product.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(nrhs));
    if (n <= kSmallRows) {
      kSmallProducts[static_cast<std::size_t>(n) - 1](inverse.data(), b, product.data(), nrhs);
    } else {
      Eigen::Map<Eigen::MatrixXd> out(product.data(), n, nrhs);
      out.noalias() = Eigen::Map<const Eigen::MatrixXd>(inverse.data(), n, n) *
                      Eigen::Map<const Eigen::MatrixXd>(b, n, nrhs);
    }
    std::copy(product.begin(), product.end(), b);
  }

  // max |u_kk| · max 1 / |u_kk|.
  double pivotSpread(std::size_t size) const {
    if (blocks) return blocks->pivotSpread();
    double largestPivot = 0, largestInversePivot = 0;
    for (std::size_t k = 0; k < size; ++k) {
      largestPivot = std::max(largestPivot, std::abs(dense[k * size + k]));
      largestInversePivot = std::max(largestInversePivot, std::abs(invDiag[k]));
    }
    return largestPivot * largestInversePivot;
  }

  // Dense: A⁻¹ of the current factorisation for a solve with nrhs right-hand sides, formed on
  // first use. False when it does not pay: A⁻¹ costs n³ multiply-adds, and each later solve by
  // product about half the substitutions' n²·nrhs (the product vectorises without their chains),
  // so it pays from nrhs·(solves per factorisation) ≥ 2n; or when κ₁(A) is too large.
  bool usableInverse(int n, int nrhs) {
    ++manySolves;
    if (inverseState == Inverse::Stale &&
        static_cast<double>(nrhs) * manySolvesPerFactorization < 2.0 * n) {
      inverseState = Inverse::Unusable;
    }
    if (inverseState == Inverse::Stale) {
      // max|u_kk| / min|u_kk| bounds κ(U) from below and, with partial pivoting's |l_ik| ≤ 1,
      // says in practice when κ(A) is too large: then A⁻¹ is not formed in vain (on stiff tails
      // most Newton matrices are: Brannmark formed 517 inverses and could use 25; with this
      // test it forms 38).
      const auto size = static_cast<std::size_t>(n);
      if (!(pivotSpread(size) <= SparseLu::kInverseConditionLimit)) {
        inverseState = Inverse::Unusable;
        return false;
      }
      inverse.assign(size * size, 0.0);
      if (blocks) {
        for (std::size_t i = 0; i < size; ++i) inverse[i * size + i] = 1.0;
        blocks->solve(inverse.data(), n);
      } else {
        rows.assign(size * size, 0.0);
        for (std::size_t i = 0; i < size; ++i) rows[i * size + i] = 1.0;
        substituteRows(rows.data(), size, size);  // the rows of A⁻¹
        for (std::size_t i = 0; i < size; ++i)
          for (std::size_t j = 0; j < size; ++j) inverse[j * size + i] = rows[i * size + j];
      }
      const Eigen::Map<const Eigen::MatrixXd> inv(inverse.data(), n, n);
      const double normInverse = inv.cwiseAbs().colwise().sum().maxCoeff();
      inverseState = normInverse * normA <= SparseLu::kInverseConditionLimit ? Inverse::Usable
                                                                             : Inverse::Unusable;
    }
    return inverseState == Inverse::Usable;
  }

  // Klu
  klu_common common{};
  klu_symbolic* symbolic = nullptr;
  klu_numeric* numeric = nullptr;
  std::vector<double> rowMax;  // the largest |a_ij| of each row (rowScalesIfFinite)

  // rowMax from the current values, in one pass that also tests them: false where one is not
  // finite (the test klu_scale did; one pass instead of two: 8,400 → 6,100 instructions of
  // SparseLu's own a refactorisation of Alkan's 36 × 36 Wᵀ, callgrind).
  bool rowScalesIfFinite(int n) {
    std::fill(rowMax.begin(), rowMax.end(), 0.0);
    const int* rowOf = pattern.rowIdx.data();
    const double* v = values.data();
    double* m = rowMax.data();
    bool finite = true;
    for (int k = 0, nnz = pattern.colPtr[static_cast<std::size_t>(n)]; k < nnz; ++k) {
      const double a = std::abs(v[k]);
      finite &= a <= std::numeric_limits<double>::max();  // false for ±∞ and NaN
      double& r = m[rowOf[k]];
      r = a > r ? a : r;
    }
    return finite;
  }

  // klu_rcond's min |u_kk| / max |u_kk| as on the row-scaled matrix klu_factor factorised
  // (Common.scale = 2: each row divided by its largest entry), for an unscaled refactorisation
  // in the same pivot order: there u_kk carries the scale of its pivot row, Pnum[k], and taken
  // raw the ratio calls rows of different units near-singular (rows of 1e-6 … 1e6: every
  // refactorisation rejected, tst_odesd_linear_solvers). 0 where a pivot is 0 or not finite.
  // Takes rowMax from rowScalesIfFinite.
  double scaledPivotRatio(int n) const {
    const auto* udiag = static_cast<const double*>(numeric->Udiag);
    double smallest = std::numeric_limits<double>::infinity(), largest = 0;
    for (int k = 0; k < n; ++k) {
      const double u = std::abs(udiag[k]) / rowMax[static_cast<std::size_t>(numeric->Pnum[k])];
      if (!(u > 0) || !std::isfinite(u)) return 0;
      smallest = std::min(smallest, u);
      largest = std::max(largest, u);
    }
    return smallest / largest;
  }

  // EigenSparse
  Eigen::SparseMatrix<double> sparse;
  Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>> sparseLu;

  Eigen::MatrixXd rhs;  // EigenSparse: copy of the right-hand sides

  ~Impl() { freeKlu(); }

  void freeKlu() {
    if (numeric != nullptr) klu_free_numeric(&numeric, &common);
    if (symbolic != nullptr) klu_free_symbolic(&symbolic, &common);
    numeric = nullptr;
    symbolic = nullptr;
  }
};

SparseLu::SparseLu() : impl_(std::make_unique<Impl>()) {}
SparseLu::~SparseLu() = default;

// KLU pays about eight instructions per flop on these small matrices (its bookkeeping per
// column and per block of its block triangular form), the dense kernels about one
// (dense_lu.h). Micro-benchmark on W patterns of the collection and the BioModels with more
// than 16 states, one factorisation and four solves per matrix, medians of 5, 2026-11-30:
//   pattern (states)         KLU's flops / dense's   KLU's time / dense's
//   Bachmann (25)                    0.07                   0.68
//   BIOMD0000000149 (29)             0.07                   1.02
//   BIOMD0000000032 (36)             0.11                   1.17
//   Laske (34)                       0.14                   1.23
//   Alkan (36)                       0.19                   1.86
//   Lang (124)                       0.22                   1.65
//   BIOMD0000000497 (280)            0.43                   2.93
// The dense matrix of kDenseLimitStates states takes 820 kB, about what stays in cache while
// each block of four columns updates all of it.
// The answer for each pattern is kept for the process: every simulation of a model asks again
// (each condition of a PEtab problem, twice in a discrete adjoint), and the trial factorisation
// was 0.84 % of Alkan's adjoint run (146 questions, about 50 µs each; callgrind).
bool SparseLu::denseIsFaster(const symbolic::SparsePattern& pattern) {
  const int n = pattern.rows;
  if (n > kDenseLimitStates) return false;
  static std::mutex mutex;
  static std::vector<std::pair<symbolic::SparsePattern, bool>> answers;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [known, dense] : answers) {
      if (known == pattern) return dense;
    }
  }
  const bool dense = kluSavesLittle(pattern);
  const std::lock_guard<std::mutex> lock(mutex);
  if (answers.size() >= 64) answers.erase(answers.begin());  // a bound for long-lived GUIs
  answers.emplace_back(pattern, dense);
  return dense;
}

double SparseLu::denseLuFlops(const symbolic::SparsePattern& pattern) {
  // The dense backend factorises the diagonal blocks alone where they are worthwhile
  // (BlockDenseLu), the whole matrix otherwise.
  auto cube = [](double s) { return 2.0 * s * s * s / 3.0; };
  const BlockTriangularForm form = blockTriangularForm(pattern);
  if (!BlockDenseLu::worthwhile(form, pattern.rows)) return cube(pattern.rows);
  double flops = 0;
  for (int b = 0; b < form.blocks(); ++b) {
    flops += cube(form.blockStart[static_cast<std::size_t>(b) + 1] -
                  form.blockStart[static_cast<std::size_t>(b)]);
  }
  return flops;
}

bool SparseLu::kluSavesLittle(const symbolic::SparsePattern& pattern) {
  const int n = pattern.rows;
  std::vector<int> colPtr = pattern.colPtr, rowIdx = pattern.rowIdx;
  std::vector<double> values(rowIdx.size(), 1.0);
  for (int j = 0; j < n; ++j) {
    for (int k = colPtr[static_cast<std::size_t>(j)]; k < colPtr[static_cast<std::size_t>(j) + 1];
         ++k) {
      if (rowIdx[static_cast<std::size_t>(k)] == j) values[static_cast<std::size_t>(k)] = 2.0 * n;
    }
  }
  klu_common common;
  klu_defaults(&common);
  klu_symbolic* symbolic = klu_analyze(n, colPtr.data(), rowIdx.data(), &common);
  if (symbolic == nullptr) return false;
  klu_numeric* numeric = klu_factor(colPtr.data(), rowIdx.data(), values.data(), symbolic, &common);
  bool dense = false;
  if (numeric != nullptr && klu_flops(symbolic, numeric, &common) == 1) {
    dense = common.flops >= kDenseFlopFraction * denseLuFlops(pattern);
  }
  if (numeric != nullptr) klu_free_numeric(&numeric, &common);
  klu_free_symbolic(&symbolic, &common);
  return dense;
}

void SparseLu::analyze(const symbolic::SparsePattern& pattern, Backend backend) {
  if (pattern.rows != pattern.cols ||
      static_cast<int>(pattern.colPtr.size()) != pattern.cols + 1) {
    throw std::logic_error("SparseLu::analyze: pattern is not square CSC");
  }
  impl_ = std::make_unique<Impl>();
  Impl& d = *impl_;
  backend_ = backend;
  n_ = pattern.rows;
  fullFactorizations_ = refactorizations_ = 0;
  d.pattern = pattern;
  const int nnz = pattern.nnz();
  switch (backend) {
    case Backend::Dense: {
      d.values.assign(static_cast<std::size_t>(nnz), 0.0);
      // Small systems stay whole: their LU is a few hundred multiply-adds, less than the
      // blocks' bookkeeping would add.
      if (n_ > kSmallRows) {
        if (auto structure = BlockDenseLu::structureFor(pattern)) {
          d.blocks = std::make_unique<BlockDenseLu>();
          d.blocks->use(std::move(structure));
          break;
        }
      }
      d.dense.assign(static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_), 0.0);
      d.pivots.assign(static_cast<std::size_t>(n_), 0);
      d.invDiag.assign(static_cast<std::size_t>(n_), 0.0);
      break;
    }
    case Backend::Klu: {
      d.values.assign(static_cast<std::size_t>(nnz), 0.0);
      d.rowMax.assign(static_cast<std::size_t>(n_), 0.0);
      klu_defaults(&d.common);
      // KLU's analysis wants non-const pointers; it does not modify them.
      d.symbolic = klu_analyze(n_, d.pattern.colPtr.data(), d.pattern.rowIdx.data(), &d.common);
      if (d.symbolic == nullptr) {
        throw std::runtime_error("klu_analyze failed (status " + std::to_string(d.common.status) +
                                 ")");
      }
      break;
    }
    case Backend::EigenSparse: {
      std::vector<Eigen::Triplet<double>> triplets;
      triplets.reserve(static_cast<std::size_t>(nnz));
      for (int j = 0; j < n_; ++j) {
        for (int k = pattern.colPtr[static_cast<std::size_t>(j)];
             k < pattern.colPtr[static_cast<std::size_t>(j) + 1]; ++k) {
          triplets.emplace_back(pattern.rowIdx[static_cast<std::size_t>(k)], j, 1.0);
        }
      }
      d.sparse.resize(n_, n_);
      d.sparse.setFromTriplets(triplets.begin(), triplets.end());
      d.sparse.makeCompressed();
      d.sparseLu.analyzePattern(d.sparse);
      d.rhs.resize(n_, 1);
      break;
    }
  }
}

void SparseLu::reserveRightHandSides(int nrhs) {
  Impl& d = *impl_;
  if (backend_ != Backend::Dense || nrhs <= 1) return;
  const auto n = static_cast<std::size_t>(n_);
  if (d.blocks) d.blocks->reserveRightHandSides(std::max(nrhs, n_));
  d.inverse.reserve(n * n);
  d.product.reserve(n * static_cast<std::size_t>(nrhs));
  d.rows.reserve(n * std::max(n, static_cast<std::size_t>(nrhs)));
}

double* SparseLu::values() {
  Impl& d = *impl_;
  return backend_ == Backend::EigenSparse ? d.sparse.valuePtr() : d.values.data();
}

bool SparseLu::factorize() {
  Impl& d = *impl_;
  const symbolic::SparsePattern& pat = d.pattern;
  switch (backend_) {
    case Backend::Dense: {
      ++fullFactorizations_;
      d.inverseState = Impl::Inverse::Stale;
      if (d.manySolves > 0) d.manySolvesPerFactorization = d.manySolves;
      d.manySolves = 0;
      if (d.blocks) return d.blocks->factorize(d.values.data(), d.normA);
      const std::size_t n = static_cast<std::size_t>(n_);
      double* a = d.dense.data();
      d.normA = 0;
      for (std::size_t j = 0; j < n; ++j) {
        // Zeroed a column at a time: short stores, where one fill of the whole matrix becomes a
        // `rep stosb` (n > 16), which valgrind counts byte by byte (a third of the instructions
        // it reported for a 36-state factorisation).
        std::fill_n(a + j * n, n, 0.0);
        double column = 0;
        for (int k = pat.colPtr[j]; k < pat.colPtr[j + 1]; ++k) {
          const double v = d.values[static_cast<std::size_t>(k)];
          a[j * n + static_cast<std::size_t>(pat.rowIdx[static_cast<std::size_t>(k)])] = v;
          column += std::abs(v);
        }
        // A NaN or ±∞ among the values makes its column's sum so (the kernel wants finite).
        if (!(column <= std::numeric_limits<double>::max())) return false;
        d.normA = std::max(d.normA, column);
      }
      return denseLuFactor(a, n_, d.pivots.data(), d.invDiag.data());
    }
    case Backend::Klu: {
      if (!d.rowScalesIfFinite(n_)) return false;
      int* cp = d.pattern.colPtr.data();
      int* ri = d.pattern.rowIdx.data();
      if (d.numeric != nullptr) {
        ++refactorizations_;
        // The pivot order is klu_factor's, chosen on the row-scaled matrix; refactoring in it
        // needs no scale factors (KLU frees them and solves unscaled), and klu_scale with its
        // input checks was 18 % of each refactorisation (the finiteness test above stays; the
        // acceptance test takes the row scales itself, rowScalesIfFinite).
        // Discrete adjoint, callgrind: Alkan −5.5 %, Bachmann −5.3 % of the run's instructions;
        // gradients of the collection unchanged to two digits of their reference errors.
        d.common.scale = -1;
        if (klu_refactor(cp, ri, d.values.data(), d.symbolic, d.numeric, &d.common) == 1 &&
            d.scaledPivotRatio(n_) > kRefactorPivotRatioLimit) {
          return true;
        }
        klu_free_numeric(&d.numeric, &d.common);
        d.numeric = nullptr;
      }
      ++fullFactorizations_;
      d.common.scale = 2;  // KLU's default: max-row scaling, for the pivot choice
      d.numeric = klu_factor(cp, ri, d.values.data(), d.symbolic, &d.common);
      if (d.numeric == nullptr || d.common.status != KLU_OK) {
        if (d.numeric != nullptr) klu_free_numeric(&d.numeric, &d.common);
        d.numeric = nullptr;
        return false;
      }
      return klu_rcond(d.symbolic, d.numeric, &d.common) == 1 && d.common.rcond > 0 &&
             std::isfinite(d.common.rcond);
    }
    case Backend::EigenSparse: {
      const double* v = d.sparse.valuePtr();
      for (Eigen::Index k = 0; k < d.sparse.nonZeros(); ++k) {
        if (!std::isfinite(v[k])) return false;
      }
      ++fullFactorizations_;
      d.sparseLu.factorize(d.sparse);
      return d.sparseLu.info() == Eigen::Success;
    }
  }
  return false;
}

void SparseLu::solve(double* b, int nrhs) {
  Impl& d = *impl_;
  if (n_ == 0 || nrhs <= 0) return;
  switch (backend_) {
    case Backend::Dense: {
      const double* a = d.dense.data();
      if (nrhs > 1) {
        // Many right-hand sides (odeSD's sensitivities: one per parameter, twice per W_s with S
        // in the error test): X = A⁻¹·B, a plain matrix product, once A⁻¹ pays for itself
        // (Impl::usableInverse). Micro-benchmark, 15 × 62 (Zheng): 7.2 µs by substitution,
        // 3.7 µs by product; as odeSD runs, docs/benchmarks/performance.md §11. Only where
        // κ₁(A) is modest: the product's error grows with ‖A⁻¹‖·‖B‖ where the substitutions'
        // grows with κ·‖X‖.
        if (d.usableInverse(n_, nrhs)) {
          d.multiplyByInverse(b, n_, nrhs);
          return;
        }
        // Otherwise the substitutions on the whole n × nrhs block, vectorised across columns
        // (Impl::substituteRows); the column-by-column loops below cost 2-3× more there
        // (callgrind, Zheng: 37 % of the sensitivity run in this function).
        d.permuteAndSubstitute(b, n_, nrhs);
        return;
      }
      // One right-hand side (odeSD's Newton iterations and error estimates).
      if (d.blocks) {
        d.blocks->solve(b);
        return;
      }
      denseLuSolve(a, n_, d.pivots.data(), d.invDiag.data(), b);
      return;
    }
    case Backend::Klu:
      klu_solve(d.symbolic, d.numeric, n_, nrhs, b, &d.common);
      return;
    case Backend::EigenSparse: {
      Eigen::Map<Eigen::MatrixXd> x(b, n_, nrhs);
      if (d.rhs.cols() != nrhs || d.rhs.rows() != n_) d.rhs.resize(n_, nrhs);
      d.rhs = x;
      x = d.sparseLu.solve(d.rhs);
      return;
    }
  }
}

}  // namespace sensode::integrators::detail
