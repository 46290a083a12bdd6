// SPDX-License-Identifier: MIT
#include "core/estimation/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace sensode::estimation::detail {

void runTasks(int count, int threads, const std::filesystem::path& yaml,
              const petab::Problem& shared,
              const std::function<void(int, const petab::Problem&)>& task) {
  const int workers = std::max(1, std::min(threads, count));
  std::atomic<int> next{0};
  std::mutex loading;
  const auto work = [&](const petab::Problem& problem) {
    for (int i = next++; i < count; i = next++) task(i, problem);
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w)
    pool.emplace_back([&] {
      std::optional<petab::Problem> own;
      {
        const std::lock_guard lock(loading);
        // The yaml loaded once already; a second load fails only on a changed file, and then
        // this worker leaves its tasks to the others.
        try {
          own = petab::loadProblem(yaml);
        } catch (const std::exception&) {
          return;
        }
      }
      work(*own);
    });
  work(shared);
  for (std::thread& t : pool) t.join();
}

WorkerProblems::WorkerProblems(int threads, const std::filesystem::path& yaml,
                               const petab::Problem& shared)
    : shared_(shared) {
  for (int w = 1; w < threads; ++w) {
    try {
      own_.push_back(std::make_unique<petab::Problem>(petab::loadProblem(yaml)));
    } catch (const std::exception&) {
      break;  // as runTasks: a worker that cannot load leaves its tasks to the others
    }
  }
}

void WorkerProblems::run(int count, const std::function<void(int, const petab::Problem&)>& task) const {
  const int workers = std::max(1, std::min(static_cast<int>(own_.size()) + 1, count));
  std::atomic<int> next{0};
  const auto work = [&](const petab::Problem& problem) {
    for (int i = next++; i < count; i = next++) task(i, problem);
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w)
    pool.emplace_back([&, w] { work(*own_[static_cast<std::size_t>(w - 1)]); });
  work(shared_);
  for (std::thread& t : pool) t.join();
}

}  // namespace sensode::estimation::detail
