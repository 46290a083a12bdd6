// SPDX-License-Identifier: MIT
#include "core/estimation/start_executor.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "core/estimation/phase_units.h"
#include "core/estimation/worker_pool.h"

namespace sensode::estimation {

ThreadStartExecutor::ThreadStartExecutor(int threads)
    : threads_(threads > 0 ? threads
                           : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

void ThreadStartExecutor::run(const petab::Problem& problem, const detail::StartContext& context,
                              const StartPlan& /*plan*/,
                              const std::vector<int>& indices, const ProgressMonitor& monitor,
                              const std::function<bool()>& stopped, const StartSink& sink) {
  std::mutex sinkMutex;
  detail::runTasks(static_cast<int>(indices.size()), threads_, context.yaml, problem,
                   [&](int k, const petab::Problem& own) {
                     const StartResult s = detail::runStart(
                         own, context, indices[static_cast<std::size_t>(k)], monitor, stopped);
                     const std::lock_guard lock(sinkMutex);
                     sink(s);
                   });
}

void ThreadStartExecutor::runPhase(const petab::Problem& problem,
                                   const detail::PhaseComputer& phase,
                                   const std::vector<int>& units, const ProgressMonitor& monitor,
                                   const std::function<bool()>& stopped,
                                   const std::function<void()>& pointDone, const PhaseSink& sink) {
  std::mutex mutex;  // serialises the sink and the progress
  const auto progressed = [&] {
    if (!pointDone) return;
    const std::lock_guard lock(mutex);
    pointDone();
  };
  detail::runTasks(static_cast<int>(units.size()), threads_, problem.yamlFile, problem,
                   [&](int k, const petab::Problem& own) {
                     if (stopped()) return;
                     const int unit = units[static_cast<std::size_t>(k)];
                     const detail::WorkerProblems single(1, problem.yamlFile, own);
                     const std::string result = phase.compute(unit, single, monitor, progressed);
                     if (result == "cancelled") return;
                     const std::lock_guard lock(mutex);
                     sink(unit, result);
                   });
}

std::string ThreadStartExecutor::describe() const {
  return std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
}

}  // namespace sensode::estimation
