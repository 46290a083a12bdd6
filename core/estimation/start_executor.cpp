// SPDX-License-Identifier: MIT
#include "core/estimation/start_executor.h"

#include <algorithm>
#include <mutex>
#include <thread>

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

std::string ThreadStartExecutor::describe() const {
  return std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
}

}  // namespace sensode::estimation
