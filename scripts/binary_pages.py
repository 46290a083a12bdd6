"""The page cache of the binary a benchmark runs, put in the state a binary read from disk has.

A binary the linker has just written sits in the page cache as the linker wrote it; the same file
read from disk (after a reboot, once evicted, or copied by an install) sits there in the large
pieces the kernel's read-ahead makes. On the benchmark machine (Linux 6.18 under Firecracker) a
process's first touches of the code cost more in the first state: the first time course of
Zheng_PNAS2012 took 507 µs (odeSD) and 915 µs (CVODES) from a freshly linked build/core/sensode,
377 and 845 µs from a copy of it, and 412 and 859 µs from the same file once its pages had been
dropped and read again (docs/benchmarks/performance.md §18). Benchmarks of short runs therefore
measure the binary as read from disk unless told otherwise.
"""
import os
import sys


def read_from_disk(path):
    """Writes the file's pages back, drops them from the page cache and reads the file again."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        sys.exit(f"{path}: cannot read the binary ({e.strerror}): build it first, or name another")
    try:
        os.fsync(fd)  # dirty pages cannot be dropped
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        while os.read(fd, 1 << 20):
            pass
    finally:
        os.close(fd)
    print(f"{path}: page cache dropped and read again (as read from disk; --as-linked keeps it)",
          file=sys.stderr)
