// SPDX-License-Identifier: MIT
// `sensode`: the command-line front end over the core library. Dispatches the subcommands of the
// command-line contract and turns every error into exit status != 0 and one line on stderr:
//   0  success
//   1  the command failed (unreadable model, integration failure, unwritable output, ...)
//   2  command-line mistake (unknown subcommand or flag, missing or bad value), or a subcommand
//      this version does not provide yet
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "core/cli/arguments.h"
#include "core/cli/commands.h"
#include "core/common/errors.h"
#include "core/integrators/sundials_build.h"
#include "core/symbolic/tcc_jit.h"

namespace {

constexpr const char* kUsage =
    "usage: sensode <command> [options]\n"
    "\n"
    "commands:\n"
    "  simulate MODEL.xml     time course of an SBML model (CSV with --out, stats with --stats)\n"
    "  sensitivities MODEL.xml  parameter sensitivities dy/dp: odesd, cvodes, pbsr, exp, fd\n"
    "  steadystate MODEL.xml  steady state with diagnostics and dx*/dp (CSV id,value)\n"
    "  gradient PROBLEM.yaml  PEtab objective and gradient (CSV parameterId,value,gradient)\n"
    "  estimate PROBLEM.yaml  fit a PEtab problem: multistart, statistics, profile likelihoods\n"
    "  test-suite CASES_DIR   run the SBML Test Suite's semantic cases and report per case\n"
    "\n"
    "  sensode <command> --help   options of a command\n"
    "  sensode --version          print the version\n";

// One line: newlines inside a message would break the contract.
std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

int fail(int status, const std::string& message) {
  std::cout.flush();
  std::cerr << "sensode: " << oneLine(message) << std::endl;
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  sensode::symbolic::installTccBackend();  // native evaluation from a model's first call
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string& command = args.front();
  const std::span<const std::string> rest(args.begin() + 1, args.end());
  try {
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return 0;
    }
    if (command == "--version") {
      std::cout << "sensode " << SENSODE_VERSION << "\n"
                << sensode::integrators::sundialsBuildDescription() << "\n";
      return 0;
    }
    if (command == "simulate") return sensode::cli::runSimulate(rest);
    if (command == "test-suite") return sensode::cli::runTestSuite(rest);
    if (command == "steadystate") return sensode::cli::runSteadyState(rest);
    if (command == "sensitivities") return sensode::cli::runSensitivities(rest);
    if (command == "gradient") return sensode::cli::runGradient(rest);
    if (command == "estimate") return sensode::cli::runEstimate(rest);
    return fail(2, "unknown command '" + command + "' (see 'sensode --help')");
  } catch (const sensode::cli::UsageError& e) {
    return fail(2, e.what());
  } catch (const sensode::Error& e) {
    return fail(1, e.what());
  } catch (const std::exception& e) {
    return fail(1, std::string("internal error: ") + e.what());
  }
}
