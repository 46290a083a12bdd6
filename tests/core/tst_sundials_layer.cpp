// SPDX-License-Identifier: MIT
// The SUNDIALS layer CVODES and IDAS share (core/integrators/sundials_*.h, integrator_arguments.h):
// the merged Jacobian pattern against a hand-worked one, the sparse and dense Newton matrices
// against each other and against an assembly by plain loops, the step limits and the captured
// error message on a real CVODE and IDA memory, the failure sentence and flag names of both
// solvers, and the shared argument checks. The integrators' behaviour through this layer is
// covered by tst_cvodes_integrator, tst_dae and the tests that use them.
#include <QtTest/QtTest>

#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/common/errors.h"
#include "core/integrators/integrator_arguments.h"
#include "core/integrators/sundials_linear_system.h"
#include "core/integrators/sundials_solver.h"

using namespace sensode;
using namespace sensode::integrators;
namespace sun = sensode::integrators::sundials;

namespace {

// 4×4 pattern in CSC: column 0 rows {1, 3} (no diagonal), column 1 rows {1}, column 2 rows {0}
// (diagonal below the last entry), column 3 empty.
symbolic::SparsePattern examplePattern() {
  symbolic::SparsePattern p;
  p.rows = p.cols = 4;
  p.colPtr = {0, 2, 3, 4, 4};
  p.rowIdx = {1, 3, 1, 0};
  return p;
}

// The dense matrix (column-major) of a SUNSparseMatrix in CSC form.
std::vector<double> denseOfSparse(SUNMatrix M, int n) {
  std::vector<double> out(static_cast<std::size_t>(n * n), 0.0);
  const sunindextype* cp = SUNSparseMatrix_IndexPointers(M);
  const sunindextype* ri = SUNSparseMatrix_IndexValues(M);
  const double* v = SUNSparseMatrix_Data(M);
  for (int j = 0; j < n; ++j)
    for (sunindextype k = cp[j]; k < cp[j + 1]; ++k)
      out[static_cast<std::size_t>(j * n + ri[k])] += v[k];
  return out;
}

// y' = -y, for a real CVODE memory.
int decay(double /*t*/, N_Vector y, N_Vector ydot, void* /*user*/) {
  N_VGetArrayPointer(ydot)[0] = -N_VGetArrayPointer(y)[0];
  return 0;
}

// F = y' + y for a real IDA memory.
int decayResidual(double /*t*/, N_Vector y, N_Vector yp, N_Vector r, void* /*user*/) {
  N_VGetArrayPointer(r)[0] = N_VGetArrayPointer(yp)[0] + N_VGetArrayPointer(y)[0];
  return 0;
}

}  // namespace

class TestSundialsLayer : public QObject {
  Q_OBJECT

 private slots:
  void mergedPatternInsertsTheMissingDiagonal() {
    sun::MergedPattern m;
    m.build(examplePattern(), 4);
    // Worked by hand: column 0 gets row 0 before row 1, column 2 gets row 2 after row 0, and the
    // empty column 3 gets its diagonal.
    QCOMPARE(m.colPtr, (std::vector<sunindextype>{0, 3, 4, 6, 7}));
    QCOMPARE(m.rowIdx, (std::vector<sunindextype>{0, 1, 3, 1, 0, 2, 3}));
    QCOMPARE(m.target, (std::vector<sunindextype>{1, 2, 3, 4}));
    QCOMPARE(m.diagonal, (std::vector<sunindextype>{0, 3, 5, 6}));
    QCOMPARE(m.nnz(), sunindextype{7});
  }

  // IDAS's iteration matrix c_j·D − J: the KLU (sparse) and dense assemblies give the same
  // matrix, and both the one written by plain loops here.
  void sparseAndDenseNewtonMatricesAgree() {
    const symbolic::SparsePattern jp = examplePattern();
    const std::vector<double> values = {2.5, -1.25, 3.0, 0.5};
    const std::vector<double> d = {1.0, 0.0, 1.0, 1.0};
    const double cj = 7.0;
    sun::MergedPattern m;
    m.build(jp, 4);
    sun::ContextPtr ctx = sun::newContext();
    sun::MatrixPtr sparse(SUNSparseMatrix(4, 4, 2, CSC_MAT, ctx.get()));  // too small: grows
    sun::MatrixPtr dense(SUNDenseMatrix(4, 4, ctx.get()));
    sun::scatterJacobian(sparse.get(), true, m, jp, values, -1.0);
    sun::addScaledDiagonal(sparse.get(), true, m, cj, d);
    sun::scatterJacobian(dense.get(), false, m, jp, values, -1.0);
    sun::addScaledDiagonal(dense.get(), false, m, cj, d);

    std::vector<double> expected(16, 0.0);
    for (int j = 0; j < 4; ++j)
      for (int k = jp.colPtr[static_cast<std::size_t>(j)]; k < jp.colPtr[static_cast<std::size_t>(j) + 1]; ++k)
        expected[static_cast<std::size_t>(j * 4 + jp.rowIdx[static_cast<std::size_t>(k)])] =
            -values[static_cast<std::size_t>(k)];
    for (int i = 0; i < 4; ++i) expected[static_cast<std::size_t>(i * 5)] += cj * d[static_cast<std::size_t>(i)];

    const double* denseData = SUNDenseMatrix_Data(dense.get());
    QCOMPARE(std::vector<double>(denseData, denseData + 16), expected);
    QCOMPARE(denseOfSparse(sparse.get(), 4), expected);
    QCOMPARE(SUNSparseMatrix_NNZ(sparse.get()), m.nnz());
  }

  void sensitivityColumnsCopyColumnMajor() {
    sun::ContextPtr ctx = sun::newContext();
    sun::VectorArray columns;
    columns.create(3, 2, ctx.get());
    QCOMPARE(columns.size(), std::size_t{3});
    for (std::size_t j = 0; j < 3; ++j) {
      columns.values(j)[0] = 10.0 * static_cast<double>(j);
      columns.values(j)[1] = 10.0 * static_cast<double>(j) + 1;
    }
    std::vector<double> s(6, -1.0);
    sun::copySensitivities(columns, 2, s.data());
    QCOMPARE(s, (std::vector<double>{0, 1, 10, 11, 20, 21}));
    columns.create(1, 2, ctx.get());  // starts over
    QCOMPARE(columns.size(), std::size_t{1});
  }

  // newVector turns SUNDIALS's fused operations on (one loop per linear combination instead of
  // one N_VLinearSum call per vector), clones inherit them, and the fused combination computes
  // what the chain of N_VLinearSum calls it replaces computes, bit for bit: c0·x0 + c1·x1, then
  // + c2·x2, element by element in that order.
  void vectorsUseFusedOperations() {
    sun::ContextPtr ctx = sun::newContext();
    sun::VectorPtr x0 = sun::newVector(std::vector<double>{0.1, 1e-17, -3.0, 7.25}, ctx.get());
    QVERIFY(x0->ops->nvlinearcombination != nullptr);
    QVERIFY(x0->ops->nvscaleaddmulti != nullptr);
    QVERIFY(x0->ops->nvlinearsumvectorarray != nullptr);
    N_Vector x1 = N_VClone(x0.get());
    N_Vector x2 = N_VClone(x0.get());
    QVERIFY(x1->ops->nvlinearcombination != nullptr);
    const double v1[] = {1.0 / 3, 2.5e-9, 1e17, -0.7};
    const double v2[] = {-1e-3, 4.0, -1e17, 1.0 / 7};
    std::copy(v1, v1 + 4, N_VGetArrayPointer(x1));
    std::copy(v2, v2 + 4, N_VGetArrayPointer(x2));
    double c[] = {0.3, -1.7, 2.0 / 3};
    N_Vector xs[] = {x0.get(), x1, x2};
    sun::VectorPtr fused = sun::newVector(4, ctx.get());
    QCOMPARE(N_VLinearCombination(3, c, xs, fused.get()), 0);
    sun::VectorPtr chained = sun::newVector(4, ctx.get());
    N_VLinearSum(c[0], x0.get(), c[1], x1, chained.get());
    N_VLinearSum(1.0, chained.get(), c[2], x2, chained.get());
    for (int i = 0; i < 4; ++i)  // exact equality (QCOMPARE on doubles is fuzzy)
      QVERIFY2(N_VGetArrayPointer(fused.get())[i] == N_VGetArrayPointer(chained.get())[i],
               qPrintable(QString("element %1").arg(i)));
    N_VDestroy(x1);
    N_VDestroy(x2);
  }

  // The shared option setting on a real CVODE memory: maxSteps stops the run, the maximum step
  // size bounds every step, and the error handler keeps SUNDIALS's message instead of printing.
  void stepLimitsAndMessageOnCvode() {
    sun::ContextPtr ctx = sun::newContext();
    sun::VectorPtr y = sun::newVector(std::vector<double>{1.0}, ctx.get());
    sun::CvodeMemPtr mem(CVodeCreate(CV_BDF, ctx.get()));
    std::string message;
    sun::installMessageSink<sun::CvodeApi>(mem.get(), &message);
    sun::check<sun::CvodeApi>(CVodeInit(mem.get(), &decay, 0.0, y.get()), "CVodeInit");
    CVodeSStolerances(mem.get(), 1e-6, 1e-9);
    sun::MatrixPtr A;
    sun::LinearSolverPtr ls;
    sun::createLinearSystem(false, 1, sun::MergedPattern{}, y.get(), ctx.get(), A, ls);
    CVodeSetLinearSolver(mem.get(), ls.get(), A.get());
    IntegratorOptions options;
    options.maxSteps = 7;
    options.maxStepSize = 0.05;
    sun::setStepLimits<sun::CvodeApi>(mem.get(), options);

    double t = 0;
    const int flag = CVode(mem.get(), 100.0, y.get(), &t, CV_NORMAL);
    QCOMPARE(flag, CV_TOO_MUCH_WORK);
    QVERIFY2(message.find("mxstep") != std::string::npos, message.c_str());
    IntegratorStats stats;
    sun::collectStats<sun::CvodeApi>(mem.get(), stats, false);
    QCOMPARE(stats.steps, 7L);
    QVERIFY(stats.rhsEvals >= stats.steps);
    QVERIFY(t > 0 && t <= 7 * 0.05 + 1e-12);  // seven steps of at most 0.05
    // CVODE hands back the solution where it stopped: the analytic e^{-t} within the tolerances.
    QVERIFY(std::abs(N_VGetArrayPointer(y.get())[0] - std::exp(-t)) < 1e-5);
  }

  void stepLimitsOnIdas() {
    sun::ContextPtr ctx = sun::newContext();
    sun::VectorPtr y = sun::newVector(std::vector<double>{1.0}, ctx.get());
    sun::VectorPtr yp = sun::newVector(std::vector<double>{-1.0}, ctx.get());
    sun::IdaMemPtr mem(IDACreate(ctx.get()));
    std::string message;
    sun::installMessageSink<sun::IdaApi>(mem.get(), &message);
    sun::check<sun::IdaApi>(IDAInit(mem.get(), &decayResidual, 0.0, y.get(), yp.get()), "IDAInit");
    IDASStolerances(mem.get(), 1e-6, 1e-9);
    sun::MatrixPtr A;
    sun::LinearSolverPtr ls;
    sun::createLinearSystem(false, 1, sun::MergedPattern{}, y.get(), ctx.get(), A, ls);
    IDASetLinearSolver(mem.get(), ls.get(), A.get());
    IntegratorOptions options;
    options.maxSteps = 5;
    sun::setStepLimits<sun::IdaApi>(mem.get(), options);
    double t = 0;
    const int flag = IDASolve(mem.get(), 1e6, &t, y.get(), yp.get(), IDA_NORMAL);
    QCOMPARE(flag, IDA_TOO_MUCH_WORK);
    QVERIFY2(message.find("mxstep") != std::string::npos, message.c_str());
    IntegratorStats stats;
    sun::collectStats<sun::IdaApi>(mem.get(), stats, false);
    QCOMPARE(stats.steps, 5L);
  }

  void failureSentencesNameSolverTimeAndStep() {
    try {
      sun::throwFailure<sun::CvodeApi>(nullptr, 2.5, "the cause", "the details");
      QFAIL("no exception");
    } catch (const IntegrationFailure& e) {
      QCOMPARE(std::string(e.what()), std::string("CVODES failed at t = 2.5 (step size 0): the cause"));
      QCOMPARE(e.t(), 2.5);
      QCOMPARE(e.details(), std::string("the details"));
    }
    try {
      sun::throwFailure<sun::IdaApi>(nullptr, 1e-3, "x");
      QFAIL("no exception");
    } catch (const IntegrationFailure& e) {
      QCOMPARE(std::string(e.what()), std::string("IDAS failed at t = 0.001 (step size 0): x"));
    }
    QCOMPARE(sun::flagName<sun::CvodeApi>(CV_CONV_FAILURE), std::string("CV_CONV_FAILURE"));
    QCOMPARE(sun::flagName<sun::IdaApi>(IDA_ERR_FAIL), std::string("IDA_ERR_FAIL"));
    QCOMPARE(sun::flagDetails<sun::CvodeApi>(CV_ERR_FAILURE, "msg"),
             std::string("CV_ERR_FAILURE: msg"));
    QVERIFY(std::string(sun::describeIdaFlag(IDA_LSETUP_FAIL)).find("algebraic constraints") !=
            std::string::npos);
    QCOMPARE(std::string(sun::describeCvodeFlag(CV_CONV_FAILURE)),
             std::string("Newton iteration failed to converge repeatedly (step size too small)"));
    try {
      sun::check<sun::IdaApi>(IDA_MEM_NULL, "IDASetMaxStep");
      QFAIL("no exception");
    } catch (const Error& e) {
      QCOMPARE(std::string(e.what()), std::string("SUNDIALS call IDASetMaxStep failed: IDA_MEM_NULL"));
    }
  }

  void argumentChecksNameTheClass() {
    QVERIFY_THROWS_EXCEPTION(InvalidOptions, checkOutputTime("IdasIntegrator", std::nan(""), 0.0));
    QVERIFY_THROWS_EXCEPTION(InvalidOptions, checkOutputTime("IdasIntegrator", 0.5, 1.0));
    checkOutputTime("IdasIntegrator", 1.0, 1.0);
    try {
      checkSensitivityRequest("CvodesIntegrator", 3, 2, {0, 3}, std::vector<double>(4, 0.0));
      QFAIL("no exception");
    } catch (const InvalidOptions& e) {
      QCOMPARE(std::string(e.what()),
               std::string("CvodesIntegrator::enableSensitivities: parameter index 3 outside [0, 3)"));
    }
    try {
      checkSensitivityRequest("IdasIntegrator", 3, 2, {0, 1}, std::vector<double>(3, 0.0));
      QFAIL("no exception");
    } catch (const InvalidOptions& e) {
      QCOMPARE(std::string(e.what()),
               std::string("IdasIntegrator::enableSensitivities: s0 has 3 values, expected nx × ns = 4"));
    }
    QVERIFY_THROWS_EXCEPTION(InvalidOptions, checkStopTime("CvodesIntegrator", 1.0, 2.0));
    const std::vector<double> p = {-2.0, 0.0, std::nan(""), 1e-3};
    QCOMPARE(sensitivityScales(p, {0, 1, 2, 3}), (std::vector<double>{2.0, 1.0, 1.0, 1e-3}));
  }
};

QTEST_APPLESS_MAIN(TestSundialsLayer)
#include "tst_sundials_layer.moc"
