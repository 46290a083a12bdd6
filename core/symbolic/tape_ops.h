// SPDX-License-Identifier: MIT
// The instruction set of Tape (tape.h), shared by its builder and interpreter (tape.cpp) and its
// C emitter (tape_emit_c.cpp). Internal to the symbolic layer.
#pragma once

#include <cstdint>

namespace sensode::symbolic::tape_ops {

// Tape opcodes. Sums and products are fused with their constant coefficients and reciprocal
// factors (c·u inside a sum, u^-1 and u^2 inside a product), which removes most of the
// instructions a mass-action or Michaelis–Menten rate law would otherwise need.
enum TapeOp : std::uint8_t {
  kLinComb,   // out = c + Σ coef[k]·s[arg k]                    a = first, b = count
  kProdDiv,   // out = c · Π s[num k] / Π s[den k]                a = first, b = #num, n2 = #den
  kSquare,    // out = s[a]²
  kRecip,     // out = 1 / s[a]
  kSqrt,      // out = sqrt(s[a])
  kPowConst,  // out = s[a]^c
  kPowInt,    // out = s[a]^c with small integer c (repeated multiplication)
  kPow,       // out = s[a]^s[b]
  kUnary,     // out = fn(s[a]); fn in n2 (an Op)
  kBinary,    // out = fn(s[a], s[b]); fn in n2
  kNary,      // out = fn(s[args]); fn in n2; a = first, b = count
  kSelect,    // piecewise: a = first, b = count (v1, c1, ..., otherwise)
  kPowLog,    // out = powLog(s[a], s[b], c): s[a]^s[b]·ln^c s[a], its limit 0 at s[a] = 0
  kPowStep,   // out = powStep(s[a], s[b], c, s[n2]): s[b] = s[a]^e' computed before, the
              // result s[a]^(e'−c) = s[b]/s[a]^c, pow(s[a], s[n2]) where that could differ
              // (power_families.h)
};

}  // namespace sensode::symbolic::tape_ops
