// SPDX-License-Identifier: MIT
// Stage 3 of the pipeline: evaluators for everything the integrators and sensitivity methods
// need, each computing only the structural non-zeros of its quantity:
//
//   f   = dx/dt                      (nx)
//   J   = ∂f/∂x                      sparse nx × nx
//   fp  = ∂f/∂p                      sparse nx × np
//   a   = ẍ = J·f + ∂f/∂t            (nx)
//   JJ  = ∂a/∂x                      sparse nx × nx  (pattern of J² plus (∂J/∂x)·f)
//   ap  = ∂a/∂p = J·fp + A_mix        sparse nx × np  (A_mix = (∂J/∂p)·f + ∂f_t/∂p is taped; J·fp
//                                     is formed from J's and fp's values)
//   x0  = x(t0; p), S0 = ∂x0/∂p      (nx), sparse nx × np
//   y   = outputs (species values, amounts, concentrations, rule variables, reaction rates)
//
// All are exact symbolic derivatives compiled into tapes with shared subexpressions; calls do
// not allocate. Sparse values come in the CSC order of the matching SparsePattern.
//
// Not thread-safe: every evaluator owns a scratch buffer. Use clone() for another thread.
//
// Native evaluators: unless SENSODE_NATIVE=0, the constructor also hands copies of the tapes to a
// NativeCompiler (native_compiler.h), which compiles them as C in a background thread and
// switches every tape to the compiled code once it is loaded; construction never waits for it,
// and until then (or for good when there is no compiler) the tape interpreter runs. Results are
// identical either way. Clones share the compiler and switch together.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/symbolic/delays.h"
#include "core/symbolic/native_compiler.h"
#include "core/symbolic/ode_system.h"
#include "core/symbolic/sparsity.h"
#include "core/symbolic/tape.h"

namespace sensode::symbolic {

// Time spent building a compiled model, for the load-time report.
struct CompileTimings {
  double derivativeSeconds = 0;  // symbolic differentiation (J, fp, a, JJ, A_mix, S0)
  double tapeSeconds = 0;        // tape compilation (ordering, CSE, slot allocation)
  std::size_t tapeInstructions = 0;  // instructions over all tapes
};

// How the native evaluators are prepared (native_compiler.h): which tapes tcc compiles first
// (CompiledModel::tapes() names; what the run's method evaluates first) and whether the on-disk
// cache is used (also subject to nativeCacheEnabled()).
struct NativeOptions {
  std::vector<std::string> earlyTapes = {"f", "x0", "y"};
  bool useCache = true;
};

class CompiledModel {
 public:
  explicit CompiledModel(OdeSystem system, const NativeOptions& native = {});
  // (The fast-reaction surrogate is cloned too: its evaluators own scratch buffers as well.)
  std::shared_ptr<CompiledModel> clone() const;

  const OdeSystem& system() const { return system_; }
  int nx() const { return system_.numStates(); }
  int np() const { return system_.numParams(); }
  std::vector<double> nominalParameters() const;

  void rhs(double t, const double* x, const double* p, double* f) const;
  void jacobian(double t, const double* x, const double* p, double* values) const;
  void paramJacobian(double t, const double* x, const double* p, double* values) const;
  void secondDerivative(double t, const double* x, const double* p, double* a) const;
  // f and a together (shares the work of f inside a).
  void rhsAndSecond(double t, const double* x, const double* p, double* f, double* a) const;
  void jacobianOfSecond(double t, const double* x, const double* p, double* values) const;
  // J and JJ together (what odeSD's Newton matrix needs).
  void jacobianPair(double t, const double* x, const double* p, double* jValues,
                    double* jjValues) const;
  void secondParamJacobian(double t, const double* x, const double* p, double* values) const;
  // The same from J's and fp's values at (t, x, p), which the caller has already evaluated.
  void secondParamJacobian(double t, const double* x, const double* p, const double* jValues,
                           const double* fpValues, double* values) const;
  // A_mix alone (secondParamMixedPattern()): ap = J·fp + A_mix. What the discrete adjoint needs,
  // with J and fp: νᵀ ap = (Jᵀν)ᵀ fp + νᵀ A_mix.
  void secondParamMixedTerm(double t, const double* x, const double* p, double* values) const;
  // ∂f/∂t (nx values; zero for autonomous models).
  void timeDerivative(double t, const double* x, const double* p, double* ft) const;
  // x(t0) and S(t0). For a differential-algebraic system (OdeSystem::isDae()) the algebraic
  // entries are consistent: they solve the constraints (dae_consistency.h), which may throw
  // Error naming the constraint when no solution exists or the system has index > 1.
  void initialState(double t0, const double* p, double* x0) const;
  void initialSensitivity(double t0, const double* p, double* values) const;
  // DAE only (no-op otherwise): x after a jump (events) made consistent again — the pools of fast
  // reactions from their species, then the algebraic states (dae_consistency.h).
  void makeConsistent(double t, double* x, const double* p) const;
  // Output values (value, amount and concentration of every output: 3 * outputs().size()
  // doubles, in the order value[0..n), amount[0..n), concentration[0..n)).
  void outputs(double t, const double* x, const double* p, double* y) const;
  // Chain rule for output sensitivities dy/dp = ∂y/∂x·S + ∂y/∂p, over the same 3·n outputs
  // (value, amount, concentration blocks) as outputs().
  void outputStateJacobian(double t, const double* x, const double* p, double* values) const;
  void outputParamJacobian(double t, const double* x, const double* p, double* values) const;
  const SparsePattern& outputStateJacobianPattern() const { return yxPattern_; }
  const SparsePattern& outputParamJacobianPattern() const { return ypPattern_; }

  const SparsePattern& jacobianPattern() const { return jPattern_; }
  const SparsePattern& paramJacobianPattern() const { return fpPattern_; }
  const SparsePattern& jacobianOfSecondPattern() const { return jjPattern_; }
  const SparsePattern& secondParamJacobianPattern() const { return apPattern_; }
  const SparsePattern& secondParamMixedPattern() const { return apMixPattern_; }
  const SparsePattern& initialSensitivityPattern() const { return s0Pattern_; }
  bool isAutonomous() const { return autonomous_; }

  // Models with fast reactions at rapid equilibrium: OdeSystem::fastSurrogate, compiled (the
  // same parameters and output ids; its states need not be these). The tasks run it instead
  // when a run of this model fails, and say so. Null for every other model.
  std::shared_ptr<const CompiledModel> fastReactionSurrogate() const { return surrogate_; }

  // delay() terms (OdeSystem::delays): every evaluator fills their inputs from the attached
  // source, which the simulation driver attaches for the length of a run (nullptr detaches);
  // an evaluation without one throws SbmlError naming the delay. Models without delays ignore it.
  bool hasDelays() const { return !system_.delays.empty(); }
  void attachDelayHistory(const DelayInputSource* source) const { delayInputs_.attach(source); }

  const CompileTimings& timings() const { return timings_; }
  // Where evaluation runs: the native path's state and a one-line message ("native: ready
  // (cache hit) ...", "native: disabled by SENSODE_NATIVE=0 (tape interpreter in use)", ...).
  NativeStatus nativeStatus() const;
  // Starts native compilation now (skipping its start delay) and waits up to `timeoutSeconds`
  // for it to finish; true when the tapes now evaluate natively. For tests and benchmarks.
  bool waitForNative(double timeoutSeconds) const;
  // True when every evaluator used so far ran compiled code from its first call (--stats'
  // native_from_first_evaluation).
  bool nativeFromFirstEvaluation() const;
  // Tapes by name ("f", "J", ...) for benchmarks and the C emitter.
  struct NamedTape {
    std::string name;
    const Tape* tape;
  };
  std::vector<NamedTape> tapes() const;

 private:
  OdeSystem system_;
  SparsePattern jPattern_, fpPattern_, jjPattern_, apPattern_, apMixPattern_, s0Pattern_,
      yxPattern_, ypPattern_;
  // ap from J, fp and A_mix (planSecondParamJacobian): A_mix's entry k goes to ap's apOfMix_[k];
  // then ap[out] += J[j]·fp[fp] for each product term.
  struct ProductTerm {
    int out, j, fp;
  };
  std::vector<int> apOfMix_;
  std::vector<ProductTerm> apProduct_;
  void planSecondParamJacobian();
  bool autonomous_ = true;
  bool dae_ = false;  // system_.isDae(): initial values and S0 are made consistent
  Tape fTape_, jTape_, fpTape_, aTape_, faTape_, jjTape_, jPairTape_, apMixTape_, ftTape_, x0Tape_,
      s0Tape_, yTape_, yxTape_, ypTape_;
  CompileTimings timings_;
  mutable std::vector<double> scratch_;  // combined outputs of the paired tapes
  // p followed by the delay inputs (models with delays only).
  const double* withDelays(double t, const double* x, const double* p) const;
  const double* withoutDelays(const double* p) const;
  DelayInputs delayInputs_;
  std::shared_ptr<NativeCompiler> native_;  // shared by clones; null when disabled
  std::string nativeOff_;                   // why native_ is null
  std::shared_ptr<CompiledModel> surrogate_;  // compiled system_.fastSurrogate, or null
  // The surrogate only: the rapid-equilibrium model whose consistent start (x0, S0) it takes —
  // the fast reactions are at equilibrium at t0 in both — and its state index of each state here.
  std::shared_ptr<CompiledModel> equilibriumStart_;
  std::vector<int> startIndex_;
  SparsePattern s0TapePattern_;  // the pattern s0Tape_ writes (s0Pattern_ is wider then)
  void startFromEquilibriumOf(std::shared_ptr<CompiledModel> dae);
  void surrogateInitialSensitivity(double t0, const double* p, double* values) const;
};

}  // namespace sensode::symbolic
