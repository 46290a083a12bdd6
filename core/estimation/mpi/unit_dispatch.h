// SPDX-License-Identifier: MIT
// The MPI protocol of the multistart, independent of what a unit computes: rank 0's
// UnitDispatcher hands out unit indices (after a plan text, once per worker) and receives one
// text per unit; a worker's serveUnits() answers them. mpi_executor.h puts the estimation's
// starts on it; tests/bench/bench_mpi_dispatch.cpp measures it with units that compute nothing.
//
// Messages (tags), all between rank 0 and one worker:
//   worker → 0  Ready (it can take units) | Failed (text: why it cannot) | Result (text) |
//               Alive (while it computes a unit, at most once a second)
//   0 → worker  Plan (text) | Unit (int) | Cancel (the running unit) | Stop (text: whether a
//               rank of the job died)
// Both sides poll with MPI_Iprobe and a short sleep: a blocking probe spins a core, which on an
// oversubscribed node takes it from the ranks that compute.
//
// A worker that dies (a lost node, an OOM kill) is noticed by its silence: a worker computing a
// unit that has sent nothing for `silenceLimit` seconds is taken as lost, said so through the
// notice, and its unit goes to another worker. Whether the job survives a dead rank at all is the
// launcher's choice: OpenMPI's mpirun ends every rank unless started with
// `--mca orte_enable_recovery 1`; Slurm's srun when given `--no-kill --kill-on-bad-exit=0`
// (docs/slurm/estimate.sbatch). Rank 0 uses
// MPI_ERRORS_RETURN, so a message to a dead worker marks it lost instead of aborting the job.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace sensode::estimation::mpi {

class UnitDispatcher {
 public:
  // `silenceLimit`: seconds without a message from a worker computing a unit after which it is
  // taken as lost (≤ 0: never).
  explicit UnitDispatcher(int ranks, double silenceLimit = 60);
  ~UnitDispatcher();  // sends Stop to every worker
  UnitDispatcher(const UnitDispatcher&) = delete;
  UnitDispatcher& operator=(const UnitDispatcher&) = delete;

  // Hands `queue` to the workers (the plan first to each that has not got this one) until every
  // unit's result came back, or `stopped` (then Cancel goes to the running ones and their results
  // are awaited). `onResult(worker, text)` returns the unit's index and whether it is a result;
  // false: the worker gave the unit up by itself, and it goes to another worker while that one
  // gets no more. Returns the units no worker could take (every worker failed or gave up).
  // `unitName(index)` names a unit in the notices ("start #17").
  using ResultHandler = std::function<std::pair<int, bool>(int worker, const std::string& text)>;
  std::deque<int> dispatch(const std::string& plan, std::deque<int> queue,
                           const std::function<bool()>& stopped, const ResultHandler& onResult,
                           const std::function<std::string(int)>& unitName = {});

  // Where the dispatcher says what a user must know while it runs: a worker taken as lost and
  // what happened to its unit, the units running when the run was stopped. One line each.
  void setNotice(std::function<void(const std::string&)> notice) { notice_ = std::move(notice); }

  int ranks() const { return ranks_; }
  const std::map<int, std::string>& lostWorkers() const { return lost_; }
  long unitsSent() const { return unitsSent_; }
  long bytesSent() const { return bytesSent_; }
  long bytesReceived() const { return bytesReceived_; }

 private:
  // MPI_Send of `count` chars (or one int, `isIndex`); false, and the worker lost, on an error.
  bool send(const void* data, int count, bool isIndex, int worker, int tag);
  // `died`: the worker's process is gone (silence, a failed message), not merely unable to work.
  void noteLost(int worker, const std::string& why, bool died);

  int ranks_;
  double silenceLimit_;
  std::function<void(const std::string&)> notice_;
  std::set<int> ready_;
  std::set<int> havePlan_;
  std::map<int, std::string> lost_;
  long unitsSent_ = 0, bytesSent_ = 0, bytesReceived_ = 0;
};

// Whether this process knows that a rank of the job died: rank 0 when it took a worker as lost for
// its silence or a failed message, a worker when rank 0's Stop said so. MPI_Finalize is then
// skipped (MpiSession): its closing fence counts the dead rank, and OpenMPI 4.1 with
// orte_enable_recovery left the survivors waiting in it for good in 1 of 12 runs (measured).
bool jobLostARank();

// A worker rank: reports Ready (or Failed with `failure` when it is not empty), then calls
// onPlan for each plan and compute(index, cancelled) for each unit, sending back its text, until
// Stop. `cancelled()` (for compute to poll, from any of its threads) is true once rank 0 sent
// Cancel for this unit; it also sends rank 0 the Alive message. The worker's MPI must be
// initialised with at least MPI_THREAD_SERIALIZED when compute polls from several threads.
void serveUnits(const std::string& failure, const std::function<void(const std::string&)>& onPlan,
                const std::function<std::string(int, const std::function<bool()>&)>& compute);

}  // namespace sensode::estimation::mpi
