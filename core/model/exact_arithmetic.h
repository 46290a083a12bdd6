// SPDX-License-Identifier: MIT
// Exact arithmetic for the conservation-law analysis (conservation_laws.cpp): doubles as small
// fractions, arithmetic modulo the prime p = 2⁶¹ − 1, and rational reconstruction of a residue
// as a fraction a/b with |a|, b < 2³⁰. One machine word per number keeps the elimination of a
// few thousand species fast where fraction-free elimination over ℚ grows hundreds of digits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>

namespace sensode::model::exact {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// ---------------------------------------------------------------------------------------------
// Exact fractions from doubles.

struct Fraction {
  std::int64_t num = 0;
  std::int64_t den = 1;
};

// Stoichiometries are small integers or decimals of up to 7 digits; larger denominators mean the
// value is not meant to be rational (√2 typed as a double), and we would rather go numeric. The
// bound also keeps false matches away: a convergent h/k of an irrational x is typically 1/k² away
// from it, far more than half an ulp for k ≤ 2²⁴.
constexpr std::int64_t kMaxInputDenominator = std::int64_t{1} << 24;
// Integer entries (after column scaling) stay below 2⁵⁰ so every later product fits in 128 bits.
constexpr std::int64_t kMaxInputMagnitude = std::int64_t{1} << 50;

// The fraction with denominator ≤ kMaxInputDenominator whose double is exactly x, found among the
// continued-fraction convergents of x (the best rational approximations, so the simplest such
// fraction comes first).
inline std::optional<Fraction> toFraction(double x) {
  if (!std::isfinite(x)) return std::nullopt;
  if (x == 0.0) return Fraction{0, 1};
  const double ax = std::fabs(x);
  if (ax >= static_cast<double>(kMaxInputMagnitude)) return std::nullopt;
  const std::int64_t sign = x < 0 ? -1 : 1;
  if (ax == std::floor(ax)) return Fraction{sign * static_cast<std::int64_t>(ax), 1};
  std::int64_t h1 = 1, h2 = 0, k1 = 0, k2 = 1;  // convergents h/k, previous two
  double y = ax;
  for (int iteration = 0; iteration < 64; ++iteration) {
    const double a = std::floor(y);
    if (a > static_cast<double>(kMaxInputMagnitude)) return std::nullopt;
    const auto ai = static_cast<std::int64_t>(a);
    std::int64_t h = 0, k = 0;
    if (__builtin_mul_overflow(ai, h1, &h) || __builtin_add_overflow(h, h2, &h) ||
        __builtin_mul_overflow(ai, k1, &k) || __builtin_add_overflow(k, k2, &k) ||
        k > kMaxInputDenominator || h > kMaxInputMagnitude)
      return std::nullopt;
    if (static_cast<double>(h) / static_cast<double>(k) == ax) return Fraction{sign * h, k};
    const double frac = y - a;
    if (frac <= 0.0) return std::nullopt;
    y = 1.0 / frac;
    h2 = h1, h1 = h, k2 = k1, k1 = k;
  }
  return std::nullopt;
}

inline std::optional<std::int64_t> checkedLcm(std::int64_t a, std::int64_t b) {
  const std::int64_t g = std::gcd(a, b);
  std::int64_t result = 0;
  if (__builtin_mul_overflow(a / g, b, &result)) return std::nullopt;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Arithmetic modulo the Mersenne prime 2⁶¹ − 1: products fit in 128 bits and reduce with shifts.

constexpr std::uint64_t kPrime = (std::uint64_t{1} << 61) - 1;

inline std::uint64_t addMod(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t s = a + b;
  return s >= kPrime ? s - kPrime : s;
}
inline std::uint64_t subMod(std::uint64_t a, std::uint64_t b) {
  return a >= b ? a - b : a + kPrime - b;
}
inline std::uint64_t negMod(std::uint64_t a) { return a == 0 ? 0 : kPrime - a; }
inline std::uint64_t mulMod(std::uint64_t a, std::uint64_t b) {
  const UInt128 t = static_cast<UInt128>(a) * b;
  std::uint64_t r = (static_cast<std::uint64_t>(t) & kPrime) + static_cast<std::uint64_t>(t >> 61);
  r = (r & kPrime) + (r >> 61);
  return r >= kPrime ? r - kPrime : r;
}
inline std::uint64_t powMod(std::uint64_t base, std::uint64_t e) {
  std::uint64_t result = 1;
  while (e != 0) {
    if (e & 1) result = mulMod(result, base);
    base = mulMod(base, base);
    e >>= 1;
  }
  return result;
}
inline std::uint64_t invMod(std::uint64_t a) { return powMod(a, kPrime - 2); }
inline std::uint64_t toMod(std::int64_t v) {
  return v >= 0 ? static_cast<std::uint64_t>(v) % kPrime
                : negMod(static_cast<std::uint64_t>(-v) % kPrime);
}

// Wang's rational reconstruction: the a/b ≡ u (mod p) with |a|, b ≤ bound, if there is one; it
// is unique because 2·bound² < p.
constexpr std::int64_t kReconstructionBound = (std::int64_t{1} << 30) - 1;

inline std::optional<Fraction> reconstruct(std::uint64_t u) {
  std::int64_t r0 = static_cast<std::int64_t>(kPrime), r1 = static_cast<std::int64_t>(u);
  std::int64_t t0 = 0, t1 = 1;
  while (r1 > kReconstructionBound) {
    const std::int64_t q = r0 / r1;
    r0 = std::exchange(r1, r0 - q * r1);
    t0 = std::exchange(t1, t0 - q * t1);
  }
  if (t1 == 0 || t1 > kReconstructionBound || t1 < -kReconstructionBound) return std::nullopt;
  Fraction f = t1 < 0 ? Fraction{-r1, -t1} : Fraction{r1, t1};
  if (std::gcd(f.num, f.den) != 1) return std::nullopt;
  return f;
}

}  // namespace sensode::model::exact
