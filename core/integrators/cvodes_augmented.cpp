// SPDX-License-Identifier: MIT
#include "core/integrators/cvodes_augmented.h"

#include <algorithm>
#include <cmath>

namespace sensode::integrators::detail {

namespace {

// The augmented mode's weighted RMS norm: the largest of the norms of the 1 + ns blocks of nx
// values (x, S_1, …, S_ns), CVODES's norm with sensitivities in the error test (cvSensNorm:
// max over x and every S_j). One RMS over all n·(1 + ns) values instead lets errors in a few S
// columns hide in the average: Boehm's worst sensitivity error rose from 3e-7 to 3.6e-6. Every
// norm CVODE takes (error test, Newton convergence, step and order selection) goes through it:
// it replaces nvwrmsnorm in the ops of y, which CVODE's work vectors are cloned from. The block
// length of the current CVode() call comes from a thread-local (the N_Vector has no room for it).
thread_local sunindextype tBlockLength = 0;

sunrealtype blockMaxWrmsNorm(N_Vector xv, N_Vector wv) {
  const sunindextype len = N_VGetLength(xv);
  const sunindextype n = tBlockLength;
  if (n <= 0 || len % n != 0) return N_VWrmsNorm_Serial(xv, wv);
  const double* x = N_VGetArrayPointer(xv);
  const double* w = N_VGetArrayPointer(wv);
  double worst = 0;
  for (sunindextype b = 0; b < len; b += n) {
    double sum = 0;
    for (sunindextype i = b; i < b + n; ++i) {
      const double v = x[i] * w[i];
      sum += v * v;
    }
    worst = std::max(worst, sum);
  }
  return std::sqrt(worst / static_cast<double>(n));
}

// Serial vector operations for the augmented mode's long vector. Debian's SUNDIALS 6.4.1 is built
// without optimisation: its N_VLinearSum_Serial takes ~20 instructions per element (callgrind:
// 30k per call on Bachmann's 1475 values), 42 % of the augmented run. CVODE's O(q²·n·(1 + ns))
// Nordsieck updates (predictor, restore, completion) go through linearsum/scale/const and the
// fused linear combination and scale-add-multi, so these are compiled here; element-wise, so
// any aliasing of the operands CVODE uses is fine.
void fastLinearSum(sunrealtype a, N_Vector xv, sunrealtype b, N_Vector yv, N_Vector zv) {
  const sunindextype n = N_VGetLength(zv);
  const double* x = N_VGetArrayPointer(xv);
  const double* y = N_VGetArrayPointer(yv);
  double* z = N_VGetArrayPointer(zv);
  for (sunindextype i = 0; i < n; ++i) z[i] = a * x[i] + b * y[i];
}

void fastConst(sunrealtype c, N_Vector zv) {
  double* z = N_VGetArrayPointer(zv);
  std::fill(z, z + N_VGetLength(zv), c);
}

void fastScale(sunrealtype c, N_Vector xv, N_Vector zv) {
  const sunindextype n = N_VGetLength(zv);
  const double* x = N_VGetArrayPointer(xv);
  double* z = N_VGetArrayPointer(zv);
  for (sunindextype i = 0; i < n; ++i) z[i] = c * x[i];
}

// z = Σ_j c_j X_j (z may be X_0).
int fastLinearCombination(int nvec, sunrealtype* c, N_Vector* X, N_Vector zv) {
  const sunindextype n = N_VGetLength(zv);
  double* z = N_VGetArrayPointer(zv);
  const double* x0 = N_VGetArrayPointer(X[0]);
  for (sunindextype i = 0; i < n; ++i) z[i] = c[0] * x0[i];
  for (int j = 1; j < nvec; ++j) {
    const double* xj = N_VGetArrayPointer(X[j]);
    const double cj = c[j];
    for (sunindextype i = 0; i < n; ++i) z[i] += cj * xj[i];
  }
  return 0;
}

// Z_j = a_j·x + Y_j.
int fastScaleAddMulti(int nvec, sunrealtype* a, N_Vector xv, N_Vector* Y, N_Vector* Z) {
  const sunindextype n = N_VGetLength(xv);
  const double* x = N_VGetArrayPointer(xv);
  for (int j = 0; j < nvec; ++j) {
    const double* y = N_VGetArrayPointer(Y[j]);
    double* z = N_VGetArrayPointer(Z[j]);
    const double aj = a[j];
    for (sunindextype i = 0; i < n; ++i) z[i] = aj * x[i] + y[i];
  }
  return 0;
}

// The augmented vector's operations: the block-max norm and the compiled operations above.
// CVODE clones its work vectors from y, and clones copy the operations.
}  // namespace

void installAugmentedOps(N_Vector v) {
  v->ops->nvwrmsnorm = blockMaxWrmsNorm;
  v->ops->nvlinearsum = fastLinearSum;
  v->ops->nvconst = fastConst;
  v->ops->nvscale = fastScale;
  v->ops->nvlinearcombination = fastLinearCombination;
  v->ops->nvscaleaddmulti = fastScaleAddMulti;
}

// Sets tBlockLength for one CVode() call (restored after: integrators may nest through the step
// callback).


BlockLengthScope::BlockLengthScope(sunindextype n) : previous_(tBlockLength) { tBlockLength = n; }
BlockLengthScope::~BlockLengthScope() { tBlockLength = previous_; }

BlockMatrix& block(SUNMatrix A) { return *static_cast<BlockMatrix*>(A->content); }

namespace {




SUNMatrix_ID blockGetId(SUNMatrix /*A*/) { return SUNMATRIX_CUSTOM; }

SUNMatrix blockClone(SUNMatrix A) {
  return newBlockMatrix(A->sunctx, block(A).values.size(), block(A).diagonal);
}

void blockDestroy(SUNMatrix A) {
  if (A == nullptr) return;
  delete static_cast<BlockMatrix*>(A->content);
  A->content = nullptr;
  SUNMatFreeEmpty(A);
}

int blockZero(SUNMatrix A) {
  std::fill(block(A).values.begin(), block(A).values.end(), 0.0);
  return SUNMAT_SUCCESS;
}

int blockCopy(SUNMatrix A, SUNMatrix B) {
  if (block(A).values.size() != block(B).values.size()) return SUNMAT_ILL_INPUT;
  std::copy(block(A).values.begin(), block(A).values.end(), block(B).values.begin());
  return SUNMAT_SUCCESS;
}

int blockScaleAddI(sunrealtype c, SUNMatrix A) {
  BlockMatrix& m = block(A);
  for (double& v : m.values) v *= c;
  for (const sunindextype k : *m.diagonal) m.values[static_cast<std::size_t>(k)] += 1.0;
  return SUNMAT_SUCCESS;
}

}  // namespace

SUNMatrix newBlockMatrix(SUNContext ctx, std::size_t nnz,
                         const std::vector<sunindextype>* diagonal) {
  SUNMatrix A = SUNMatNewEmpty(ctx);
  if (A == nullptr) return nullptr;
  try {
    A->content = new BlockMatrix{std::vector<double>(nnz, 0.0), diagonal};
  } catch (...) {  // C caller: report out of memory as null
    SUNMatFreeEmpty(A);
    return nullptr;
  }
  A->ops->getid = blockGetId;
  A->ops->clone = blockClone;
  A->ops->destroy = blockDestroy;
  A->ops->zero = blockZero;
  A->ops->copy = blockCopy;
  A->ops->scaleaddi = blockScaleAddI;
  return A;
}


}  // namespace sensode::integrators::detail
