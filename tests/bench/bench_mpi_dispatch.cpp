// SPDX-License-Identifier: MIT
// Rank 0's dispatch throughput (core/estimation/mpi/unit_dispatch.h) with units that compute
// nothing: what is left is the protocol — a unit index out, a result text of RESULT_BYTES back
// (Boehm's start record: 775 bytes), rank 0 polling with MPI_Iprobe. Prints units per second.
//
//   mpirun -n N bench_mpi_dispatch [UNITS (100000)] [RESULT_BYTES (775)] [PLAN_BYTES (2580)]
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#include "core/estimation/mpi/mpi_executor.h"
#include "core/estimation/mpi/unit_dispatch.h"

namespace mpi = sensode::estimation::mpi;

int main(int argc, char** argv) {
  const int units = argc > 1 ? std::atoi(argv[1]) : 100000;
  const std::size_t resultBytes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 775;
  const std::size_t planBytes = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 2580;
  const mpi::MpiSession session;
  if (session.rank() != 0) {
    mpi::serveUnits({}, [](const std::string&) {},
                    [&](int index, const std::function<bool()>&) {
                      std::string text = std::to_string(index) + " ";
                      text.resize(std::max(resultBytes, text.size()), 'x');
                      return text;
                    });
    return 0;
  }
  std::deque<int> queue;
  for (int i = 0; i < units; ++i) queue.push_back(i);
  long received = 0;
  const auto t0 = std::chrono::steady_clock::now();
  {
    mpi::UnitDispatcher dispatcher(session.size());
    dispatcher.dispatch(std::string(planBytes, 'p'), std::move(queue), [] { return false; },
                        [&](int, const std::string& text) {
                          ++received;
                          return std::make_pair(std::atoi(text.c_str()), true);
                        });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d ranks, %ld units in %.3f s: %.0f units/s; sent %ld bytes, received %ld bytes\n",
                session.size(), received, seconds, static_cast<double>(received) / seconds,
                dispatcher.bytesSent(), dispatcher.bytesReceived());
  }
  return 0;
}
