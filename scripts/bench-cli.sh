#!/usr/bin/env bash
# odeSD against CVODES as users run them (issue 13): one `sensode` process per run, loading
# included, over every SBML model in ../shared/petab and ../shared/biomodels, at matched accuracy
# against a tight reference; time courses and sensitivities w.r.t. all parameters. Writes a
# Markdown report (medians and ratios; docs/benchmarks/performance.md quotes it).
#
#   scripts/bench-cli.sh [--repeats N] [--only SUBSTRING] [--no-sensitivities] [--no-time-courses]
#                        [--timeout S] [--cli PATH]
#
# --timeout S: a process still running after S seconds is killed and its model listed as not
# measured (default: no limit; Lang's sensitivities w.r.t. its 445 parameters run for minutes).
#
# Per model: reference = CVODES at rtol 1e-11 / atol 1e-15 (sensitivities: CVODES forward at
# rtol 1e-10); odeSD at rtol 1e-6; CVODES at rtol 1e-5 … 1e-8. Error = max over output times and
# components of |v − ref| / (|ref| + floor), floor = 1e-6 · max_t |ref| of the component. Process
# time = CPU time (user + system) of the whole process, start to exit, loading and writing the
# CSV included (median of --repeats, default 3, methods interleaved): on a shared machine its
# wall time mostly measures the scheduler. "Matched"
# interpolates CVODES's log(time) linearly in log(error) across its rtols at odeSD's error (clamped
# to the ends of CVODES's range, flagged "~"). Every process gets an empty native-code cache
# (SENSODE_CACHE_DIR), as on a user's first run: evaluation is on tcc code from the first call for
# both methods. t = 0–100, 101 output times. Needs python3.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec python3 - "$root" "$@" <<'PY'
import csv, math, os, shutil, statistics, subprocess, sys, tempfile, time, glob, json

root = sys.argv[1]
args = sys.argv[2:]
repeats, only, sens, tcs, timeout = 3, "", True, True, None
cli = os.path.join(root, "build", "core", "sensode")
i = 0
while i < len(args):
    a = args[i]
    if a == "--repeats": repeats = int(args[i + 1]); i += 1
    elif a == "--only": only = args[i + 1]; i += 1
    elif a == "--no-sensitivities": sens = False
    elif a == "--no-time-courses": tcs = False
    elif a == "--timeout": timeout = float(args[i + 1]); i += 1
    elif a == "--cli": cli = args[i + 1]; i += 1
    else: sys.exit("bench-cli.sh: unknown argument " + a)
    i += 1
shared = os.path.join(root, "..", "shared")
models = sorted(glob.glob(os.path.join(shared, "petab", "*", "model_*.xml"))) + \
         sorted(glob.glob(os.path.join(shared, "biomodels", "*.xml")))
models = [m for m in models if only in m]
work = tempfile.mkdtemp(prefix="sensode-bench-cli-")
common = ["--t-end", "100", "--points", "101"]

def run(cmd, out):
    """Runs one sensode process; returns (CPU seconds of the process: user + system, stats)."""
    cache = tempfile.mkdtemp(dir=work)
    # A first run's unfinished cc -O2 compile ends with it, not beside the next measured run.
    env = dict(os.environ, SENSODE_CACHE_DIR=cache, SENSODE_NATIVE_DETACH="0")
    with open(os.path.join(work, "stderr"), "w+") as err:
        proc = subprocess.Popen(cmd + ["--out", out, "--stats", out + ".json"], env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        # wait4 polled (not Popen.wait, which would reap the child and lose its rusage)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, 0 if deadline is None else os.WNOHANG)
            if pid == proc.pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                shutil.rmtree(cache, ignore_errors=True)
                raise RuntimeError("still running after %g s" % timeout)
            time.sleep(0.005)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        message = err.read().strip()
    shutil.rmtree(cache, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(message.splitlines()[-1] if message else "failed")
    with open(out + ".json") as f:
        stats = json.load(f)
    return usage.ru_utime + usage.ru_stime, stats

def read_tc(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return [[float(v) for v in row[1:]] for row in rows[1:]]

def read_sens(path):
    d = {}
    with open(path) as f:
        rd = csv.reader(f)
        next(rd)
        for t, var, par, v in rd:
            d[(t, var, par)] = float(v)
    return d

def err_tc(v, ref):
    n = len(ref[0])
    floor = [1e-6 * max(abs(r[j]) for r in ref) for j in range(n)]
    e = 0.0
    for rv, rr in zip(v, ref):
        for j in range(n):
            if floor[j] == 0 and rr[j] == 0: continue
            e = max(e, abs(rv[j] - rr[j]) / (abs(rr[j]) + floor[j]))
    return e

def err_sens(v, ref):  # per output: max_{t,p} |v - ref| / max_{t,p} |ref|; the worst output
    scale, diff = {}, {}
    for k, x in ref.items():
        var = k[1]
        scale[var] = max(scale.get(var, 0.0), abs(x))
        diff[var] = max(diff.get(var, 0.0), abs(v.get(k, float("nan")) - x))
    return max((diff[k] / scale[k] if scale[k] > 0 else diff[k]) for k in scale)

def matched(err_sd, cv):  # cv: [(err, wall)] over rtols
    pts = sorted((math.log(max(e, 1e-300)), math.log(w)) for e, w in cv if e > 0)
    if not pts: return float("nan"), True
    x = math.log(max(err_sd, 1e-300))
    if x <= pts[0][0]: return math.exp(pts[0][1]), True
    if x >= pts[-1][0]: return math.exp(pts[-1][1]), True
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return math.exp(y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 > x0 else y0), False
    return math.exp(pts[-1][1]), True

def bench(kind, model, name):
    ext = "simulate" if kind == "tc" else "sensitivities"
    base = [cli, ext, model] + common + ([] if kind == "tc" else ["--params", "all"])
    ref_out = os.path.join(work, name + "." + kind + ".ref.csv")
    ref_rtol = ["--rtol", "1e-11", "--atol", "1e-15"] if kind == "tc" else ["--rtol", "1e-10", "--atol", "1e-14"]
    run(base + ["--method", "cvodes"] + ref_rtol, ref_out)
    reader, errf = (read_tc, err_tc) if kind == "tc" else (read_sens, err_sens)
    ref = reader(ref_out)
    configs = [("odesd", "1e-6")] + [("cvodes", r) for r in ("1e-5", "1e-6", "1e-7", "1e-8")]
    walls = {c: [] for c in configs}
    inner = {c: [] for c in configs}
    errs, stats = {}, {}
    for rep in range(repeats):
        for c in configs:
            out = os.path.join(work, "%s.%s.%s.%s.csv" % (name, kind, c[0], c[1]))
            w, st = run(base + ["--method", c[0], "--rtol", c[1]], out)
            walls[c].append(w)
            inner[c].append(st.get("wall_seconds", float("nan")))
            if rep == 0:
                errs[c] = errf(reader(out), ref)
                stats[c] = st
    med = {c: statistics.median(v) for c, v in walls.items()}
    imed = {c: statistics.median(v) for c, v in inner.items()}
    sd = ("odesd", "1e-6")
    cv_m, clamped = matched(errs[sd], [(errs[c], med[c]) for c in configs[1:]])
    icv_m, _ = matched(errs[sd], [(errs[c], imed[c]) for c in configs[1:]])
    return {"sd": med[sd], "cv": med[("cvodes", "1e-6")], "cv_matched": cv_m, "clamped": clamped,
            "isd": imed[sd], "icv": imed[("cvodes", "1e-6")], "icv_matched": icv_m,
            "err_sd": errs[sd], "err_cv": errs[("cvodes", "1e-6")],
            "steps_sd": stats[sd].get("steps"), "steps_cv": stats[("cvodes", "1e-6")].get("steps"),
            "handover": stats[sd].get("handover_time"), "nx": stats[sd].get("n_states"),
            "np": stats[sd].get("n_parameters"), "tier": stats[sd].get("native_tier", "?")}

def gm(v):
    v = [x for x in v if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")

load = open("/proc/loadavg").read().split()[:3]
print("# bench-cli (%s UTC, %d CPUs, load %s; repeats %d)\n" % (
    time.strftime("%Y-%m-%dT%H:%M", time.gmtime()), os.cpu_count(), " ".join(load), repeats))
print(subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.strip().replace("\n", "; "))
for kind in (["tc"] if tcs else []) + (["sens"] if sens else []):
    print("\n## %s\n" % ("Time courses (sensode simulate)" if kind == "tc" else
                         "Sensitivities w.r.t. all parameters (sensode sensitivities)"))
    print("| model | nx | np | odeSD process CPU | CVODES process CPU (rtol 1e-6) | CVODES process CPU, matched | odeSD / CVODES process, equal rtol | matched | in-process odeSD / CVODES, equal rtol | matched | err odeSD | err CVODES | steps odeSD / CVODES | hand-over |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    eq, mt, ieq, imt, failed = [], [], [], [], []
    for m in models:
        name = os.path.splitext(os.path.basename(m))[0].replace("model_", "")
        try:
            r = bench(kind, m, name)
        except Exception as e:
            failed.append("%s (%s)" % (name, str(e)[:120]))
            continue
        eq.append(r["sd"] / r["cv"]); mt.append(r["sd"] / r["cv_matched"])
        ieq.append(r["isd"] / r["icv"]); imt.append(r["isd"] / r["icv_matched"])
        tilde = "~" if r["clamped"] else ""
        print("| %s | %s | %s | %.3f s | %.3f s | %s%.3f s | %.2f | %s%.2f | %.2f | %s%.2f | %.1e | %.1e | %s / %s | %s |" % (
            name, r["nx"], r["np"], r["sd"], r["cv"], tilde, r["cv_matched"],
            r["sd"] / r["cv"], tilde, r["sd"] / r["cv_matched"], ieq[-1], tilde, imt[-1], r["err_sd"],
            r["err_cv"], r["steps_sd"], r["steps_cv"],
            "t = %.3g" % r["handover"] if (r["handover"] or -1) >= 0 else "–"), flush=True)
    if eq:
        print("\n**%d models: odeSD / CVODES, process CPU time: median %.2f (equal rtol), %.2f (matched accuracy); "
              "in-process integration: median %.2f (equal rtol), %.2f (matched).** Geometric means %.2f / %.2f / %.2f / %.2f." % (
            len(eq), statistics.median(eq), statistics.median(mt), statistics.median(ieq), statistics.median(imt),
            gm(eq), gm(mt), gm(ieq), gm(imt)))
    if failed:
        print("\nNot measured (a run failed): " + "; ".join(failed))
shutil.rmtree(work, ignore_errors=True)
PY
