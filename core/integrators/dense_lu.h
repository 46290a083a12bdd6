// SPDX-License-Identifier: MIT
// Dense LU with partial pivoting for the Newton matrices of odeSD and of its discrete adjoint:
// column-major n × n, factorised in place (LAPACK getrf's convention: unit lower L below the
// diagonal, U on and above, row interchanges in `pivots`, 0-based), in blocks of four columns.
//
// Why blocks: the unblocked loop (dgetf2) updates the trailing matrix one rank-1 product at a
// time, in loops as short as the matrix, and took about six instructions per multiply-add at
// n = 36. Here each trailing column takes four columns of L at once (two columns share their
// loads) and both triangular solves go four columns at a time. The kernels are compiled twice,
// for x86-64-v3 (AVX2 and FMA) and for the baseline, and the loader picks one for the machine.
#pragma once

namespace sensode::integrators::detail {

// Factorises a in place. invDiag receives 1 / U_kk (the back substitution multiplies).
// False when a pivot column is zero or not finite, or a pivot is at most ε times the largest
// pivot (numerically singular); the factors are then garbage. `a` must hold finite values.
bool denseLuFactor(double* a, int n, int* pivots, double* invDiag);

// x = A⁻¹x with A's factors from denseLuFactor (one right-hand side).
void denseLuSolve(const double* lu, int n, const int* pivots, const double* invDiag, double* x);

}  // namespace sensode::integrators::detail
