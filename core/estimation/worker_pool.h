// SPDX-License-Identifier: MIT
// Independent tasks (starts, profile directions) on worker threads, each thread with its own
// copy of the PEtab problem (internal to core/estimation). An objective evaluation is not
// thread-safe on a shared problem: it differentiates formulas in the model's ExprPool, which
// appends nodes. Copies are loaded one at a time (libSBML parsing and the model compilation
// are then never concurrent) and kept for the thread's later tasks.
#pragma once

#include <filesystem>
#include <functional>

#include "core/petab/petab_problem.h"

namespace sensode::estimation::detail {

// Runs task(i, problem) for i = 0..count−1 on min(threads, count) threads (tasks are taken in
// order); the calling thread's `shared` copy serves the first worker. Exceptions from a task
// are the task's business: runTasks catches nothing but requires task not to throw.
void runTasks(int count, int threads, const std::filesystem::path& yaml,
              const petab::Problem& shared,
              const std::function<void(int, const petab::Problem&)>& task);

}  // namespace sensode::estimation::detail
