// SPDX-License-Identifier: MIT
#include "core/sensitivity/matrix_exponential.h"

#include <cmath>

#include <unsupported/Eigen/MatrixFunctions>

namespace sensode::sensitivity {

Eigen::MatrixXd expm(const Eigen::MatrixXd& m) { return m.exp(); }

namespace {

// Padé coefficients b_0 … b_m (Higham 2005, Table 2.3).
constexpr double kPade3[] = {120., 60., 12., 1.};
constexpr double kPade5[] = {30240., 15120., 3360., 420., 30., 1.};
constexpr double kPade7[] = {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
constexpr double kPade9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                             2162160.,     110880.,     3960.,       90.,        1.};
constexpr double kPade13[] = {64764752532480000., 32382376266240000., 7771770303897600.,
                              1187353796428800.,  129060195264000.,   10559470521600.,
                              670442572800.,      33522128640.,       1323241920.,
                              40840800.,          960960.,            16380.,
                              182.,               1.};

// θ_m: the largest 1-norm for which degree m needs no scaling (double precision).
constexpr double kTheta3 = 1.495585217958292e-2, kTheta5 = 2.539398330063230e-1,
                 kTheta7 = 9.504178996162932e-1, kTheta9 = 2.097847961257068,
                 kTheta13 = 5.371920351148152;

// U' and V with U = X·U' (odd part) and V (even part) of the degree-m Padé numerator, from the
// even powers X², X⁴, X⁶, X⁸ (computed as needed).
void padeParts(int m, ExponentialWorkspace& w) {
  const Eigen::Index n = w.x.rows();
  const auto identity = Eigen::MatrixXd::Identity(n, n);
  w.x2.noalias() = w.x * w.x;
  switch (m) {
    case 3: {
      const double* b = kPade3;
      w.uPrime = b[3] * w.x2 + b[1] * identity;
      w.v = b[2] * w.x2 + b[0] * identity;
      return;
    }
    case 5: {
      const double* b = kPade5;
      w.x4.noalias() = w.x2 * w.x2;
      w.uPrime = b[5] * w.x4 + b[3] * w.x2 + b[1] * identity;
      w.v = b[4] * w.x4 + b[2] * w.x2 + b[0] * identity;
      return;
    }
    case 7: {
      const double* b = kPade7;
      w.x4.noalias() = w.x2 * w.x2;
      w.x6.noalias() = w.x4 * w.x2;
      w.uPrime = b[7] * w.x6 + b[5] * w.x4 + b[3] * w.x2 + b[1] * identity;
      w.v = b[6] * w.x6 + b[4] * w.x4 + b[2] * w.x2 + b[0] * identity;
      return;
    }
    case 9: {
      const double* b = kPade9;
      w.x4.noalias() = w.x2 * w.x2;
      w.x6.noalias() = w.x4 * w.x2;
      w.x8.noalias() = w.x6 * w.x2;
      w.uPrime = b[9] * w.x8 + b[7] * w.x6 + b[5] * w.x4 + b[3] * w.x2 + b[1] * identity;
      w.v = b[8] * w.x8 + b[6] * w.x6 + b[4] * w.x4 + b[2] * w.x2 + b[0] * identity;
      return;
    }
    default: {
      const double* b = kPade13;
      w.x4.noalias() = w.x2 * w.x2;
      w.x6.noalias() = w.x4 * w.x2;
      w.tmp = b[13] * w.x6 + b[11] * w.x4 + b[9] * w.x2;
      w.uPrime.noalias() = w.x6 * w.tmp;
      w.uPrime += b[7] * w.x6 + b[5] * w.x4 + b[3] * w.x2 + b[1] * identity;
      w.tmp = b[12] * w.x6 + b[10] * w.x4 + b[8] * w.x2;
      w.v.noalias() = w.x6 * w.tmp;
      w.v += b[6] * w.x6 + b[4] * w.x4 + b[2] * w.x2 + b[0] * identity;
      return;
    }
  }
}

}  // namespace

void integratedExponential(const Eigen::MatrixXd& a, double dt, Eigen::MatrixXd& e,
                           Eigen::MatrixXd& phi, ExponentialWorkspace& w) {
  const Eigen::Index n = a.rows();
  w.x = dt * a;
  double h = dt;  // the top-right block of M is h·I
  const double norm =
      n == 0 ? std::abs(dt) : std::max(w.x.cwiseAbs().colwise().sum().maxCoeff(), std::abs(dt));
  int degree = 13, squarings = 0;
  if (norm < kTheta3) {
    degree = 3;
  } else if (norm < kTheta5) {
    degree = 5;
  } else if (norm < kTheta7) {
    degree = 7;
  } else if (norm < kTheta9) {
    degree = 9;
  } else {
    std::frexp(norm / kTheta13, &squarings);  // as Eigen: norm/θ13 = f·2^s, f ∈ [0.5, 1)
    if (squarings < 0) squarings = 0;
    w.x *= std::ldexp(1.0, -squarings);
    h = std::ldexp(dt, -squarings);
  }
  padeParts(degree, w);
  w.u.noalias() = w.x * w.uPrime;
  w.tmp = w.v - w.u;  // denominator
  w.lu.compute(w.tmp);
  w.tmp = w.v + w.u;  // numerator
  e = w.lu.solve(w.tmp);
  w.uPrime *= 2 * h;
  phi = w.lu.solve(w.uPrime);
  for (int k = 0; k < squarings; ++k) {
    // [[E, F], [0, I]]² = [[E², E F + F], [0, I]]
    w.product.noalias() = e * phi;
    phi += w.product;
    w.product.noalias() = e * e;
    e.swap(w.product);
  }
}

void exponentialStep(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double dt,
                     Eigen::MatrixXd& s, ExponentialWorkspace& work) {
  if (a.rows() == 0 || b.cols() == 0 || dt == 0) return;
  integratedExponential(a, dt, work.e, work.phi, work);
  work.product.noalias() = work.e * s;
  work.product.noalias() += work.phi * b;
  s.swap(work.product);
}

}  // namespace sensode::sensitivity
