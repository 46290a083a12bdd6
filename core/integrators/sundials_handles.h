// SPDX-License-Identifier: MIT
// RAII owners for SUNDIALS objects, CVODES flag names, and the one checker every SUNDIALS call
// goes through: shared by the core code that drives CVODES itself (the CVODES integrator, the
// adjoint pass of core/steadystate). It includes the SUNDIALS headers, so only core .cpp files
// include it; no header that the plugin or the GUI sees includes it.
//
// Destruction order matters: the context must outlive every object created with it, and the
// CVODES memory must go before the linear solver, matrix and vectors it references. Declare the
// handles in the order context, vectors, matrix, linear solver, cvode memory; members are
// destroyed in reverse order.
#pragma once

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>

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

using ContextPtr = std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextDeleter>;
using VectorPtr = std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorDeleter>;
using MatrixPtr = std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixDeleter>;
using LinearSolverPtr =
    std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, LinearSolverDeleter>;
using CvodeMemPtr = std::unique_ptr<void, CvodeMemDeleter>;

// CVODES's name of a return flag ("CV_CONV_FAILURE"). CVodeGetReturnFlagName returns a malloc'ed
// string (src/cvodes/cvodes_io.c); it is copied and freed here.
inline std::string cvodeFlagName(int flag) {
  char* name = CVodeGetReturnFlagName(flag);
  if (name == nullptr) return "flag " + std::to_string(flag);
  std::string s(name);
  std::free(name);
  return s;
}

// Throws sensode::Error naming the SUNDIALS function and the flag when flag < 0. Used for set-up
// calls (CVodeInit, CVodeSetLinearSolver, ...); failures of CVode() itself are reported by the
// integrator as IntegrationFailure with time and step size.
inline void checkCvode(int flag, const char* function) {
  if (flag < 0) {
    throw Error(std::string("SUNDIALS call ") + function + " failed: " + cvodeFlagName(flag));
  }
}

// Throws sensode::Error when a SUNDIALS constructor returned null.
template <class T>
T checkCreated(T object, const char* function) {
  if (object == nullptr) throw Error(std::string("SUNDIALS call ") + function + " failed");
  return object;
}

}  // namespace sensode::integrators::sundials
