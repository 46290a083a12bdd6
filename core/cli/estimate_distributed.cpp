// SPDX-License-Identifier: MIT
#include "core/cli/estimate_distributed.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/common/errors.h"
#include "core/estimation/run_store.h"
#if SENSODE_HAVE_MPI
#include "core/estimation/mpi/mpi_executor.h"
#endif

namespace sensode::cli {
namespace {

namespace fs = std::filesystem;

bool takesValue(const std::string& option) {
  // Where and how the run is executed, not what it computes: not part of the stored command.
  return option == "--out" || option == "--resume" || option == "--threads" ||
         option == "--worker-timeout";
}

bool isPositional(std::span<const std::string> args, std::size_t i) {
  if (args[i].rfind("--", 0) == 0) return false;
  // The value of an option before it.
  return i == 0 || args[i - 1].rfind("--", 0) != 0 || args[i - 1].find('=') != std::string::npos ||
         args[i - 1] == "--no-start-values" || args[i - 1] == "--help";
}

}  // namespace

std::string commandText(std::span<const std::string> args) {
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string name = args[i].substr(0, args[i].find('='));
    if (takesValue(name)) {
      if (args[i].find('=') == std::string::npos) ++i;  // and its value
      continue;
    }
    std::string value = args[i];
    // The problem by its absolute path: a resume may start in another folder.
    if (isPositional(args, i) && fs::exists(value)) value = fs::absolute(value).string();
    out += value + "\n";
  }
  return out;
}

std::vector<std::string> resolveResume(std::span<const std::string> args) {
  std::string dir;
  std::vector<std::string> rest;
  bool problemGiven = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--resume" && i + 1 < args.size()) {
      dir = args[++i];
      continue;
    }
    if (args[i].rfind("--resume=", 0) == 0) {
      dir = args[i].substr(9);
      continue;
    }
    if (isPositional(args, i)) problemGiven = true;
    rest.push_back(args[i]);
  }
  if (dir.empty()) return {args.begin(), args.end()};
  std::vector<std::string> out;
  if (!problemGiven) {
    if (!fs::is_regular_file(fs::path(dir) / "run.txt"))
      throw Error(dir + ": no estimation run to resume here (no run.txt)");
    const estimation::RunStore store(dir);
    const auto command = store.readFile("command.txt");
    if (!command)
      throw Error(dir + ": no command.txt (the run's command line) to resume from; give the "
                        "problem and options again with --resume DIR");
    std::istringstream in(*command);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.push_back(line);
  }
  out.insert(out.end(), rest.begin(), rest.end());
  out.push_back("--out");
  out.push_back(dir);
  return out;
}

#if SENSODE_HAVE_MPI
struct EstimateExecution::Mpi {
  estimation::mpi::MpiSession session;
  std::unique_ptr<estimation::mpi::MpiStartExecutor> executor;
};

EstimateExecution::EstimateExecution(int threads, double workerTimeout) {
  if (!estimation::mpi::launchedByMpi()) return;
  mpi_ = std::make_unique<Mpi>();
  if (mpi_->session.rank() == 0) {
    mpi_->executor = std::make_unique<estimation::mpi::MpiStartExecutor>(mpi_->session.size(),
                                                                         threads, workerTimeout);
    mpi_->executor->setNotice(
        [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  }
}

bool EstimateExecution::isWorker() const { return mpi_ && mpi_->session.rank() != 0; }

int EstimateExecution::runWorker(const estimation::EstimationProblem& problem,
                                 const estimation::EstimationOptions& options,
                                 const std::function<bool()>& interrupted) {
  return estimation::mpi::runWorker(problem, options, interrupted);
}

estimation::StartExecutor* EstimateExecution::executor() const {
  return mpi_ ? mpi_->executor.get() : nullptr;
}

std::string EstimateExecution::describe() const {
  return mpi_ && mpi_->executor ? mpi_->executor->describe() : std::string();
}

void EstimateExecution::setNotice(std::function<void(const std::string&)> notice) {
  if (mpi_ && mpi_->executor) mpi_->executor->setNotice(std::move(notice));
}

std::string EstimateExecution::traffic() const {
  if (!mpi_ || !mpi_->executor) return {};
  const auto& d = mpi_->executor->dispatcher();
  return std::to_string(d.unitsSent()) + " units on the workers, " +
         std::to_string(d.bytesSent()) + " bytes out, " + std::to_string(d.bytesReceived()) +
         " bytes in";
}
#else
struct EstimateExecution::Mpi {};
EstimateExecution::EstimateExecution(int, double) {}
bool EstimateExecution::isWorker() const { return false; }
int EstimateExecution::runWorker(const estimation::EstimationProblem&,
                                 const estimation::EstimationOptions&,
                                 const std::function<bool()>&) {
  return 1;
}
estimation::StartExecutor* EstimateExecution::executor() const { return nullptr; }
std::string EstimateExecution::describe() const { return {}; }
std::string EstimateExecution::traffic() const { return {}; }
void EstimateExecution::setNotice(std::function<void(const std::string&)>) {}
#endif

EstimateExecution::~EstimateExecution() = default;

}  // namespace sensode::cli
