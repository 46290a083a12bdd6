// SPDX-License-Identifier: MIT
#include "core/estimation/mpi/mpi_executor.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <optional>

#include "core/common/errors.h"
#include "core/estimation/fit_preparation.h"
#include "core/estimation/phase_units.h"
#include "core/estimation/worker_pool.h"

namespace sensode::estimation::mpi {
namespace {
std::string phaseUnitName(const detail::PhaseComputer& phase, int unit) {
  switch (phase.kind()) {
    case detail::PhaseComputer::Kind::Screen:
      return "screen chunk " + std::to_string(unit);
    case detail::PhaseComputer::Kind::Polish:
      return "polish unit " + std::to_string(unit);
    case detail::PhaseComputer::Kind::Profile:
      return "profile direction " + std::to_string(unit);
  }
  return "unit " + std::to_string(unit);
}
}  // namespace

bool launchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(name)) return true;
  return false;
}

MpiSession::MpiSession() {
  // A worker's threads poll for Cancel one at a time (serveUnits), not only its main thread.
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("this MPI library cannot be called from more than one thread "
                "(MPI_THREAD_SERIALIZED not provided); run with --threads 1 per rank");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  // After a rank died, MPI_Finalize's closing fence may wait for it for good (unit_dispatch.h):
  // everything is written by now, so the process ends without it.
  if (!jobLostARank()) MPI_Finalize();
}

MpiStartExecutor::MpiStartExecutor(int ranks, int threads, double silenceLimit)
    : dispatcher_(ranks, silenceLimit), threads_(threads) {}

std::string MpiStartExecutor::describe() const {
  return std::to_string(dispatcher_.ranks()) + " MPI ranks (" +
         std::to_string(dispatcher_.ranks() - 1) + " computing, rank 0 dispatching)";
}

void MpiStartExecutor::run(const petab::Problem& problem, const detail::StartContext& context,
                           const StartPlan& plan, const std::vector<int>& indices,
                           const ProgressMonitor& monitor, const std::function<bool()>& stopped,
                           const StartSink& sink) {
  std::deque<int> left(indices.begin(), indices.end());
  if (dispatcher_.ranks() > 1)
    left = dispatcher_.dispatch(toText(plan), std::move(left), stopped,
                                [&](int worker, const std::string& text) {
                                  const StartResult s = startResultFromText(
                                      text, "the result of MPI rank " + std::to_string(worker));
                                  // A start its worker cancelled by itself is no result.
                                  if (s.status == StartStatus::Cancelled && !stopped())
                                    return std::make_pair(s.index, false);
                                  sink(s);
                                  return std::make_pair(s.index, true);
                                },
                                [](int index) { return "start #" + std::to_string(index); });
  // One rank, or no worker left to take the rest (none could load the problem): this process
  // runs them.
  if (!left.empty() && !stopped())
    ThreadStartExecutor(threads_).run(problem, context, plan, std::vector<int>(left.begin(), left.end()),
                                      monitor, stopped, sink);
}

void MpiStartExecutor::runPhase(const petab::Problem& problem, const detail::PhaseComputer& phase,
                                const std::vector<int>& units, const ProgressMonitor& monitor,
                                const std::function<bool()>& stopped,
                                const std::function<void()>& pointDone, const PhaseSink& sink) {
  std::deque<int> left(units.begin(), units.end());
  if (dispatcher_.ranks() > 1)
    left = dispatcher_.dispatch(
        phase.text(), std::move(left), stopped, [&](int worker, const std::string& text) {
          // "unit K" on the first line, then the unit's result.
          const std::size_t eol = text.find('\n');
          const std::string head = text.substr(0, eol);
          const std::string body = eol == std::string::npos ? std::string() : text.substr(eol + 1);
          if (head.rfind("unit ", 0) != 0)
            throw Error("the result of MPI rank " + std::to_string(worker) + ": no unit line");
          const int unit = std::atoi(head.c_str() + 5);
          if (body == "cancelled") return std::make_pair(unit, false);
          for (int i = phase.pointsIn(body); i > 0; --i)
            if (pointDone) pointDone();
          sink(unit, body);
          return std::make_pair(unit, true);
        },
        [&](int unit) { return phaseUnitName(phase, unit); });
  if (!left.empty() && !stopped())
    ThreadStartExecutor(threads_).runPhase(problem, phase, std::vector<int>(left.begin(), left.end()),
                                           monitor, stopped, pointDone, sink);
}

int runWorker(const EstimationProblem& problemSpec, const EstimationOptions& options,
              const std::function<bool()>& interrupted) {
  std::optional<detail::PreparedFit> fit;
  std::string failure;
  try {
    fit = detail::prepareFit(problemSpec.yamlFile, options);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  std::optional<detail::StartContext> context;
  std::optional<detail::PhaseComputer> phase;
  // This rank's threads for a phase's units (the screen's points); loaded once, on first use.
  std::optional<detail::WorkerProblems> problems;
  serveUnits(
      failure,
      [&](const std::string& plan) {
        if (plan.rfind("phase ", 0) == 0) {
          phase.emplace(plan, problemSpec.yamlFile, fit->setup, options);
          // --threads 0 (all cores) means one thread per rank here: ranks usually fill the cores.
          if (!problems) problems.emplace(std::max(1, options.threads), problemSpec.yamlFile,
                                          *fit->problem);
        } else {
          phase.reset();
          context = detail::makeStartContext(problemSpec.yamlFile, fit->setup,
                                             startPlanFromText(plan, "the plan"), options);
        }
      },
      [&](int index, const std::function<bool()>& cancelRequested) {
        ProgressMonitor monitor;
        CancelToken token = monitor.token;
        monitor.callback = [&, token](const ProgressInfo&) mutable {
          if (interrupted() || cancelRequested()) token.cancel();
          return token.cancelled() ? Decision::Abort : Decision::Continue;
        };
        if (phase)
          return "unit " + std::to_string(index) + "\n" + phase->compute(index, *problems, monitor);
        return toText(detail::runStart(*fit->problem, *context, index, monitor, [&] {
          return monitor.token.cancelled() || interrupted();
        }));
      });
  return fit ? 0 : 1;
}

}  // namespace sensode::estimation::mpi
