// SPDX-License-Identifier: MIT
#include "core/estimation/mpi/mpi_executor.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "core/estimation/fit_preparation.h"

namespace sensode::estimation::mpi {
namespace {

enum Tag : int { kReady = 1, kPlan, kUnit, kResult, kStop, kCancel, kFailed };

using Clock = std::chrono::steady_clock;

// Rank 0 answers a result within this; a worker checks for Cancel this often while it computes.
constexpr auto kPollSleep = std::chrono::microseconds(200);
constexpr auto kIdleSleep = std::chrono::milliseconds(1);
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

void receiveEmpty(const MPI_Status& probed) {
  MPI_Recv(nullptr, 0, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
}

// Waits for a message from `source` (MPI_ANY_SOURCE: any), polling gently.
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

bool launchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(name)) return true;
  return false;
}

MpiSession::MpiSession() {
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

MpiStartExecutor::MpiStartExecutor(int ranks, int threads) : ranks_(ranks), threads_(threads) {}

MpiStartExecutor::~MpiStartExecutor() {
  for (int w = 1; w < ranks_; ++w) MPI_Send(nullptr, 0, MPI_CHAR, w, kStop, MPI_COMM_WORLD);
}

std::string MpiStartExecutor::describe() const {
  return std::to_string(ranks_) + " MPI ranks (" + std::to_string(ranks_ - 1) +
         " computing, rank 0 dispatching)";
}

void MpiStartExecutor::run(const petab::Problem& problem, const detail::StartContext& context,
                           const StartPlan& plan, const std::vector<int>& indices,
                           const ProgressMonitor& monitor, const std::function<bool()>& stopped,
                           const StartSink& sink) {
  std::deque<int> queue(indices.begin(), indices.end());
  if (ranks_ < 2) {
    ThreadStartExecutor(threads_).run(problem, context, plan, indices, monitor, stopped, sink);
    return;
  }
  const std::string planText = toText(plan);
  havePlan_.clear();
  std::map<int, int> running;  // worker → start index
  std::set<int> idle;
  bool cancelSent = false;
  const auto assign = [&](int worker) {
    if (queue.empty() || stopped()) {
      idle.insert(worker);
      return;
    }
    if (!havePlan_.count(worker)) {
      sendText(planText, worker, kPlan);
      havePlan_.insert(worker);
      ++messagesSent_;
    }
    const int index = queue.front();
    queue.pop_front();
    MPI_Send(&index, 1, MPI_INT, worker, kUnit, MPI_COMM_WORLD);
    ++messagesSent_;
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
    const MPI_Status status = waitForMessage(MPI_ANY_SOURCE, kPollSleep, [&] {
      return stopped() && !cancelSent;
    });
    if (status.MPI_TAG < 0) continue;
    const int worker = status.MPI_SOURCE;
    switch (status.MPI_TAG) {
      case kReady:
        receiveEmpty(status);
        ready_.insert(worker);
        assign(worker);
        break;
      case kFailed:
        lost_[worker] = receiveText(status);
        break;
      case kResult: {
        const std::string text = receiveText(status);
        bytesReceived_ += static_cast<long>(text.size());
        const StartResult s =
            startResultFromText(text, "the result of MPI rank " + std::to_string(worker));
        running.erase(worker);
        if (s.status == StartStatus::Cancelled && !stopped()) {
          // The worker was interrupted on its own: its start goes to another one.
          lost_[worker] = "cancelled start " + std::to_string(s.index) + " by itself";
          queue.push_front(s.index);
          for (int w : std::set<int>(idle)) assign(w);
          break;
        }
        sink(s);
        assign(worker);
        break;
      }
      default: {
        // Nothing else is sent to rank 0; drop it rather than hang on it.
        MPI_Status ignored;
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        std::string bytes(static_cast<std::size_t>(count), '\0');
        MPI_Recv(bytes.data(), count, MPI_BYTE, worker, status.MPI_TAG, MPI_COMM_WORLD, &ignored);
      }
    }
  }
  // No worker left to take the rest (none could load the problem): this process runs them.
  if (!queue.empty() && !stopped())
    ThreadStartExecutor(threads_).run(problem, context, plan,
                                      std::vector<int>(queue.begin(), queue.end()), monitor,
                                      stopped, sink);
}

int runWorker(const EstimationProblem& problemSpec, const EstimationOptions& options,
              const std::function<bool()>& interrupted) {
  std::optional<detail::PreparedFit> fit;
  try {
    fit = detail::prepareFit(problemSpec.yamlFile, options);
  } catch (const std::exception& e) {
    sendText(e.what(), 0, kFailed);
  }
  if (fit) MPI_Send(nullptr, 0, MPI_CHAR, 0, kReady, MPI_COMM_WORLD);
  std::optional<detail::StartContext> context;
  for (;;) {
    const MPI_Status status = waitForMessage(0, std::chrono::duration_cast<std::chrono::microseconds>(kIdleSleep));
    switch (status.MPI_TAG) {
      case kStop:
        receiveEmpty(status);
        return fit ? 0 : 1;
      case kCancel:  // for a start that had already finished
        receiveEmpty(status);
        break;
      case kPlan:
        context = detail::makeStartContext(problemSpec.yamlFile, fit->setup,
                                           startPlanFromText(receiveText(status), "the plan"),
                                           options);
        break;
      case kUnit: {
        int index = 0;
        MPI_Recv(&index, 1, MPI_INT, 0, kUnit, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ProgressMonitor monitor;
        auto lastCheck = Clock::now();
        CancelToken token = monitor.token;
        monitor.callback = [&, token](const ProgressInfo&) mutable {
          if (interrupted()) token.cancel();
          if (Clock::now() - lastCheck > kCancelCheck) {
            lastCheck = Clock::now();
            int flag = 0;
            MPI_Status cancel;
            MPI_Iprobe(0, kCancel, MPI_COMM_WORLD, &flag, &cancel);
            if (flag) {
              receiveEmpty(cancel);
              token.cancel();
            }
          }
          return token.cancelled() ? Decision::Abort : Decision::Continue;
        };
        const StartResult s = detail::runStart(*fit->problem, *context, index, monitor, [&] {
          return monitor.token.cancelled() || interrupted();
        });
        sendText(toText(s), 0, kResult);
        break;
      }
      default: {
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        std::string bytes(static_cast<std::size_t>(count), '\0');
        MPI_Recv(bytes.data(), count, MPI_BYTE, 0, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      }
    }
  }
}

}  // namespace sensode::estimation::mpi
