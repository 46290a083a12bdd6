#!/usr/bin/env python3
"""Two sensode binaries side by side, as users run them: alternating runs of the same commands
on the same PEtab problems, one process per run, and whether their outputs are byte for byte
the same.

  scripts/bench-binaries.py OLD NEW PROBLEM_ID... [--repeats 5] [--shared ../shared]
                            [--commands "sens odesd,sim cvodes"]   (default: all seven)

For each problem folder ../shared/petab/PROBLEM_ID (its model_*.xml at the finite times of its
measurement tables, and PROBLEM_ID.yaml where there is one):
  sim cvodes      sensode simulate --method cvodes
  sim odesd       sensode simulate --method odesd
  sens cvodes     sensode sensitivities --method cvodes --params all
  sens odesd      sensode sensitivities --method odesd --params all
  objective       sensode gradient --method none          (evaluation_seconds)
  adjoint         sensode gradient --method adjoint       (evaluation_seconds)
  forward         sensode gradient --method forward       (CVODES, the command's default)
Times are the --stats JSON's wall_seconds (simulate, sensitivities: the integration) or
evaluation_seconds (gradient: objective and gradient, loading excluded); medians over the
repeats, OLD and NEW alternating run by run, and which of them goes first alternating repeat by
repeat, so that a drift of the machine's load and a bias toward the second run spread over
both. Before measuring, each command runs once with OLD on a shared cache and the cc -O2 compile
it leaves behind (docs/native-cache.md) finishes, so that every measured run executes cc -O2's
code; the measured runs start no compile (SENSODE_NATIVE_DETACH=0). The cache is a temporary
folder, removed at the end. Both binaries' pages are first put in the page cache as read from
disk (scripts/binary_pages.py; --as-linked keeps them as they are): a freshly linked binary's
first touches of its code cost more, and would favour the older one.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import binary_pages  # beside this script
import petab_measurement_times  # beside this script

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("old")
p.add_argument("new")
p.add_argument("problems", nargs="+")
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
p.add_argument("--commands", default="",
               help="comma-separated labels of the commands to run (default: all)")
p.add_argument("--as-linked", action="store_true",
               help="keep the binaries' page cache as it is (scripts/binary_pages.py)")
a = p.parse_args()
if not a.as_linked:
    for binary in (a.old, a.new):  # both alike: a freshly linked one starts slower
        binary_pages.read_from_disk(binary)
petab = os.path.join(a.shared, "petab")


def measurement_times(folder):
    """The finite times of the folder's measurement tables, ascending, comma-separated."""
    times = petab_measurement_times.measurement_times(folder)
    if not times:
        sys.exit(f"{folder}: no finite measurement times")
    return ",".join(repr(t) for t in times)


cases = []
for problem in a.problems:
    folder = os.path.join(petab, problem)
    models = sorted(glob.glob(os.path.join(folder, "model_*.xml")))
    if not models:
        sys.exit(f"{folder}: no model_*.xml")
    model, times = models[0], measurement_times(folder)
    cases += [
        (problem, "sim cvodes", ["simulate", model, "--method", "cvodes", "--times", times], "wall_seconds"),
        (problem, "sim odesd", ["simulate", model, "--method", "odesd", "--times", times], "wall_seconds"),
        (problem, "sens cvodes", ["sensitivities", model, "--method", "cvodes", "--params", "all",
                                  "--times", times], "wall_seconds"),
        (problem, "sens odesd", ["sensitivities", model, "--method", "odesd", "--params", "all",
                                 "--times", times], "wall_seconds"),
    ]
    yaml = os.path.join(folder, problem + ".yaml")
    if os.path.exists(yaml):
        cases += [(problem, label, ["gradient", yaml, "--method", method], "evaluation_seconds")
                  for label, method in (("objective", "none"), ("adjoint", "adjoint"),
                                        ("forward", "forward"))]

if a.commands:
    chosen = {c.strip() for c in a.commands.split(",")}
    cases = [c for c in cases if c[1] in chosen]
    if not cases:
        sys.exit(f"--commands {a.commands!r} selects none of the commands")

cache = tempfile.mkdtemp(prefix="bench-binaries.")


def run(binary, args, key, detach="0"):
    """One process; returns (seconds, the output CSV's bytes)."""
    with tempfile.TemporaryDirectory() as work:
        stats, out = os.path.join(work, "stats.json"), os.path.join(work, "out.csv")
        subprocess.run([binary, *args, "--stats", stats, "--out", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, SENSODE_CACHE_DIR=cache, SENSODE_NATIVE_DETACH=detach))
        with open(stats) as f, open(out, "rb") as g:
            return json.load(f)[key], g.read()


try:
    for _, _, args, key in cases:  # fill the cache with cc -O2's objects
        run(a.old, args, key, detach="1")
        while glob.glob(os.path.join(cache, "*.compiling")):
            time.sleep(0.5)
    print(f"| problem | command | {os.path.basename(a.old)} ms | {os.path.basename(a.new)} ms | new / old | outputs |")
    print("|---|---|--:|--:|--:|---|")
    for problem, label, args, key in cases:
        run(a.old, args, key)  # adopts the pending object, if any
        old, new, same = [], [], True
        for rep in range(a.repeats):
            # Which binary goes first alternates: the same binary run twice per repeat measured
            # 0.96-0.98 for the second run (sub-millisecond time courses, 22 models).
            first_old = rep % 2 == 0
            if first_old:
                t_old, body_old = run(a.old, args, key)
            t_new, body_new = run(a.new, args, key)
            if not first_old:
                t_old, body_old = run(a.old, args, key)
            old.append(t_old)
            new.append(t_new)
            same = same and body_old == body_new
        mo, mn = statistics.median(old), statistics.median(new)
        print(f"| {problem} | {label} | {mo * 1e3:.2f} | {mn * 1e3:.2f} | {mn / mo:.3f} | "
              f"{'identical' if same else 'differ'} |", flush=True)
finally:
    shutil.rmtree(cache, ignore_errors=True)
