// SPDX-License-Identifier: MIT
// The discrete adjoint of odeSD's rule over one pass of a time course: the backward pass of
// AdjointTimeCourse without a backward integrator.
//
// The forward pass runs odeSD (states only) and lands a step on every measurement time; it keeps
// each step's start (t_k, x_k) and size h_k. Each step solves (NUMERICS §2, R-O)
//     x_{k+1} = x_k + c1 (f_k + f_{k+1}) + c2 (a_k − a_{k+1}),   c1 = h_k/2, c2 = h_k²/12,
// so its derivatives are (odeSD's own sensitivity step, NUMERICS §3)
//     ∂x_{k+1}/∂x_k = W_{k+1}⁻¹ B_k,   ∂x_{k+1}/∂θ = W_{k+1}⁻¹ P_k,   with
//     W_{k+1} = I − c1 J_{k+1} + c2 J_J,{k+1},   B_k = I + c1 J_k + c2 J_J,k,
//     P_k = c1 (f_θ,k + f_θ,{k+1}) + c2 (a_θ,k − a_θ,{k+1}).
// The backward pass carries μ_k = ∂J/∂x_k from the last point to the first:
//     ν = W_{k+1}⁻ᵀ μ_{k+1},   Q += P_kᵀ ν,   μ_k = B_kᵀ ν + ∂J_j/∂x at a measurement time,
// and returns λ(t0) = μ_0 and Q — the exact gradient of odeSD's discrete solution, equal to the
// gradient from odeSD's forward sensitivities (to rounding) at one transposed solve per step
// instead of n_θ columns.
//
// Why not CVODES's continuous adjoint here: it restarts at each measurement time, and every
// jump of λ excites the fast modes that BDF must then resolve from order 1 and a tiny step
// (Lang: 600 measurement times, 320,000 backward steps against 17,600 forward;
// docs/benchmarks/performance.md §17, §19). The discrete adjoint steps back over the forward
// steps, whatever λ jumps by.
//
// forward() returns false, with the reason, where odeSD could not integrate the pass on its own
// (a bridge over a point it cannot step from, the stiff-tail hand-over to CVODES, a
// differential-algebraic model run by IDAS, an integration failure): the caller then runs
// CVODES's adjoint instead and says so. backward() returns false when a Newton matrix of the
// backward sweep is singular or a derivative is not finite.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/common/progress.h"
#include "core/integrators/integrator.h"
#include "core/symbolic/compiled_model.h"

namespace sensode::steadystate {

class OdeSdAdjointPass {
 public:
  OdeSdAdjointPass(std::shared_ptr<const symbolic::CompiledModel> model,
                   const integrators::IntegratorOptions& options, double t0, std::vector<double> x0,
                   std::vector<double> theta, const ProgressMonitor& monitor);
  ~OdeSdAdjointPass();
  OdeSdAdjointPass(const OdeSdAdjointPass&) = delete;
  OdeSdAdjointPass& operator=(const OdeSdAdjointPass&) = delete;

  // As AdjointTimeCourse::setLeftLimitAt, in the forward steps and the backward sweep alike.
  void setLeftLimitAt(double tEnd);
  // Testing: odeSD's steps of exactly this size (OdeSdOptions::fixedStepSize), so that a test can
  // lay the forward sensitivities of the same steps beside the discrete adjoint.
  void setFixedStepSize(double h);
  // Integrates to the ascending `times` (> t0 or equal to it), landing on each; fills x(t_j).
  // False (with `whyNot`) when odeSD did not integrate the whole pass itself. Throws Cancelled.
  bool forward(const std::vector<double>& times, std::vector<std::vector<double>>& states,
               std::string& whyNot);
  // λ(t0) and Q (np values; only `quadParams` are accumulated, into what Q holds) as
  // AdjointTimeCourse::backward. False (with `whyNot`) when the sweep cannot be completed.
  bool backward(const std::vector<std::vector<double>>& jumps, const std::vector<int>& quadParams,
                std::vector<double>& lambda0, std::vector<double>& quadrature, std::string& whyNot);

  long forwardSteps() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sensode::steadystate
