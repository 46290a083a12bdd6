// SPDX-License-Identifier: MIT
#include "core/estimation/mpi/unit_dispatch.h"

#include <mpi.h>

#include <chrono>
#include <thread>

namespace sensode::estimation::mpi {
namespace {

enum Tag : int { kReady = 1, kPlan, kUnit, kResult, kStop, kCancel, kFailed };

using Clock = std::chrono::steady_clock;

// Rank 0 answers a result within this; a worker checks for Cancel this often while it computes.
constexpr auto kPollSleep = std::chrono::microseconds(200);
constexpr auto kIdleSleep = std::chrono::microseconds(1000);
constexpr auto kCancelCheck = std::chrono::milliseconds(50);

void sendText(const std::string& text, int to, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

std::string receiveText(const MPI_Status& probed) {
  int count = 0;
  MPI_Get_count(&probed, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return text;
}

// Waits for a message from `source` (MPI_ANY_SOURCE: any), polling gently; MPI_TAG −1 when
// `giveUp` said so first.
MPI_Status waitForMessage(int source, std::chrono::microseconds sleep,
                          const std::function<bool()>& giveUp = {}) {
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag) return status;
    if (giveUp && giveUp()) {
      status.MPI_TAG = -1;
      return status;
    }
    std::this_thread::sleep_for(sleep);
  }
}

}  // namespace

UnitDispatcher::UnitDispatcher(int ranks) : ranks_(ranks) {}

UnitDispatcher::~UnitDispatcher() {
  for (int w = 1; w < ranks_; ++w) MPI_Send(nullptr, 0, MPI_CHAR, w, kStop, MPI_COMM_WORLD);
}

std::deque<int> UnitDispatcher::dispatch(const std::string& plan, std::deque<int> queue,
                                         const std::function<bool()>& stopped,
                                         const ResultHandler& onResult) {
  havePlan_.clear();
  std::map<int, int> running;  // worker → unit
  std::set<int> idle;
  bool cancelSent = false;
  const auto assign = [&](int worker) {
    if (queue.empty() || stopped()) {
      idle.insert(worker);
      return;
    }
    if (!havePlan_.count(worker)) {
      sendText(plan, worker, kPlan);
      havePlan_.insert(worker);
      bytesSent_ += static_cast<long>(plan.size());
    }
    const int index = queue.front();
    queue.pop_front();
    MPI_Send(&index, 1, MPI_INT, worker, kUnit, MPI_COMM_WORLD);
    ++unitsSent_;
    bytesSent_ += static_cast<long>(sizeof index);
    running[worker] = index;
    idle.erase(worker);
  };
  for (int w : ready_)
    if (!lost_.count(w)) assign(w);
  for (;;) {
    if (stopped()) {
      queue.clear();
      if (!cancelSent) {
        for (const auto& [worker, index] : running)
          MPI_Send(nullptr, 0, MPI_CHAR, worker, kCancel, MPI_COMM_WORLD);
        cancelSent = true;
      }
    }
    if (running.empty() && (queue.empty() || static_cast<int>(lost_.size()) == ranks_ - 1)) break;
    const MPI_Status status =
        waitForMessage(MPI_ANY_SOURCE, kPollSleep, [&] { return stopped() && !cancelSent; });
    if (status.MPI_TAG < 0) continue;
    const int worker = status.MPI_SOURCE;
    const std::string text = receiveText(status);
    switch (status.MPI_TAG) {
      case kReady:
        ready_.insert(worker);
        assign(worker);
        break;
      case kFailed:
        lost_[worker] = text;
        break;
      case kResult: {
        bytesReceived_ += static_cast<long>(text.size());
        running.erase(worker);
        const auto [index, accepted] = onResult(worker, text);
        if (!accepted && !stopped()) {
          lost_[worker] = "gave up unit " + std::to_string(index) + " by itself";
          queue.push_front(index);
          for (int w : std::set<int>(idle)) assign(w);
          break;
        }
        assign(worker);
        break;
      }
      default:  // nothing else is sent to rank 0: dropped (received above) rather than hung on
        break;
    }
  }
  return queue;
}

void serveUnits(const std::string& failure, const std::function<void(const std::string&)>& onPlan,
                const std::function<std::string(int, const std::function<bool()>&)>& compute) {
  if (failure.empty())
    MPI_Send(nullptr, 0, MPI_CHAR, 0, kReady, MPI_COMM_WORLD);
  else
    sendText(failure, 0, kFailed);
  for (;;) {
    const MPI_Status status = waitForMessage(0, kIdleSleep);
    if (status.MPI_TAG == kUnit) {
      int index = 0;
      MPI_Recv(&index, 1, MPI_INT, 0, kUnit, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      bool cancelled = false;
      auto lastCheck = Clock::now();
      const std::function<bool()> cancelRequested = [&] {
        if (!cancelled && Clock::now() - lastCheck > kCancelCheck) {
          lastCheck = Clock::now();
          int flag = 0;
          MPI_Status cancel;
          MPI_Iprobe(0, kCancel, MPI_COMM_WORLD, &flag, &cancel);
          if (flag) {
            MPI_Recv(nullptr, 0, MPI_CHAR, 0, kCancel, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            cancelled = true;
          }
        }
        return cancelled;
      };
      sendText(compute(index, cancelRequested), 0, kResult);
      continue;
    }
    const std::string text = receiveText(status);
    if (status.MPI_TAG == kStop) return;
    if (status.MPI_TAG == kPlan) onPlan(text);
    // kCancel here is for a unit that had already finished: nothing to do.
  }
}

}  // namespace sensode::estimation::mpi
