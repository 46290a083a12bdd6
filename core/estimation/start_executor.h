// SPDX-License-Identifier: MIT
// Where the multistart's starts run: a StartExecutor takes the start indices still to compute
// and hands each finished StartResult to a sink. ThreadStartExecutor runs them on threads of
// this process (each with its own copy of the PEtab problem); MpiStartExecutor
// (mpi/mpi_executor.h) hands them to MPI ranks. The estimation driver does not know which.
#pragma once

#include <functional>
#include <vector>

#include "core/common/progress.h"
#include "core/estimation/run_start.h"

namespace sensode::estimation::detail {
class PhaseComputer;  // phase_units.h
}

namespace sensode::estimation {

// Called once per finished (or cancelled) start, serialised, on any thread.
using StartSink = std::function<void(const StartResult&)>;
// Called once per unit of a phase that finished (not for cancelled ones), serialised, with the
// unit's result text (phase_units.h).
using PhaseSink = std::function<void(int unit, const std::string& result)>;

class StartExecutor {
 public:
  virtual ~StartExecutor() = default;
  // Runs runStart for each of `indices` (dynamically: the next index to whoever is free) and
  // returns when every one has reached the sink or `stopped` said so and the running ones came
  // back (cancelled ones with status Cancelled). `problem` is the caller's loaded copy.
  virtual void run(const petab::Problem& problem, const detail::StartContext& context,
                   const StartPlan& plan, const std::vector<int>& indices, const ProgressMonitor& monitor,
                   const std::function<bool()>& stopped, const StartSink& sink) = 0;
  // The units of a phase besides the starts (phase_units.h: the screen's chunks, the polish,
  // the profile directions), all of them but `skip`, dynamically as the starts. `pointDone` is
  // the progress: once per point a unit computed here, and for a unit computed elsewhere as many
  // times as its result holds points.
  virtual void runPhase(const petab::Problem& problem, const detail::PhaseComputer& phase,
                        const std::vector<int>& units, const ProgressMonitor& monitor,
                        const std::function<bool()>& stopped,
                        const std::function<void()>& pointDone, const PhaseSink& sink) = 0;
  // A line for the log: "3 threads", "4 MPI ranks (3 workers)".
  virtual std::string describe() const = 0;
};

class ThreadStartExecutor : public StartExecutor {
 public:
  explicit ThreadStartExecutor(int threads);  // 0: the number of cores
  void run(const petab::Problem& problem, const detail::StartContext& context,
           const StartPlan& plan, const std::vector<int>& indices, const ProgressMonitor& monitor,
           const std::function<bool()>& stopped, const StartSink& sink) override;
  // Each unit on one thread with its own copy of the problem.
  void runPhase(const petab::Problem& problem, const detail::PhaseComputer& phase,
                const std::vector<int>& units, const ProgressMonitor& monitor,
                const std::function<bool()>& stopped, const std::function<void()>& pointDone,
                const PhaseSink& sink) override;
  std::string describe() const override;

 private:
  int threads_;
};

}  // namespace sensode::estimation
