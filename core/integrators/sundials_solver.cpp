// SPDX-License-Identifier: MIT
#include "core/integrators/sundials_solver.h"

namespace sensode::integrators::sundials {

const char* describeCvodeFlag(int flag) {
  switch (flag) {
    case CV_TOO_MUCH_ACC: return "requested accuracy too high for machine precision";
    case CV_ERR_FAILURE: return "error test failed repeatedly (step size too small)";
    case CV_CONV_FAILURE: return "Newton iteration failed to converge repeatedly (step size too small)";
    case CV_LSETUP_FAIL: return "linear solver setup failed (singular iteration matrix?)";
    case CV_LSOLVE_FAIL: return "linear solve failed";
    case CV_RHSFUNC_FAIL: return "right-hand side evaluation failed";
    case CV_FIRST_RHSFUNC_ERR: return "right-hand side evaluation failed at the first call";
    case CV_REPTD_RHSFUNC_ERR: return "repeated recoverable right-hand side errors";
    case CV_UNREC_RHSFUNC_ERR: return "unrecoverable right-hand side error";
    case CV_NLS_FAIL: return "nonlinear solver failed";
    case CV_TOO_CLOSE: return "output time too close to the start time";
    case CV_ILL_INPUT: return "illegal input";
    default: return "CVODES error";
  }
}

const char* describeIdaFlag(int flag) {
  switch (flag) {
    case IDA_TOO_MUCH_ACC: return "requested accuracy too high for machine precision";
    case IDA_ERR_FAIL: return "error test failed repeatedly (step size too small)";
    case IDA_CONV_FAIL: return "Newton iteration failed to converge repeatedly (step size too small)";
    case IDA_LSETUP_FAIL: return "linear solver setup failed (singular iteration matrix: the "
                                 "algebraic constraints may not determine their variables)";
    case IDA_LSOLVE_FAIL: return "linear solve failed";
    case IDA_RES_FAIL: return "residual evaluation failed";
    case IDA_REP_RES_ERR: return "repeated recoverable residual errors";
    case IDA_CONSTR_FAIL: return "inequality constraints could not be met";
    case IDA_NO_RECOVERY: return "no recovery from a recoverable residual error";
    case IDA_NLS_FAIL: return "nonlinear solver failed";
    case IDA_ILL_INPUT: return "illegal input";
    default: return "IDAS error";
  }
}

}  // namespace sensode::integrators::sundials
