// SPDX-License-Identifier: MIT
// The multistart on MPI ranks (`mpirun -n N sensode estimate ...`), built only when CMake finds
// MPI (SENSODE_HAVE_MPI). Rank 0 runs the estimation as a single process would, but hands its
// starts, and the units of the screen, the polish and the profiles (phase_units.h), to the other
// ranks through MpiStartExecutor: dynamically, the next index to whichever worker reports back
// first. Workers (runWorker) load the problem themselves, receive
// the StartPlan once (as text, work_units.h) and then only indices; they send back each
// StartResult as text. So a unit is a few bytes out and about 30 bytes per parameter back.
//
// The protocol (unit_dispatch.h) is the estimation's only through the texts it carries.
//
// A worker that returns a start cancelled while rank 0 is not stopping (it got a signal of its
// own) gets no further units; its start goes to another worker. A worker that dies: if the
// launcher keeps the job (srun --no-kill; mpirun --mca orte_enable_recovery 1), rank 0 notices its
// silence (unit_dispatch.h), says which unit was lost and gives it to another worker; otherwise
// the launcher ends the job, the units finished so far are in the run store, and `--resume`
// computes only the others.
#pragma once

#include <string>

#include "core/estimation/mpi/unit_dispatch.h"
#include "core/estimation/start_executor.h"

namespace sensode::estimation::mpi {

// Whether an MPI launcher (mpirun, mpiexec, srun) started this process.
bool launchedByMpi();

// MPI_Init on construction, MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

// Rank 0's executor. With one rank it runs the starts on `threads` threads itself.
class MpiStartExecutor : public StartExecutor {
 public:
  // `silenceLimit`: seconds of silence after which a computing worker is lost (unit_dispatch.h).
  MpiStartExecutor(int ranks, int threads, double silenceLimit = 60);
  // Where the lost workers and the units stopped on them are said (one line each).
  void setNotice(std::function<void(const std::string&)> notice) {
    dispatcher_.setNotice(std::move(notice));
  }
  void run(const petab::Problem& problem, const detail::StartContext& context,
           const StartPlan& plan, const std::vector<int>& indices, const ProgressMonitor& monitor,
           const std::function<bool()>& stopped, const StartSink& sink) override;
  // The phase's text goes to each worker once, then unit indices; a worker runs a unit with its
  // own --threads.
  void runPhase(const petab::Problem& problem, const detail::PhaseComputer& phase,
                const std::vector<int>& units, const ProgressMonitor& monitor,
                const std::function<bool()>& stopped, const std::function<void()>& pointDone,
                const PhaseSink& sink) override;
  std::string describe() const override;
  const UnitDispatcher& dispatcher() const { return dispatcher_; }

 private:
  UnitDispatcher dispatcher_;  // its destructor sends Stop to every worker
  int threads_;
};

// A worker rank's whole life: load, then run units until Stop. `interrupted` is the process's
// own signal flag (its running start is cancelled and returned as such). Returns the exit
// status (0, or 1 when the problem could not be loaded).
int runWorker(const EstimationProblem& problem, const EstimationOptions& options,
              const std::function<bool()>& interrupted);

}  // namespace sensode::estimation::mpi
