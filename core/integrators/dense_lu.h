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

// X = A⁻¹B for many right-hand sides, on Bᵀ: t is row-major n × width (row i holds B's row i).
// Each step subtracts a multiple of one whole row from another, a loop over `width` contiguous
// values that the compiler vectorises, with no chain of dependent updates through one column.
// Against Eigen's blocked triangular solves on the column-major block (micro-benchmark, A⁻¹ of
// a 14 × 14 LU: 1.15 against 0.9-1.4 µs; 7 × 7: 0.20 against 0.41 µs), and without Eigen's
// kernels, which size their blocking from the CPU's cache sizes and ask CPUID for those on
// first use: 30-110 µs once per process on a virtual machine (each CPUID traps to the
// hypervisor), 17 % of a 0.65 ms odeSD sensitivity run (Bruno, perf). Not cloned per
// instruction set: its loops are the vectorised ones already.
void denseLuSolveRows(const double* lu, int n, const int* pivots, const double* invDiag,
                      double* t, int width);

}  // namespace sensode::integrators::detail
