// SPDX-License-Identifier: MIT
// What a first touch of a memory page costs on this machine: the price a short process pays once
// for every page of code and data its run reaches (docs/benchmarks/performance.md §18).
//
//   bench_page_touch [--pages N] [--samples S] [--file PATH]
//
// Per sample, in microseconds per page (medians over the samples):
//   anonymous       write one byte into each page of a fresh private anonymous mapping (the kernel
//                   faults each page in: what a process pays when its heap or stack grows)
//   populate        madvise(MADV_POPULATE_WRITE) over a fresh mapping (the kernel fills the page
//                   tables in one call, no fault per page)
//   after populate  the first write into each of those pages (on bare metal a TLB miss; under a
//                   hypervisor with shadow or lazily filled second-level page tables, more)
//   touched again   a second pass over the first mapping (every level of the page tables warm)
//   file            read one byte from each page of a fresh private mapping of PATH (default this
//                   executable; e.g. build/core/sensode), up to N pages: what the first call of a
//                   function in a not yet reached part of the code pays (the file is in the page
//                   cache after the first sample; fault-around maps up to 16 pages per fault)
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double microsecondsPerPage(Clock::time_point start, long pages) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
         static_cast<double>(pages);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

char* freshMapping(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  return static_cast<char*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  long pages = 256;
  int samples = 9;
  std::string path = "/proc/self/exe";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--pages") == 0) pages = std::max(1L, std::atol(argv[i + 1]));
    else if (std::strcmp(argv[i], "--samples") == 0) samples = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--file") == 0) path = argv[i + 1];
  }
  const long pageSize = sysconf(_SC_PAGESIZE);
  const std::size_t bytes = static_cast<std::size_t>(pages * pageSize);
  std::vector<double> anonymous, populate, afterPopulate, again, file;
  const int fd = open(path.c_str(), O_RDONLY);
  const off_t exeBytes = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
  const long filePages = std::min(pages, static_cast<long>(exeBytes / pageSize));
  for (int s = 0; s < samples; ++s) {
    char* a = freshMapping(bytes);
    auto t0 = Clock::now();
    for (long i = 0; i < pages; ++i) a[i * pageSize] = 1;
    anonymous.push_back(microsecondsPerPage(t0, pages));
    t0 = Clock::now();
    for (long i = 0; i < pages; ++i) a[i * pageSize] = 2;
    again.push_back(microsecondsPerPage(t0, pages));
    munmap(a, bytes);

    char* b = freshMapping(bytes);
    t0 = Clock::now();
    const bool populated = madvise(b, bytes, MADV_POPULATE_WRITE) == 0;
    if (populated) {
      populate.push_back(microsecondsPerPage(t0, pages));
      t0 = Clock::now();
      for (long i = 0; i < pages; ++i) b[i * pageSize] = 1;
      afterPopulate.push_back(microsecondsPerPage(t0, pages));
    }
    munmap(b, bytes);

    if (filePages > 0) {
      const std::size_t fileBytes = static_cast<std::size_t>(filePages * pageSize);
      void* f = mmap(nullptr, fileBytes, PROT_READ, MAP_PRIVATE, fd, 0);
      if (f != MAP_FAILED) {
        volatile char sink = 0;
        const char* c = static_cast<const char*>(f);
        t0 = Clock::now();
        for (long i = 0; i < filePages; ++i) sink = static_cast<char>(sink + c[i * pageSize]);
        file.push_back(microsecondsPerPage(t0, filePages));
        munmap(f, fileBytes);
      }
    }
  }
  if (fd >= 0) close(fd);
  std::printf("first touch of a page, microseconds (median of %d samples of %ld pages)\n", samples,
              pages);
  std::printf("  anonymous, written       %8.3f\n", median(anonymous));
  std::printf("  touched again            %8.3f\n", median(again));
  if (!populate.empty()) {
    std::printf("  MADV_POPULATE_WRITE      %8.3f\n", median(populate));
    std::printf("  written after populate   %8.3f\n", median(afterPopulate));
  } else {
    std::printf("  MADV_POPULATE_WRITE      not supported by this kernel\n");
  }
  if (!file.empty()) std::printf("  file mapping, read       %8.3f (%ld pages)\n", median(file), filePages);
  return 0;
}
