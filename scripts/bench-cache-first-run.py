#!/usr/bin/env python3
"""What a first run costs: two sensode binaries (e.g. main's and this branch's), each run with an
empty compiled-model cache, alternating, medians of --repeats (docs/benchmarks/performance.md §7).

  scripts/bench-cache-first-run.py BASELINE_SENSODE CANDIDATE_SENSODE MODEL.xml...
"""
import argparse, subprocess, time, tempfile, os, statistics, json
ap = argparse.ArgumentParser()
ap.add_argument("baseline")
ap.add_argument("candidate")
ap.add_argument("models", nargs="+")
ap.add_argument("--repeats", type=int, default=5)
a = ap.parse_args()
bins = {"baseline": a.baseline, "candidate": a.candidate}
models = a.models
res = {}
for rep in range(a.repeats):
    for m in models:
        for cmd in ("simulate", "sensitivities"):
            for name, b in bins.items():
                d = tempfile.mkdtemp()
                st = os.path.join(d, "s.json")
                args = [b, cmd, m, "--t-end", "100", "--stats", st] + (["--params", "all"] if cmd == "sensitivities" else [])
                t0 = time.perf_counter()
                subprocess.run(args, env=dict(os.environ, SENSODE_CACHE_DIR=os.path.join(d, "c"), SENSODE_NATIVE_DETACH="0"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                t = time.perf_counter() - t0
                s = json.load(open(st))
                res.setdefault((m, cmd, name), []).append((t, s["wall_seconds"], s.get("native_emit_seconds", 0), s["load_seconds"]))
for (m, cmd, name), v in sorted(res.items()):
    print(os.path.basename(m), cmd, name, "process %.0f ms" % (1e3*statistics.median(x[0] for x in v)),
          "int %.1f ms" % (1e3*statistics.median(x[1] for x in v)), "load %.1f ms" % (1e3*statistics.median(x[3] for x in v)),
          "emit %.1f ms" % (1e3*statistics.median(x[2] for x in v)))
