// SPDX-License-Identifier: MIT
// What `sensode estimate` adds for runs that outlive a process or a machine: `--resume DIR`
// (the command line a results folder keeps) and the MPI ranks (`mpirun -n N sensode estimate`,
// when the CLI was built with MPI). The estimation itself is the same call either way
// (core/estimation/estimation.h with an EstimationRun).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/estimation/estimation.h"

namespace sensode::cli {

// The arguments of `estimate` with `--resume DIR` resolved: without a PROBLEM.yaml, the command
// line DIR/command.txt keeps (the run's problem and options) plus `--out DIR` and whatever else
// was given (--threads); with one, the arguments as given with `--out DIR` (the run store then
// refuses options that differ from the stored run's). Throws Error naming DIR when it holds no
// run.
std::vector<std::string> resolveResume(std::span<const std::string> args);

// The arguments DIR/command.txt keeps: all but --out, --resume, --threads and --worker-timeout,
// one a line.
std::string commandText(std::span<const std::string> args);

// Where the starts run: this process's threads, or, under an MPI launcher, the MPI ranks.
class EstimateExecution {
 public:
  // `workerTimeout`: seconds of silence after which a computing worker rank is lost (MPI only).
  EstimateExecution(int threads, double workerTimeout);
  ~EstimateExecution();
  // True on the ranks other than 0: they only compute starts (runWorker).
  bool isWorker() const;
  int runWorker(const estimation::EstimationProblem& problem,
                const estimation::EstimationOptions& options, const std::function<bool()>& interrupted);
  estimation::StartExecutor* executor() const;  // nullptr: threads
  std::string describe() const;                 // "3 MPI ranks (...)"; empty for threads
  // After the run: the units the workers computed and the bytes exchanged ("14 units on the
  // workers, 2817 bytes out, 40213 bytes in"); empty for threads.
  std::string traffic() const;
  // Where rank 0's notices go (a lost worker, the units running when the run stopped); stderr
  // until this is called. MPI only.
  void setNotice(std::function<void(const std::string&)> notice);

 private:
  struct Mpi;
  std::unique_ptr<Mpi> mpi_;
};

}  // namespace sensode::cli
