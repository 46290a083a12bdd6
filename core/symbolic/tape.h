// SPDX-License-Identifier: MIT
// A compiled evaluator: the expressions reachable from a list of roots, ordered once, each node
// evaluated exactly once per call (common subexpressions are shared nodes), written as a flat
// instruction list over a slot array. Inputs are the symbol values t, x, p copied into fixed
// slots; constants live in slots filled at compile time; outputs are copied from their slots.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/symbolic/expression.h"

namespace sensode::symbolic {

// Where each symbol's value comes from at evaluation time.
struct TapeInputs {
  Expr time = 0;           // symbol node of t (0 = unused)
  std::vector<Expr> x;     // symbol nodes of the states, in state order
  std::vector<Expr> p;     // symbol nodes of the parameters, in parameter order
};

class Tape {
 public:
  Tape() = default;
  Tape(const ExprPool& pool, const TapeInputs& inputs, std::span<const Expr> roots);

  // out[i] = value of roots[i]. Allocation-free; not thread-safe (uses the scratch slots).
  void evaluate(double t, const double* x, const double* p, double* out) const;

  std::size_t numInstructions() const { return code_.size(); }
  std::size_t numOutputs() const { return outputSlots_.size(); }
  std::size_t numSlots() const { return slots_.size(); }

  // Emits the tape as a C function `void NAME(double t, const double* x, const double* p,
  // double* out)` (the benchmark's compiled-C reference; one statement per instruction).
  std::string emitC(const std::string& functionName) const;

  struct Instr {
    std::uint8_t op;        // Tape opcode (see tape.cpp)
    std::uint32_t out;      // destination slot
    std::uint32_t a, b;     // operand slots, or (first, count) into args_ for n-ary ops
    std::uint32_t n2;       // second count, or the Op of a generic function
    double c;               // immediate constant for fused ops
  };

 private:
  struct Input {
    std::uint32_t slot, index;
  };
  std::vector<Instr> code_;
  std::vector<std::uint32_t> args_;
  std::vector<double> coefs_;  // per args_ entry: coefficient inside a linear combination
  std::vector<Input> xInputs_, pInputs_;
  std::uint32_t tSlot_ = UINT32_MAX;
  std::vector<std::uint32_t> outputSlots_;
  mutable std::vector<double> slots_;  // constants pre-filled; inputs and temporaries per call
};

}  // namespace sensode::symbolic
