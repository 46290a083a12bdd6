#!/usr/bin/env python3
"""A process's first time course against the same time course repeated in that process, odeSD and
CVODES side by side: how much of the CLI's integration wall time (`--stats` wall_seconds) is the
once-per-process price of first touches of code and memory (docs/benchmarks/performance.md §18).

  scripts/bench-first-and-repeated.py [--sensode build/core/sensode] [--processes 3]
                                      [--repeats 5] [--as-linked] MODEL.xml...

Every model runs at its PEtab measurement times (the finite `time` values of the measurement
tables beside it, as scripts/bench-cache.py --measurement-times, which also leaves out models
without any), on a compiled-model cache of its own holding cc -O2's code (one unmeasured run per
method first, whose compile finishes before the measured runs, which start none). odeSD and CVODES
alternate, --processes processes each; every process runs the time course once (the CLI's
wall_seconds: "first") and then --repeats more times (SENSODE_BENCH_REPEAT; "repeated": the median
of those). Prints per model the medians over processes in microseconds, the ratios odeSD / CVODES
of both, the first run's extra time (first − repeated) of each method, how odeSD's run ended
(hand-over to CVODES, fallback) and which code the runs executed, then the medians of the ratios
over the models. The binary's pages are first put in the page cache as read from disk
(scripts/binary_pages.py; --as-linked keeps them as the linker left them).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import binary_pages  # beside this script
from compile_jobs import settle  # beside this script
import petab_measurement_times  # beside this script

p = argparse.ArgumentParser()
p.add_argument("--sensode", default="build/core/sensode")
p.add_argument("--as-linked", action="store_true",
               help="keep the binary's page cache as it is (scripts/binary_pages.py)")
p.add_argument("--processes", type=int, default=3)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("models", nargs="+")
a = p.parse_args()
if a.processes < 1 or a.repeats < 1:
    sys.exit("--processes and --repeats must be at least 1")
if not os.access(a.sensode, os.X_OK):
    sys.exit(f"{a.sensode}: not an executable (build it first, or pass --sensode)")
if not a.as_linked:
    binary_pages.read_from_disk(a.sensode)


def run(model, times, method, stats, repeats, cache, measured=True):
    args = [a.sensode, "simulate", model, "--method", method, "--times", times,
            "--stats", stats, "--out", os.devnull]
    env = dict(os.environ, SENSODE_BENCH_REPEAT=str(repeats), SENSODE_CACHE_DIR=cache)
    if measured:  # no compile of its own: the run executes what the cache holds
        env.update(SENSODE_NATIVE_DELAY="1000", SENSODE_NATIVE_DETACH="0")
    r = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{model}: sensode simulate --method {method} failed: {r.stderr.strip()}")
    with open(stats) as f:
        return json.load(f)


def microseconds(seconds):
    return f"{seconds * 1e6:.0f}"


def output_times(model):
    if not os.path.isfile(model):
        sys.exit(f"{model}: no such file")
    found = petab_measurement_times.measurement_times(os.path.dirname(os.path.abspath(model)))
    return ",".join(repr(t) for t in found)


model_times = {model: output_times(model) for model in a.models}
for model in [m for m in a.models if not model_times[m]]:
    print(f"skipped {model}: no finite measurement times (steady-state data only)", file=sys.stderr)
    a.models.remove(model)
if not a.models:
    sys.exit("no model with finite measurement times")
methods = ("odesd", "cvodes")
first_ratios, repeated_ratios = [], []
print("| model | odeSD first / repeated µs | CVODES first / repeated µs | ratio first | ratio "
      "repeated | first run's extra µs, odeSD / CVODES | odeSD's run | code |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
with tempfile.TemporaryDirectory() as d:
    stats = os.path.join(d, "stats.json")
    cache = os.path.join(d, "cache")  # a cache of the benchmark's own
    for model in a.models:
        times = model_times[model]
        first = {m: [] for m in methods}
        repeated = {m: [] for m in methods}
        last = {}
        tiers = set()
        for m in methods:  # compiles the model; its cc -O2 job finishes before any measurement
            run(model, times, m, stats, 0, cache, measured=False)
            settle(cache)
        for _ in range(a.processes):
            for m in methods:
                s = run(model, times, m, stats, a.repeats, cache)
                first[m].append(s["wall_seconds"])
                repeated[m].append(statistics.median(s["repeat_wall_seconds"]))
                tiers.add(s["native_tier"])
                last[m] = s
        f = {m: statistics.median(first[m]) for m in methods}
        r = {m: statistics.median(repeated[m]) for m in methods}
        first_ratios.append(f["odesd"] / f["cvodes"])
        repeated_ratios.append(r["odesd"] / r["cvodes"])
        o = last["odesd"]
        how = "odeSD"
        if o["handover_time"] >= 0:
            how = "hand-over to CVODES at t = %.3g" % o["handover_time"]
        elif any("computed again from t = 0" in line for line in o["fallbacks"]):
            how = "fallback: CVODES from t = 0"
        elif o["fallbacks"]:
            how = "odeSD with %d bridge(s) by CVODES" % len(o["fallbacks"])
        name = os.path.splitext(os.path.basename(model))[0].removeprefix("model_")
        print(f"| {name} | {microseconds(f['odesd'])} / {microseconds(r['odesd'])} | "
              f"{microseconds(f['cvodes'])} / {microseconds(r['cvodes'])} | "
              f"{first_ratios[-1]:.2f} | {repeated_ratios[-1]:.2f} | "
              f"{microseconds(f['odesd'] - r['odesd'])} / {microseconds(f['cvodes'] - r['cvodes'])} | "
              f"{how} | {'/'.join(sorted(tiers))} |", flush=True)
print(f"\nmedian over {len(a.models)} models, odeSD / CVODES: first runs "
      f"{statistics.median(first_ratios):.2f}, repeated runs {statistics.median(repeated_ratios):.2f}")
