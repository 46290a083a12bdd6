// SPDX-License-Identifier: MIT
// Coefficients of the odeSD integrator (Gonnet, Dimopoulos, Widmer, Stelling, BMC Syst Biol 6:46,
// 2012) for variable step ratios, as derived and sympy-verified in NUMERICS.md §2:
//
//   predictor     quintic Hermite extrapolation through (x, ẋ, ẍ) at t_{n−1}, t_n      (§2.3)
//   error         D = g5(t_{n+1}) − g4(t_{n+1}), g5 the degree-5 polynomial through
//                 x_{n−1}, (x, ẋ, ẍ)_n, (ẋ, ẍ)_{n+1}; g4 the rule (R-O) itself          (§2.4)
//   dense output  quintic Hermite on [t_n, t_n + h]                                       (§2.7)
//
// r = h / h_{n−1} is the ratio of the new step to the previous one; θ ∈ [0, 1] the position
// inside a step. Header-only and constexpr so the unit tests can check them exactly.
#pragma once

namespace sensode::integrators::odesd {

// x̃(t_n + h) = xm·x_{n−1} + x·x_n + h_{n−1}(fm·f_{n−1} + f·f_n) + h_{n−1}²(am·a_{n−1} + a·a_n).
// Exact for quintic polynomials; xm + x = 1 for every r; r = 1 gives (−31, 32, −14, −16, −2, 4).
struct PredictorCoefficients {
  double xm, x, fm, f, am, a;
};

constexpr PredictorCoefficients hermitePredictor(double r) {
  const double r2 = r * r, r3 = r2 * r, rp1 = r + 1, rp1c = rp1 * rp1 * rp1;
  return {
      -r3 * (6 * r2 + 15 * r + 10),   // x_{n−1}
      rp1c * (6 * r2 - 3 * r + 1),    // x_n
      -r3 * rp1 * (3 * r + 4),        // h_{n−1} f_{n−1}
      -r * rp1c * (3 * r - 1),        // h_{n−1} f_n
      -r3 * rp1 * rp1 / 2,            // h_{n−1}² a_{n−1}
      r2 * rp1c / 2,                  // h_{n−1}² a_n
  };
}

// Δ(r) = 10r² + 15r + 6, the common denominator of g5 and D.
constexpr double g5Denominator(double r) { return 10 * r * r + 15 * r + 6; }

// g5(t_{n+1}) = xm·x_{n−1} + x·x_n + h(f0·f_n + f1·f_{n+1}) + h²(a0·a_n + a1·a_{n+1}).
// At r = 1: (−1/31, 32/31, 16/31, 14/31, 4/31, −2/31) — the paper's weights 14/31 and 2/31 on
// f(t+h) and ẍ(t+h), against 1/2 and 1/12 in g4.
struct G5Coefficients {
  double xm, x, f0, f1, a0, a1;
};

constexpr G5Coefficients g5Weights(double r) {
  const double d = g5Denominator(r), rp1 = r + 1, rp1c = rp1 * rp1 * rp1, r5 = r * r * r * r * r;
  return {
      -r5 / d,                      // x_{n−1}
      1 + r5 / d,                   // x_n
      (3 - r) * rp1c / d,           // h f_n
      rp1 * (4 * r + 3) / d,        // h f_{n+1}
      rp1c / (2 * d),               // h² a_n
      -rp1 * rp1 / (2 * d),         // h² a_{n+1}
  };
}

// D = g5 − g4 = dx·(x_n − x_{n−1}) + h(f0·f_n + f1·f_{n+1}) + h²(a0·a_n + a1·a_{n+1}) written
// directly (no cancellation between g5 and g4). On smooth data D = (h⁵/720) x⁽⁵⁾ + O(h⁶) for
// every r, i.e. D estimates x(t_{n+1}) − x_{n+1}, the local error of (R-O) with the sign of
// "exact minus computed". r = 1: (1, 1/2, −3/2, 17/12, 7/12) / 31.
struct ErrorCoefficients {
  double dx, f0, f1, a0, a1;
};

constexpr ErrorCoefficients errorWeights(double r) {
  const double d = g5Denominator(r), r2 = r * r, r5 = r2 * r2 * r;
  return {
      r5 / d,                                      // x_n − x_{n−1}
      -(r / 2) * (2 * r2 * r - 2 * r - 1) / d,     // h f_n
      -(r / 2) * (2 * r + 1) / d,                  // h f_{n+1}
      (r / 12) * (6 * r2 + 8 * r + 3) / d,         // h² a_n
      (r / 12) * (4 * r + 3) / d,                  // h² a_{n+1}
  };
}

// x(t_n + θh) ≈ x0·x_n + x1·x_{n+1} + h(f0·f_n + f1·f_{n+1}) + h²(a0·a_n + a1·a_{n+1}).
struct DenseCoefficients {
  double x0, x1, f0, f1, a0, a1;
};

constexpr DenseCoefficients hermiteDense(double th) {
  const double s = 1 - th, s2 = s * s, s3 = s2 * s, t2 = th * th, t3 = t2 * th;
  return {
      s3 * (6 * t2 + 3 * th + 1),     // x_n
      t3 * (6 * t2 - 15 * th + 10),   // x_{n+1}
      th * s3 * (3 * th + 1),         // h f_n
      -t3 * s * (4 - 3 * th),         // h f_{n+1}
      t2 * s3 / 2,                    // h² a_n
      t3 * s2 / 2,                    // h² a_{n+1}
  };
}

// Lagrange weights of the x-only quadratic extrapolation (§2.3, once used after stiff steps) through
// (−h_{n−1} − h_{n−2}, x_{n−2}), (−h_{n−1}, x_{n−1}), (0, x_n), evaluated at h.
struct QuadraticCoefficients {
  double xm2, xm1, x;
};

constexpr QuadraticCoefficients quadraticPredictor(double h, double hm1, double hm2) {
  return {
      h * (h + hm1) / (hm2 * (hm1 + hm2)),
      -h * (h + hm1 + hm2) / (hm1 * hm2),
      (h + hm1) * (h + hm1 + hm2) / (hm1 * (hm1 + hm2)),
  };
}

// Lagrange weights of the x-only extrapolation of degree deg (1–4) through x_n, x_{n−1}, …,
// x_{n−deg}: past[j] = h_{n−j}, the step that ended at x_{n−j} (past[0] = h_{n−1}), so the
// nodes are 0, −past[0], −past[0] − past[1], …; weights[j] multiplies x_{n−j}, evaluated at h.
// deg = 2 equals quadraticPredictor.
constexpr void extrapolationWeights(double h, const double* past, int deg, double* weights) {
  double tau[5] = {0, 0, 0, 0, 0};
  for (int j = 1; j <= deg; ++j) tau[j] = tau[j - 1] - past[j - 1];
  for (int j = 0; j <= deg; ++j) {
    double l = 1;
    for (int i = 0; i <= deg; ++i) {
      if (i != j) l *= (h - tau[i]) / (tau[j] - tau[i]);
    }
    weights[j] = l;
  }
}

}  // namespace sensode::integrators::odesd
