// SPDX-License-Identifier: MIT
#include "core/estimation/mpi/unit_dispatch.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>
#include <thread>

namespace sensode::estimation::mpi {
namespace {

enum Tag : int { kReady = 1, kPlan, kUnit, kResult, kStop, kCancel, kFailed, kAlive };

using Clock = std::chrono::steady_clock;

// Rank 0 answers a result within this; a worker checks for Cancel this often while it computes.
constexpr auto kPollSleep = std::chrono::microseconds(200);
constexpr auto kIdleSleep = std::chrono::microseconds(1000);
constexpr auto kCancelCheck = std::chrono::milliseconds(50);
// A computing worker's sign of life, and how often rank 0 looks for silent ones.
constexpr auto kAliveEvery = std::chrono::seconds(1);
constexpr auto kSilenceSweep = std::chrono::milliseconds(100);
// After Cancel, a worker answers within one integration step; one that does not within this
// (or the silence limit, if shorter) is not waited for.
constexpr double kCancelAnswerLimit = 5;

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

std::atomic<bool> lostARank{false};
// Stop's text when a rank died.
const std::string kStopAfterADeath = "a rank died";

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string formatSeconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", s);
  return text;
}

}  // namespace

bool jobLostARank() { return lostARank.load(); }

UnitDispatcher::UnitDispatcher(int ranks, double silenceLimit)
    : ranks_(ranks), silenceLimit_(silenceLimit) {
  // A message to a dead worker is then an error code (the worker is lost), not the end of the
  // job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

UnitDispatcher::~UnitDispatcher() {
  const std::string text = lostARank ? kStopAfterADeath : std::string();
  for (int w = 1; w < ranks_; ++w) {
    // A worker taken as lost for its silence may only have been slow: it gets Stop too, without
    // waiting for it (it may be gone).
    MPI_Request request;
    if (MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, w, kStop, MPI_COMM_WORLD,
                  &request) == MPI_SUCCESS)
      MPI_Request_free(&request);
  }
}

bool UnitDispatcher::send(const void* data, int count, bool isIndex, int worker, int tag) {
  if (MPI_Send(data, count, isIndex ? MPI_INT : MPI_CHAR, worker, tag, MPI_COMM_WORLD) ==
      MPI_SUCCESS)
    return true;
  noteLost(worker, "a message to it failed (its process or node is gone)", true);
  return false;
}

void UnitDispatcher::noteLost(int worker, const std::string& why, bool died) {
  if (died) lostARank = true;
  if (lost_.count(worker)) return;
  lost_[worker] = why;
}

std::deque<int> UnitDispatcher::dispatch(const std::string& plan, std::deque<int> queue,
                                         const std::function<bool()>& stopped,
                                         const ResultHandler& onResult,
                                         const std::function<std::string(int)>& unitName) {
  const auto name = [&](int index) {
    return unitName ? unitName(index) : "unit " + std::to_string(index);
  };
  const auto notice = [&](const std::string& text) {
    if (notice_) notice_(text);
  };
  havePlan_.clear();
  std::map<int, int> running;  // worker → unit
  std::map<int, Clock::time_point> lastHeard;  // of the running workers
  std::set<int> idle;
  bool cancelSent = false;
  auto lastSweep = Clock::now();
  const auto assign = [&](int worker) {
    if (queue.empty() || stopped() || lost_.count(worker)) {
      if (!lost_.count(worker)) idle.insert(worker);
      return;
    }
    if (!havePlan_.count(worker)) {
      if (!send(plan.data(), static_cast<int>(plan.size()), false, worker, kPlan)) return;
      havePlan_.insert(worker);
      bytesSent_ += static_cast<long>(plan.size());
    }
    const int index = queue.front();
    if (!send(&index, 1, true, worker, kUnit)) return;
    queue.pop_front();
    ++unitsSent_;
    bytesSent_ += static_cast<long>(sizeof index);
    running[worker] = index;
    lastHeard[worker] = Clock::now();
    idle.erase(worker);
  };
  // A running unit whose worker is lost goes back to the queue, for the idle workers.
  const auto requeue = [&](int worker, const std::string& why) {
    const int index = running.at(worker);
    running.erase(worker);
    lastHeard.erase(worker);
    noteLost(worker, why, true);
    if (stopped()) {
      notice("MPI rank " + std::to_string(worker) + " lost (" + why + ") while it computed " +
             name(index) + ": not stored; --resume computes it");
      return;
    }
    queue.push_front(index);
    notice("MPI rank " + std::to_string(worker) + " lost (" + why + "): its " + name(index) +
           " goes to another rank; rank " + std::to_string(worker) + " gets no more units");
    for (int w : std::set<int>(idle)) assign(w);
  };
  // The running workers silent for longer than the limit.
  const auto silentWorkers = [&] {
    std::vector<std::pair<int, double>> silent;
    double limit = silenceLimit_;
    if (cancelSent) limit = limit > 0 ? std::min(limit, kCancelAnswerLimit) : kCancelAnswerLimit;
    if (limit <= 0) return silent;
    for (const auto& [worker, heard] : lastHeard)
      if (secondsSince(heard) > limit) silent.emplace_back(worker, secondsSince(heard));
    return silent;
  };
  for (int w : ready_) assign(w);
  for (;;) {
    if (stopped()) {
      queue.clear();
      if (!cancelSent) {
        cancelSent = true;
        if (!running.empty()) {
          std::string text = "stopped with " + std::to_string(running.size()) +
                             " unit(s) running on the workers, cancelled and not stored:";
          int listed = 0;
          for (const auto& [worker, index] : running)
            if (++listed <= 20) text += " " + name(index) + " (rank " + std::to_string(worker) + ")";
          if (listed > 20) text += " and " + std::to_string(listed - 20) + " more";
          notice(text);
        }
        for (const auto& [worker, index] : std::map<int, int>(running)) {
          lastHeard[worker] = Clock::now();
          send(nullptr, 0, false, worker, kCancel);
        }
      }
    }
    for (const auto& [worker, index] : std::map<int, int>(running))
      if (lost_.count(worker)) requeue(worker, lost_.at(worker));
    if (running.empty() && (queue.empty() || static_cast<int>(lost_.size()) == ranks_ - 1)) break;
    const MPI_Status status = waitForMessage(MPI_ANY_SOURCE, kPollSleep, [&] {
      if (stopped() && !cancelSent) return true;
      if (Clock::now() - lastSweep < kSilenceSweep) return false;
      lastSweep = Clock::now();
      return !silentWorkers().empty();
    });
    if (status.MPI_TAG < 0) {
      for (const auto& [worker, seconds] : silentWorkers())
        requeue(worker, "no message from it for " + formatSeconds(seconds) +
                            " s while it computed; its process or node is gone or stuck");
      continue;
    }
    const int worker = status.MPI_SOURCE;
    const std::string text = receiveText(status);
    if (lastHeard.count(worker)) lastHeard[worker] = Clock::now();
    // What a worker taken as lost still sends (it was slow, not gone) is not used: its unit
    // went to another worker.
    if (lost_.count(worker) && status.MPI_TAG != kFailed) continue;
    switch (status.MPI_TAG) {
      case kReady:
        ready_.insert(worker);
        assign(worker);
        break;
      case kFailed:
        noteLost(worker, text, false);
        break;
      case kResult: {
        bytesReceived_ += static_cast<long>(text.size());
        running.erase(worker);
        lastHeard.erase(worker);
        const auto [index, accepted] = onResult(worker, text);
        if (!accepted && !stopped()) {
          noteLost(worker, "gave up " + name(index) + " by itself", false);
          queue.push_front(index);
          for (int w : std::set<int>(idle)) assign(w);
          break;
        }
        assign(worker);
        break;
      }
      default:  // Alive, or nothing rank 0 expects: received above rather than hung on
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
      // compute() may poll from several threads (a screen chunk's points): one at a time here.
      std::mutex poll;
      bool cancelled = false;
      auto lastCheck = Clock::now();
      auto lastAlive = Clock::now();
      const std::function<bool()> cancelRequested = [&] {
        const std::lock_guard lock(poll);
        const auto now = Clock::now();
        if (!cancelled && now - lastCheck > kCancelCheck) {
          lastCheck = now;
          int flag = 0;
          MPI_Status cancel;
          MPI_Iprobe(0, kCancel, MPI_COMM_WORLD, &flag, &cancel);
          if (flag) {
            MPI_Recv(nullptr, 0, MPI_CHAR, 0, kCancel, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            cancelled = true;
          }
        }
        if (now - lastAlive > kAliveEvery) {
          lastAlive = now;
          MPI_Send(nullptr, 0, MPI_CHAR, 0, kAlive, MPI_COMM_WORLD);
        }
        return cancelled;
      };
      sendText(compute(index, cancelRequested), 0, kResult);
      continue;
    }
    const std::string text = receiveText(status);
    if (status.MPI_TAG == kStop) {
      if (text == kStopAfterADeath) lostARank = true;
      return;
    }
    if (status.MPI_TAG == kPlan) onPlan(text);
    // kCancel here is for a unit that had already finished: nothing to do.
  }
}

}  // namespace sensode::estimation::mpi
