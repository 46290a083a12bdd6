#!/usr/bin/env python3
"""Two builds' adjoint gradients on one PEtab problem, as users run them (one process per run),
in alternating pairs so that a shared machine's drift cancels (docs/benchmarks/performance.md §21).

  scripts/bench-adjoint-ab.py PROBLEM.yaml REPEATS SENSODE_A SENSODE_B [extra gradient args]

Each repeat runs A and B (the order alternates), each an objective (`--method none`) and an
adjoint run back to back. Prints per build the median evaluation seconds (--stats
evaluation_seconds) and the median and interquartile range of the per-repeat ratios
adjoint / objective, then the median of B's adjoint time over A's, pair by pair. Both builds use
the user's compiled-model cache: run each once beforehand so that neither compiles in the
measured runs.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def evaluation_seconds(sensode, problem, method, extra, work):
    stats = os.path.join(work, "stats.json")
    subprocess.run([sensode, "gradient", problem, "--method", method,
                    "--out", os.path.join(work, "g.csv"), "--stats", stats] + extra,
                   capture_output=True, check=True)
    with open(stats) as f:
        return json.load(f)["evaluation_seconds"]


def quartiles(values):
    v = sorted(values)
    return v[len(v) // 4], statistics.median(v), v[3 * len(v) // 4]


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    problem, repeats, builds, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3:5], sys.argv[5:]
    times = {b: {"none": [], "adjoint": []} for b in builds}
    with tempfile.TemporaryDirectory() as work:
        for r in range(repeats):
            for b in (builds if r % 2 == 0 else builds[::-1]):
                for method in ("none", "adjoint"):
                    times[b][method].append(evaluation_seconds(b, problem, method, extra, work))
    for label, b in zip("AB", builds):
        t = times[b]
        low, mid, high = quartiles([a / o for a, o in zip(t["adjoint"], t["none"])])
        print(f"{label} {b}: objective {statistics.median(t['none']):.4f} s, adjoint "
              f"{statistics.median(t['adjoint']):.4f} s, paired adjoint/objective {mid:.2f} "
              f"({low:.2f}-{high:.2f})")
    a, b = times[builds[0]]["adjoint"], times[builds[1]]["adjoint"]
    print(f"adjoint B/A, pair by pair: median {statistics.median(y / x for x, y in zip(a, b)):.3f}")


if __name__ == "__main__":
    main()
