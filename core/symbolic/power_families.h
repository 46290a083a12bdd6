// SPDX-License-Identifier: MIT
// Powers of one base whose exponents differ by small integers, u^(r+k) for several k: a Hill
// term u^n and the powers its derivatives bring (n·u^(n−1) in J, n(n−1)·u^(n−2) in ẍ, u^(n−3) in
// J_J). A tape evaluates the one with the highest k by pow() and the others from it by
// divisions (Tape's kPowStep), where pow() costs tens of nanoseconds each: on the repressilator
// (Elowitz_Nature2000, Hill exponent n a parameter) pow() was a fifth of odeSD's time course,
// with three calls per Hill term in f and ẍ against one in f alone. The highest is the power the
// rate law itself holds, so f's values are the same bits in every tape that computes them (f
// alone, and f with ẍ in one pass: tst_native_evaluators compares the two bit for bit).
#pragma once

#include <span>
#include <unordered_map>

#include "core/symbolic/expression.h"

namespace sensode::symbolic {

// How a member of a family is computed from the family's anchor: u^(r+k) = anchor / u^step.
struct PowerStep {
  Expr anchor = 0;  // the member with the highest k (evaluated by pow())
  int step = 0;     // k_anchor − k, 1..kMaxPowerStep
};

// The largest step taken by division (repeated divisions keep the rounding within step half-
// units in the last place on top of pow()'s; larger gaps are evaluated by pow()).
inline constexpr int kMaxPowerStep = 4;

// Among `nodes` (each at most once): every Pow whose exponent is not a constant, written as
// r + k with r one non-constant expression and k an integer constant (k = 0 when the exponent
// is not a sum), that shares its base and r with a member of higher k within kMaxPowerStep.
// Keyed by the member; anchors are not keys.
std::unordered_map<Expr, PowerStep> powerFamilies(const ExprPool& pool, std::span<const Expr> nodes);

// anchor / u^step (one division by u per step) as Tape evaluates a kPowStep, or pow(u, exponent)
// where that quotient could differ from pow() by more than rounding: u or the anchor zero,
// subnormal or not finite (0^n = 0 for n > 0, and 0/0 is not 0^(n−1)). The emitted C
// (Tape::cPrelude's sensode_powstep) has the same body, so interpreter and native code agree
// bit for bit.
double powStep(double u, double anchor, int step, double exponent);

}  // namespace sensode::symbolic
