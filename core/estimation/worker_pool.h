// SPDX-License-Identifier: MIT
// Independent tasks (starts, profile directions) on worker threads, each thread with its own
// copy of the PEtab problem (internal to core/estimation). An objective evaluation is not
// thread-safe on a shared problem: it differentiates formulas in the model's ExprPool, which
// appends nodes. Copies are loaded one at a time (libSBML parsing and the model compilation
// are then never concurrent) and kept for the thread's later tasks.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "core/petab/petab_problem.h"

namespace sensode::estimation::detail {

// Runs task(i, problem) for i = 0..count−1 on min(threads, count) threads (tasks are taken in
// order); the calling thread's `shared` copy serves the first worker. Exceptions from a task
// are the task's business: runTasks catches nothing but requires task not to throw.
void runTasks(int count, int threads, const std::filesystem::path& yaml,
              const petab::Problem& shared,
              const std::function<void(int, const petab::Problem&)>& task);

// The same with the copies kept across calls: for a caller that runs many short batches (the
// scatter search: a generation is a few hundred simulations of a millisecond each), where loading
// a copy per thread and batch would cost more than the batch.
class WorkerProblems {
 public:
  // Loads threads − 1 copies of the problem (the caller's `shared` one serves the first worker).
  WorkerProblems(int threads, const std::filesystem::path& yaml, const petab::Problem& shared);
  void run(int count, const std::function<void(int, const petab::Problem&)>& task) const;
  std::size_t size() const { return own_.size() + 1; }  // threads

 private:
  const petab::Problem& shared_;
  std::vector<std::unique_ptr<petab::Problem>> own_;  // not moved: loaded in place
};

}  // namespace sensode::estimation::detail
