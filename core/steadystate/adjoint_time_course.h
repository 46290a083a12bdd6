// SPDX-License-Identifier: MIT
// The backward (adjoint) pass over a time course with data, for objective gradients
// (NUMERICS §8.5; CVODES adjoint: CVodeAdjInit with Hermite checkpoints, CVodeCreateB,
// quadratures CVodeQuadInitB).
//
// With λ(t) = ∂J/∂x(t) (the adjoint state in "sensitivity of the objective" sign):
//   backward  λ̇ = −Jᵀλ on each (t_{j−1}, t_j], λ(t_N⁺) = 0,
//   jumps     λ(t_j) = λ(t_j⁺) + ∂J_j/∂x(t_j)      (supplied by the caller from the states),
//   gradient  dJ/dθ = Σ_j ∂J_j/∂θ|explicit + ∫_{t0}^{t_N} λᵀ f_θ dt + λ(t0)ᵀ dx0/dθ.
// This class returns λ(t0) and Q = ∫ λᵀ f_θ dt (np); the caller combines them with dx0/dθ (or,
// after a pre-equilibration, with the steady-state adjoint, Eq. 17).
//
// Both passes throw Cancelled when the monitor's token is set or its callback answers Abort
// (checked in the right-hand sides, so within one step).
//
// Dense LU or KLU for the forward and backward Newton systems. preferOdeSd() replaces both passes
// by odeSD's discrete adjoint (odesd_adjoint_pass.h) where odeSD can do the pass.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::steadystate {

class AdjointTimeCourse {
 public:
  AdjointTimeCourse(std::shared_ptr<const symbolic::CompiledModel> model,
                    const integrators::IntegratorOptions& options, double t0,
                    std::vector<double> x0, std::vector<double> theta,
                    const ProgressMonitor& monitor = {});
  ~AdjointTimeCourse();
  AdjointTimeCourse(const AdjointTimeCourse&) = delete;
  AdjointTimeCourse& operator=(const AdjointTimeCourse&) = delete;

  // Per-state absolute tolerances for the forward pass (nx, each > 0) instead of options.atol;
  // call before forward(). The backward pass keeps options.atol.
  void setStateAbsoluteTolerances(std::vector<double> atol);
  // A pass that ends where the right-hand side jumps (a switch `time < τ`): f, J and f_θ are
  // evaluated as their left limits there, t taken as at most the double before tEnd. Else the
  // last step's end point (and the backward pass's start) sees the next segment's branch:
  // Oliveira's t_1 = 29 is a measurement time, and CVodeB ran out of steps between 29 and 28.
  void setLeftLimitAt(double tEnd);
  // Integrate the quadratures of these model parameters only (indices into θ; default all np):
  // the caller's gradient needs f_θ's columns of the parameters its estimated ones map to, and
  // each further column is carried through CVODES's history and error test at every backward
  // step for nothing (Bachmann: 58 model parameters, the estimated ones move 27; its adjoint
  // 0.96×, Alkan's 0.95×: the quadratures' share was smaller than the profile's vector
  // operations suggested). backward() still returns np values; the others keep what
  // `quadrature` came in with (0 for a first pass).
  void setQuadratureParameters(std::vector<int> parameters);
  // The pass by the discrete adjoint of odeSD (odesd_adjoint_pass.h) instead of CVODES's
  // continuous adjoint; call before forward(). Where odeSD cannot do the pass (see there; also
  // with setStateAbsoluteTolerances, which odeSD's steps do not take), the pass runs CVODES's
  // adjoint and fallback() says why.
  void preferOdeSd();
  // Which adjoint ran: "odeSD, discrete adjoint" or "CVODES, checkpointing, quadratures".
  std::string method() const;
  // Why odeSD was asked for but CVODES ran (empty: it was not, or odeSD ran).
  const std::string& fallback() const;
  // Forward pass with checkpoints to the ascending, distinct `times` (>= t0); returns x(t_j).
  std::vector<std::vector<double>> forward(const std::vector<double>& times);
  // Backward pass with jumps[j] = ∂J_j/∂x at times[j] (nx each). Fills λ(t0) (nx) and
  // Q = ∫ λᵀ f_θ dt (np), added to `quadrature` when it comes in with np values (the sum over
  // several passes of one time course), else from 0.
  void backward(const std::vector<std::vector<double>>& jumps, std::vector<double>& lambda0,
                std::vector<double>& quadrature);

  long forwardSteps() const { return forwardSteps_; }
  long backwardSteps() const { return backwardSteps_; }

 private:
  std::vector<std::vector<double>> cvodesForward();

  struct Impl;
  std::unique_ptr<Impl> impl_;
  long forwardSteps_ = 0, backwardSteps_ = 0;
};

}  // namespace sensode::steadystate
