#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Default time courses of the corpus models against a tight CVODES run, for one or more CLIs.

The models and spans are those of tests/corpus/corpus_models.cpp: every BIOMD*.xml under
<shared>/biomodels over t = 0-100, and every SBML file under <shared>/petab over 0 to the largest
finite measurement time of the problems (yaml files) that name it (or, for a file named by none,
of the problems beside it; 0-100 when there is none). Each model is simulated with

    sensode simulate MODEL --t-end T --out run.csv --stats run.json         (every CLI given)
    sensode simulate MODEL --t-end T --method cvodes --rtol R --atol A      (the reference)

and the error is max over columns of max_t |a - b| / max(max_t |b|, floor) (floor 1e-12 by
default). One tab-separated line per model: name, t end, then per CLI error, steps, Newton
failures, wall seconds, hand-over time (or -), termination.

  scripts/corpus-accuracy.py --cli new=build/core/sensode --cli main=/tmp/sensode-main \\
      [--shared /work/shared] [--only SUBSTRING] [--timeout 300] > corpus-accuracy.tsv
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time


def yaml_file_list(yaml_file, key):
    files, in_list = [], False
    try:
        lines = open(yaml_file, encoding="utf-8-sig").read().splitlines()
    except OSError:
        return files
    for line in lines:
        t = line.strip()
        if not t or t.startswith("#"):
            continue
        item = t[2:].strip() if t.startswith("- ") else t
        if item.endswith(":") or ": " in item:
            in_list = item == key + ":"
            continue
        if in_list and t.startswith("- "):
            files.append(item)
    return files


def largest_time(tsv):
    end = math.nan
    try:
        rows = open(tsv, encoding="utf-8-sig").read().splitlines()
    except OSError:
        return end
    col = -1
    for line in rows:
        cells = line.strip().split("\t")
        if col < 0:
            if "time" not in cells:
                return end
            col = cells.index("time")
            continue
        if col >= len(cells):
            continue
        try:
            t = float(cells[col].strip())
        except ValueError:
            continue
        if math.isfinite(t) and not (t <= end):
            end = t
    return end


def files_under(d, suffix, prefix=""):
    out = []
    for root, _, names in os.walk(d):
        for n in names:
            if n.endswith(suffix) and n.startswith(prefix):
                out.append(os.path.abspath(os.path.join(root, n)))
    return sorted(out)


def problem_end(yaml):
    end = math.nan
    for table in yaml_file_list(yaml, "measurement_files"):
        t = largest_time(os.path.join(os.path.dirname(yaml), table))
        if math.isfinite(t) and not (t <= end):
            end = t
    return end


def corpus_models(shared):
    models = [(os.path.relpath(f, shared), f, 100.0)
              for f in files_under(os.path.join(shared, "biomodels"), ".xml", "BIOMD")]
    petab = os.path.join(shared, "petab")
    end_of, yamls_in = {}, {}
    for yaml in files_under(petab, ".yaml"):
        yamls_in.setdefault(os.path.dirname(yaml), []).append(yaml)
        end = problem_end(yaml)
        if not math.isfinite(end):
            continue
        for sbml in yaml_file_list(yaml, "sbml_files"):
            m = os.path.abspath(os.path.join(os.path.dirname(yaml), sbml))
            if m not in end_of or end_of[m] < end:
                end_of[m] = end
    for f in files_under(petab, ".xml"):
        t = end_of.get(f)
        if t is None:
            t = math.nan
            for yaml in yamls_in.get(os.path.dirname(f), []):
                e = problem_end(yaml)
                if math.isfinite(e) and not (e <= t):
                    t = e
            if not math.isfinite(t):
                t = 100.0
        models.append((os.path.relpath(f, shared), f, t))
    return models


def run(cli, model, t_end, out_dir, tag, extra, timeout):
    csv_path = os.path.join(out_dir, tag + ".csv")
    json_path = os.path.join(out_dir, tag + ".json")
    cmd = [cli, "simulate", model, "--t-end", repr(t_end), "--out", csv_path,
           "--stats", json_path] + extra
    for stale in (csv_path, json_path):
        if os.path.exists(stale):
            os.remove(stale)
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, {"termination": "timeout"}, time.time() - start
    stats = {}
    try:
        stats = json.load(open(json_path))
    except (OSError, ValueError):
        stats = {"termination": "exit %d: %s" % (p.returncode, p.stderr.strip()[-200:])}
    values = None
    if os.path.exists(csv_path):
        rows = list(csv.reader(open(csv_path)))
        values = (rows[0], [[float(v) for v in r] for r in rows[1:]])
    return values, stats, time.time() - start


def scaled_error(a, b, floor):
    ha, ra = a
    hb, rb = b
    if ha != hb or len(ra) != len(rb):
        return math.inf, "shape"
    worst, where = 0.0, ""
    for j in range(1, len(hb)):
        scale = max(max(abs(r[j]) for r in rb), floor)
        for i in range(len(rb)):
            e = abs(ra[i][j] - rb[i][j]) / scale
            if not (e <= worst):
                worst, where = e, "%s@t=%g" % (hb[j], rb[i][0])
    return worst, where


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", action="append", required=True, help="NAME=PATH (repeatable)")
    ap.add_argument("--reference-cli", help="CLI for the CVODES reference (default: the first)")
    ap.add_argument("--shared", default="/work/shared")
    ap.add_argument("--only", default="")
    ap.add_argument("--rtol", default="1e-10")
    ap.add_argument("--atol", default="1e-14")
    ap.add_argument("--floor", type=float, default=1e-12)
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    clis = [c.split("=", 1) for c in args.cli]
    ref_cli = args.reference_cli or clis[0][1]
    models = [m for m in corpus_models(args.shared) if args.only in m[0]]
    print("# %d models; reference: CVODES rtol %s atol %s; error = max over columns of "
          "max_t |a-b| / max(max_t |b|, %g)" % (len(models), args.rtol, args.atol, args.floor))
    print("\t".join(["model", "t_end"] + ["%s_%s" % (n, k) for n, _ in clis
                                          for k in ("error", "where", "steps", "newton_failures",
                                                    "seconds", "handover", "termination")]))
    sys.stdout.flush()
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, t_end in models:
            ref, ref_stats, _ = run(ref_cli, path, t_end, tmp, "ref",
                                    ["--method", "cvodes", "--rtol", args.rtol, "--atol",
                                     args.atol], args.timeout)
            cells = [name, "%g" % t_end]
            for tag, cli in clis:
                vals, st, secs = run(cli, path, t_end, tmp, tag, [], args.timeout)
                if ref is None or vals is None:
                    err, where = math.nan, "ref: " + str(ref_stats.get("termination"))
                else:
                    err, where = scaled_error(vals, ref, args.floor)
                ho = st.get("handover_time", -1)
                cells += ["%.3g" % err, where, str(st.get("steps", "")),
                          str(st.get("newton_failures", "")), "%.2f" % secs,
                          "-" if ho is None or ho < 0 else "%.4g" % ho,
                          str(st.get("termination", ""))]
            print("\t".join(cells))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
