#!/usr/bin/env python3
"""First against second run of `sensode simulate` and `sensode sensitivities`, one process per
run, as users run them: the first with an empty compiled-model cache, the second with what the
first left (docs/native-cache.md). odeSD and CVODES alternate; medians over --repeats.

  scripts/bench-cache.py [--sensode build/core/sensode] [--repeats 3] [--measurement-times]
                         [--no-settle | --tiers] [--as-linked] MODEL.xml...

--measurement-times: output at the times of the PEtab measurement tables beside each model
(their finite `time` values, once each) instead of linspace(0, --t-end, 101).

A first run that ends before cc -O2 has compiled the model leaves the compile to a job that
outlives it (docs/native-cache.md); the second run starts once that job is done (as a user's next
run, seconds later, finds it), or at once with --no-settle. The last column says which code the
second runs ran.

--tiers: instead, the same short runs on a cache holding tcc's object against one holding cc -O2's
(filled by a first run, then upgraded by its detached compile), alternating; the measured runs
start no compile (SENSODE_NATIVE_DELAY=1000, SENSODE_NATIVE_DETACH=0), so each cache keeps its
tier. What odeSD and CVODES gain from cc's code over tcc's.

The binary's pages are first put in the page cache as read from disk (scripts/binary_pages.py):
a binary the linker has just written pays more for its first touches of code in every run
(--as-linked measures it so).

Prints a Markdown table per command: integration wall time (--stats wall_seconds) and the
process's wall time, first and second run, for odeSD and CVODES, with the ratios, plus whether
the second run was native from its first evaluation.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import binary_pages  # beside this script
from compile_jobs import settle  # beside this script
import petab_measurement_times  # beside this script

p = argparse.ArgumentParser()
p.add_argument("--sensode", default="build/core/sensode")
p.add_argument("--as-linked", action="store_true",
               help="keep the binary's page cache as it is (scripts/binary_pages.py)")
p.add_argument("--repeats", type=int, default=3)
p.add_argument("--t-end", default="100")
p.add_argument("--measurement-times", action="store_true")
p.add_argument("--no-settle", action="store_true")
p.add_argument("--tiers", action="store_true")
p.add_argument("models", nargs="+")
a = p.parse_args()
if not a.as_linked:
    binary_pages.read_from_disk(a.sensode)


def measurement_times(model):
    """The finite times of the PEtab measurement tables in the model's folder, ascending."""
    return petab_measurement_times.measurement_times(os.path.dirname(os.path.abspath(model)))


def output_arguments(model):
    if not a.measurement_times:
        return ["--t-end", a.t_end]
    return ["--times", ",".join(repr(t) for t in measurement_times(model))]


def run(command, model, method, cache, stats, compile=True):
    args = [a.sensode, command, model, "--method", method, *output_arguments(model), "--stats", stats]
    if command == "sensitivities":
        args += ["--params", "all"]
    env = dict(os.environ, SENSODE_CACHE_DIR=cache)
    if not compile:
        env.update(SENSODE_NATIVE_DELAY="1000", SENSODE_NATIVE_DETACH="0")
    t0 = time.perf_counter()
    r = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    process = time.perf_counter() - t0
    if r.returncode != 0:
        return None
    with open(stats) as f:
        s = json.load(f)
    return {"wall": s["wall_seconds"], "process": process, "cache": s.get("native_cache"),
            "first": s.get("native_from_first_evaluation"), "tier": s.get("native_tier")}


if a.measurement_times:
    # Data at steady state only (time inf, as Blasi's) leave no time course to run.
    skipped = [m for m in a.models if not measurement_times(m)]
    for m in skipped:
        print(f"{os.path.basename(m)}: no finite measurement times, left out", file=sys.stderr)
    a.models = [m for m in a.models if m not in skipped]

def med(samples, key):
    values = [s[key] for s in samples if s]
    return statistics.median(values) if values else float("nan")


def tiers():
    """Short runs on tcc's object against cc -O2's, per command, model and method."""
    results = {}  # (command, model, method, tier) -> samples
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "stats.json")
        caches = {}
        for model in a.models:
            for method in ("odesd", "cvodes"):
                for tier in ("tcc", "cc"):
                    cache = os.path.join(tmp, f"{os.path.basename(model)}-{method}-{tier}")
                    run("simulate", model, method, cache, stats, compile=(tier == "cc"))
                    if os.path.isdir(cache):
                        settle(cache)
                    caches[(model, method, tier)] = cache
        for rep in range(a.repeats):
            for model in a.models:
                for command in ("simulate", "sensitivities"):
                    for method in ("odesd", "cvodes"):
                        for tier in ("tcc", "cc"):
                            s = run(command, model, method, caches[(model, method, tier)], stats, compile=False)
                            results.setdefault((command, model, method, tier), []).append(s)
    for command in ("simulate", "sensitivities"):
        print(f"\n### sensode {command}" + (" --params all" if command == "sensitivities" else ""))
        print("\n| model | odeSD tcc (ms) | CVODES tcc (ms) | odeSD/CVODES tcc | odeSD cc (ms) | CVODES cc (ms) "
              "| odeSD/CVODES cc | code of the runs |")
        print("|---|---|---|---|---|---|---|---|")
        ratios = {"tcc": [], "cc": []}
        gains = {"odesd": [], "cvodes": []}
        for model in a.models:
            t = {(m, tier): med(results[(command, model, m, tier)], "wall") * 1e3
                 for m in ("odesd", "cvodes") for tier in ("tcc", "cc")}
            codes = "/".join(sorted({s["tier"] or "?" for m in ("odesd", "cvodes") for tier in ("tcc", "cc")
                                     for s in results[(command, model, m, tier)] if s}))
            for tier in ("tcc", "cc"):
                ratios[tier].append(t[("odesd", tier)] / t[("cvodes", tier)])
            for m in ("odesd", "cvodes"):
                gains[m].append(t[(m, "cc")] / t[(m, "tcc")])
            print(f"| {os.path.basename(model)} | {t[('odesd', 'tcc')]:.2f} | {t[('cvodes', 'tcc')]:.2f} | "
                  f"{ratios['tcc'][-1]:.2f} | {t[('odesd', 'cc')]:.2f} | {t[('cvodes', 'cc')]:.2f} | "
                  f"{ratios['cc'][-1]:.2f} | {codes} |")
        print(f"| **median** | | | **{statistics.median(ratios['tcc']):.2f}** | | | "
              f"**{statistics.median(ratios['cc']):.2f}** | |")
        print(f"\ncc / tcc, median over the models: odeSD {statistics.median(gains['odesd']):.2f}, "
              f"CVODES {statistics.median(gains['cvodes']):.2f}")


if a.tiers:
    tiers()
    sys.exit(0)

results = {}  # (command, model, method, run) -> list of samples
with tempfile.TemporaryDirectory() as tmp:
    stats = os.path.join(tmp, "stats.json")
    for rep in range(a.repeats):
        for model in a.models:
            for command in ("simulate", "sensitivities"):
                for method in ("odesd", "cvodes"):  # alternately, so load drifts hit both
                    cache = os.path.join(tmp, f"cache-{rep}-{os.path.basename(model)}-{command}-{method}")
                    for which in ("first", "second"):
                        s = run(command, model, method, cache, stats)
                        results.setdefault((command, model, method, which), []).append(s)
                        if which == "first" and not a.no_settle and os.path.isdir(cache):
                            settle(cache)

for command in ("simulate", "sensitivities"):
    print(f"\n### sensode {command}" + (" --params all" if command == "sensitivities" else ""))
    print("\n| model | odeSD 1st int / proc (ms) | odeSD 2nd int / proc (ms) | CVODES 1st int / proc (ms) "
          "| CVODES 2nd int / proc (ms) | odeSD/CVODES int 1st | 2nd | 2nd native from 1st eval | 2nd runs' code |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios1, ratios2 = [], []
    for model in a.models:
        row = {}
        for method in ("odesd", "cvodes"):
            for which in ("first", "second"):
                samples = results[(command, model, method, which)]
                row[(method, which)] = (med(samples, "wall") * 1e3, med(samples, "process") * 1e3)
        second = [s for m in ("odesd", "cvodes") for s in results[(command, model, m, "second")] if s]
        native = all(s["first"] and s["cache"] == "hit" for s in second) and bool(second)
        r1 = row[("odesd", "first")][0] / row[("cvodes", "first")][0]
        r2 = row[("odesd", "second")][0] / row[("cvodes", "second")][0]
        ratios1.append(r1)
        ratios2.append(r2)
        cells = " | ".join(f"{row[k][0]:.1f} / {row[k][1]:.0f}" for k in
                           [("odesd", "first"), ("odesd", "second"), ("cvodes", "first"), ("cvodes", "second")])
        tiers = "/".join(sorted({s["tier"] or "?" for s in second}))
        print(f"| {os.path.basename(model)} | {cells} | {r1:.2f} | {r2:.2f} | {'yes' if native else 'no'} | {tiers} |")
    print(f"| **median** | | | | | **{statistics.median(ratios1):.2f}** | **{statistics.median(ratios2):.2f}** | | |")
sys.exit(0)
