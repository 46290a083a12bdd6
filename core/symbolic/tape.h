// SPDX-License-Identifier: MIT
// A compiled evaluator: the expressions reachable from a list of roots, ordered once, each node
// evaluated exactly once per call (common subexpressions are shared nodes), written as a flat
// instruction list over a slot array. Inputs are the symbol values t, x, p copied into fixed
// slots; constants live in slots filled at compile time; outputs are copied from their slots.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
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

// A tape's switch to native code (native_compiler.h): once `fn` is set, evaluate() calls it with
// the tape's own slot array as scratch. `library` keeps the shared object loaded for as long as
// any tape (or copy of one) points into it; it is set before `fn` is published.
using NativeFunction = void (*)(double t, const double* x, const double* p, double* out,
                                double* scratch);
struct NativeBinding {
  std::atomic<NativeFunction> fn{nullptr};
  std::shared_ptr<void> library;
  // What ran the first call: 0 none yet, 1 native code, 2 the interpreter (--stats'
  // native_from_first_evaluation).
  std::atomic<unsigned char> firstCall{0};
};

class Tape {
 public:
  Tape() = default;
  Tape(const ExprPool& pool, const TapeInputs& inputs, std::span<const Expr> roots);

  // out[i] = value of roots[i]. Allocation-free; not thread-safe (uses the scratch slots).
  // Runs native code when a bound NativeBinding has a function, else the interpreter.
  void evaluate(double t, const double* x, const double* p, double* out) const;
  // The interpreter, whatever is bound (reference for tests and benchmarks).
  void interpret(double t, const double* x, const double* p, double* out) const;

  // Copies of the tape share the binding, so clones switch to native code together.
  void bindNative(std::shared_ptr<NativeBinding> binding) { native_ = std::move(binding); }
  bool isNative() const { return native_ && native_->fn.load(std::memory_order_acquire); }

  std::size_t numInstructions() const { return code_.size(); }
  // Instructions that divide: reciprocals and products with a denominator (tests, benchmarks).
  std::size_t numDivisions() const;
  std::size_t numOutputs() const { return outputSlots_.size(); }
  std::size_t numSlots() const { return slots_.size(); }

  // C emission. Both forms compute exactly what evaluate() computes (same operations in the
  // same order, same libm calls), so C compiled without value-changing optimisations
  // (-ffp-contract=off, no -ffast-math) gives the tape's numbers bit for bit. They need
  // cPrelude() (math.h and the helpers for the less common functions) ahead of them.
  static std::string cPrelude();
  // `void NAME(double t, const double* x, const double* p, double* out)`: one statement per
  // instruction over a local slot array (readable; for small tapes and tests).
  std::string emitC(const std::string& functionName) const;
  // `void NAME(double t, const double* x, const double* p, double* out, double* s)` written for
  // the compiler: SSA form, constants and inputs read in place, bodies over 1000 statements cut
  // into noinline chunks of `chunkStatements`; `s` is caller scratch of numSlots() doubles
  // (values passed between chunks), so no large array lives on the stack.
  std::string emitCScratch(const std::string& functionName, std::size_t chunkStatements = 100) const;
  // The same appended to `c` (a model's C is the concatenation of its tapes').
  void appendCScratch(std::string& c, const std::string& functionName,
                      std::size_t chunkStatements = 100) const;

  struct Instr {
    std::uint8_t op;        // Tape opcode (see tape_ops.h)
    std::uint32_t out;      // destination slot
    std::uint32_t a, b;     // operand slots, or (first, count) into args_ for n-ary ops
    std::uint32_t n2;       // second count, or the Op of a generic function
    double c;               // immediate constant for fused ops
  };

 private:
  struct Input {
    std::uint32_t slot, index;
  };
  // Appends the C expression of `ins` to `c`; slotRef(slot, c) appends a slot's reference.
  // Defined and instantiated in tape_emit_c.cpp only.
  template <class SlotRef>
  void appendCExpression(std::string& c, const Instr& ins, SlotRef&& slotRef) const;
  // Calls read(slot) for every slot appendCExpression would reference (the same slots).
  template <class Read>
  void forEachSlotRead(const Instr& ins, Read&& read) const;

  std::vector<Instr> code_;
  std::vector<std::uint32_t> args_;
  std::vector<double> coefs_;  // per args_ entry: coefficient inside a linear combination
  std::vector<Input> xInputs_, pInputs_;
  std::uint32_t tSlot_ = UINT32_MAX;
  std::vector<std::uint32_t> outputSlots_;
  mutable std::vector<double> slots_;  // constants pre-filled; inputs and temporaries per call
  std::shared_ptr<NativeBinding> native_;
};

}  // namespace sensode::symbolic
