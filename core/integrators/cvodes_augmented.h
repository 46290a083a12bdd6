// SPDX-License-Identifier: MIT
// CVODES's augmented sensitivity mode (SensitivityCorrector::Augmented): plain CVODE on [x; S] as
// one N_Vector, with vector operations over that long vector and CVODES's block-wise error norm,
// and a SUNMatrix that stores only the n×n diagonal block of the block-diagonal Newton matrix.
// Split out of cvodes_integrator.cpp (one concern: the SUNDIALS operation tables of that mode).
#pragma once

#include <nvector/nvector_serial.h>
#include <sundials/sundials_matrix.h>

#include <cstddef>
#include <vector>

namespace sensode::integrators::detail {

// Replaces the norm and the hot vector operations of v (and of every clone CVODE makes of it)
// by the augmented mode's: the weighted RMS norm is the largest of the 1 + ns blocks' norms.
void installAugmentedOps(N_Vector v);

// The block length (nx) the norm uses while in scope (thread-local; CVODE calls the norm from
// the thread that runs CVode).
class BlockLengthScope {
 public:
  explicit BlockLengthScope(sunindextype n);
  ~BlockLengthScope();
  BlockLengthScope(const BlockLengthScope&) = delete;
  BlockLengthScope& operator=(const BlockLengthScope&) = delete;

 private:
  sunindextype previous_;
};

// The Newton matrix of the augmented mode (SensitivityCorrector::Augmented) as a SUNMatrix that
// stores only its n×n diagonal block: CVODE's matrix-based linear solver interface builds
// M = I − γJ with its own heuristics (when to re-evaluate J, when to refactor, rescaling the
// correction when γ changed since the set-up) through these operations, while the matrix of the
// augmented system is block-diagonal with 1 + ns copies of that block (the J·S coupling
// ∂(J·S)/∂x is dropped, as in CV_SIMULTANEOUS). Values in the CSC order of the integrator's
// merged pattern (model pattern plus diagonal).
struct BlockMatrix {
  std::vector<double> values;
  const std::vector<sunindextype>* diagonal = nullptr;  // positions of the diagonal entries
};

BlockMatrix& block(SUNMatrix A);

// A BlockMatrix of nnz values with the diagonal's positions (kept by the caller); nullptr when
// out of memory.
SUNMatrix newBlockMatrix(SUNContext ctx, std::size_t nnz, const std::vector<sunindextype>* diagonal);

}  // namespace sensode::integrators::detail
