// SPDX-License-Identifier: MIT
// RAII owners for SUNDIALS objects (context, vectors, matrices, linear solvers, CVODES and IDAS
// memory) and their constructors' checks (flag checks: sundials_solver.h): shared by
// the core code that drives SUNDIALS itself (the CVODES and IDAS integrators, the adjoint pass of
// core/steadystate). It includes the SUNDIALS headers, so only core .cpp files (and the
// integrators' internal headers) include it; no header that the plugin or the GUI sees does.
//
// Destruction order matters: the context must outlive every object created with it, and the
// solver memory must go before the linear solver, matrix and vectors it references. Declare the
// handles in the order context, vectors, matrix, linear solver, solver memory; members are
// destroyed in reverse order.
#pragma once

#include <cvodes/cvodes.h>
#include <idas/idas.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/errors.h"

namespace sensode::integrators::sundials {

struct ContextDeleter {
  void operator()(std::remove_pointer_t<SUNContext>* ctx) const {
    SUNContext c = ctx;
    SUNContext_Free(&c);
  }
};
struct VectorDeleter {
  void operator()(std::remove_pointer_t<N_Vector>* v) const { N_VDestroy(v); }
};
struct MatrixDeleter {
  void operator()(std::remove_pointer_t<SUNMatrix>* m) const { SUNMatDestroy(m); }
};
struct LinearSolverDeleter {
  void operator()(std::remove_pointer_t<SUNLinearSolver>* s) const { SUNLinSolFree(s); }
};
struct CvodeMemDeleter {
  void operator()(void* mem) const { CVodeFree(&mem); }
};
struct IdaMemDeleter {
  void operator()(void* mem) const { IDAFree(&mem); }
};

using ContextPtr = std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextDeleter>;
using VectorPtr = std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorDeleter>;
using MatrixPtr = std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixDeleter>;
using LinearSolverPtr =
    std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, LinearSolverDeleter>;
using CvodeMemPtr = std::unique_ptr<void, CvodeMemDeleter>;
using IdaMemPtr = std::unique_ptr<void, IdaMemDeleter>;

// Throws sensode::Error when a SUNDIALS constructor returned null.
template <class T>
T checkCreated(T object, const char* function) {
  if (object == nullptr) throw Error(std::string("SUNDIALS call ") + function + " failed");
  return object;
}

// A serial vector of `length` values (uninitialised), with SUNDIALS's fused operations on.
// Without them every N_VLinearCombination, N_VScaleAddMulti and vector-array operation (the
// Nordsieck updates of quadratures and sensitivities, the adjoint's interpolation of the forward
// solution) runs as one N_VLinearSum call per vector, and on the small vectors of biochemical
// models the calls cost more than the arithmetic. The integrators' own vectors are clones of
// these and inherit the setting. Same arithmetic, element by element, in the same order.
inline VectorPtr newVector(sunindextype length, SUNContext ctx) {
  VectorPtr v(checkCreated(N_VNew_Serial(length, ctx), "N_VNew_Serial"));
  if (N_VEnableFusedOps_Serial(v.get(), SUNTRUE) != 0)
    throw Error("SUNDIALS call N_VEnableFusedOps_Serial failed");
  return v;
}

// A serial vector holding `values`.
inline VectorPtr newVector(const std::vector<double>& values, SUNContext ctx) {
  VectorPtr v = newVector(static_cast<sunindextype>(values.size()), ctx);
  std::copy(values.begin(), values.end(), N_VGetArrayPointer(v.get()));
  return v;
}

// `count` owned serial vectors of one length, and the N_Vector* array SUNDIALS's sensitivity
// functions take (CVodeSensInit, IDASensInit, CVodeGetSensDky, ...).
class VectorArray {
 public:
  void create(std::size_t count, sunindextype length, SUNContext ctx) {
    clear();
    for (std::size_t j = 0; j < count; ++j) {
      owned_.push_back(newVector(length, ctx));
      raw_.push_back(owned_.back().get());
    }
  }
  void clear() {
    raw_.clear();
    owned_.clear();
  }
  N_Vector* data() { return raw_.data(); }
  std::size_t size() const { return raw_.size(); }
  bool empty() const { return raw_.empty(); }
  N_Vector operator[](std::size_t j) const { return raw_[j]; }
  double* values(std::size_t j) const { return N_VGetArrayPointer(raw_[j]); }

 private:
  std::vector<VectorPtr> owned_;
  std::vector<N_Vector> raw_;
};

// S as SUNDIALS holds it (one vector of nx values per column) into `s`, column-major nx × ns.
inline void copySensitivities(const VectorArray& columns, int nx, double* s) {
  const auto n = static_cast<std::size_t>(nx);
  for (std::size_t j = 0; j < columns.size(); ++j) {
    const double* v = columns.values(j);
    std::copy(v, v + n, s + j * n);
  }
}

}  // namespace sensode::integrators::sundials
