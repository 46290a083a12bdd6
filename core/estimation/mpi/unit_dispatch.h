// SPDX-License-Identifier: MIT
// The MPI protocol of the multistart, independent of what a unit computes: rank 0's
// UnitDispatcher hands out unit indices (after a plan text, once per worker) and receives one
// text per unit; a worker's serveUnits() answers them. mpi_executor.h puts the estimation's
// starts on it; tests/bench/bench_mpi_dispatch.cpp measures it with units that compute nothing.
//
// Messages (tags), all between rank 0 and one worker:
//   worker → 0  Ready (it can take units) | Failed (text: why it cannot) | Result (text)
//   0 → worker  Plan (text) | Unit (int) | Cancel (the running unit) | Stop
// Both sides poll with MPI_Iprobe and a short sleep: a blocking probe spins a core, which on an
// oversubscribed node takes it from the ranks that compute.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace sensode::estimation::mpi {

class UnitDispatcher {
 public:
  explicit UnitDispatcher(int ranks);
  ~UnitDispatcher();  // sends Stop to every worker
  UnitDispatcher(const UnitDispatcher&) = delete;
  UnitDispatcher& operator=(const UnitDispatcher&) = delete;

  // Hands `queue` to the workers (the plan first to each that has not got this one) until every
  // unit's result came back, or `stopped` (then Cancel goes to the running ones and their results
  // are awaited). `onResult(worker, text)` returns the unit's index and whether it is a result;
  // false: the worker gave the unit up by itself, and it goes to another worker while that one
  // gets no more. Returns the units no worker could take (every worker failed or gave up).
  using ResultHandler = std::function<std::pair<int, bool>(int worker, const std::string& text)>;
  std::deque<int> dispatch(const std::string& plan, std::deque<int> queue,
                           const std::function<bool()>& stopped, const ResultHandler& onResult);

  int ranks() const { return ranks_; }
  const std::map<int, std::string>& lostWorkers() const { return lost_; }
  long unitsSent() const { return unitsSent_; }
  long bytesSent() const { return bytesSent_; }
  long bytesReceived() const { return bytesReceived_; }

 private:
  int ranks_;
  std::set<int> ready_;
  std::set<int> havePlan_;
  std::map<int, std::string> lost_;
  long unitsSent_ = 0, bytesSent_ = 0, bytesReceived_ = 0;
};

// A worker rank: reports Ready (or Failed with `failure` when it is not empty), then calls
// onPlan for each plan and compute(index, cancelled) for each unit, sending back its text, until
// Stop. `cancelled()` (for compute to poll) is true once rank 0 sent Cancel for this unit.
void serveUnits(const std::string& failure, const std::function<void(const std::string&)>& onPlan,
                const std::function<std::string(int, const std::function<bool()>&)>& compute);

}  // namespace sensode::estimation::mpi
