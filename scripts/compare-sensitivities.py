#!/usr/bin/env python3
"""Worst difference of `sensode sensitivities` CSVs from a reference CSV, per column (output y,
parameter p) on the scale

    max( max_t |R(t, y, p)| ,  floor · max_t |y(t)| / |p| )

where R is the reference and y the output's own values (a `sensode simulate` CSV at the same
times). The second term is the natural size of dy/dp: a column whose reference stays below
`floor` (default 1e-6) of it is 0 up to integration noise — kinetic laws that carry a
compartment as a factor make every species concentration independent of its size — and there
every method returns noise of about rtol·|y|/|p|, which the column's own maximum would turn into
"disagreements" of order 1 (docs/benchmarks/performance.md §17; docs/charts.md uses the same
idea with the other parameters' responses as the floor).

    scripts/compare-sensitivities.py --reference ref.csv --values sim.csv \\
        --param cytosol=2.27e-12 --param nucleus=1e-12 odesd.csv cvodes.csv

Prints per candidate the worst scaled difference over all columns and over the columns above the
floor, with where it is.
"""
import argparse
import collections
import csv
import math


def read_rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.reader(f))
    except OSError as e:
        raise SystemExit(f"compare-sensitivities: {path}: {e.strerror}")


def sensitivities(path):
    """time,variable,parameter,value rows of `sensode sensitivities --out`."""
    rows = read_rows(path)
    if not rows or rows[0] != ["time", "variable", "parameter", "value"]:
        raise SystemExit(f"compare-sensitivities: {path}: header is not time,variable,parameter,"
                         "value (a `sensode sensitivities --out` CSV)")
    table = {}
    for line, r in enumerate(rows[1:], start=2):
        try:
            table[(r[0], r[1], r[2])] = float(r[3])
        except (IndexError, ValueError):
            raise SystemExit(f"compare-sensitivities: {path}, line {line}: expected "
                             "time,variable,parameter,value (a `sensode sensitivities` CSV)")
    return table


def value_maxima(path):
    """max |y| per output column of a `sensode simulate` CSV."""
    rows = read_rows(path)
    if not rows:
        raise SystemExit(f"compare-sensitivities: {path}: empty")
    header, maxima = rows[0], collections.defaultdict(float)
    for line, r in enumerate(rows[1:], start=2):
        for name, v in zip(header[1:], r[1:]):
            try:
                value = float(v)
            except ValueError:
                raise SystemExit(f"compare-sensitivities: {path}, line {line}, column {name}: "
                                 f"{v!r} is not a number")
            if math.isfinite(value):
                maxima[name] = max(maxima[name], abs(value))
    return maxima


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", required=True)
    ap.add_argument("--values", required=True, help="`sensode simulate` CSV of the outputs")
    ap.add_argument("--param", action="append", default=[], metavar="ID=VALUE",
                    help="nominal value of a parameter (repeat; required for each in the CSVs)")
    ap.add_argument("--floor", type=float, default=1e-6)
    ap.add_argument("candidates", nargs="+")
    a = ap.parse_args()
    nominal = {}
    for p in a.param:
        key, sep, value = p.partition("=")
        try:
            nominal[key] = abs(float(value))
        except ValueError:
            sep = ""
        if not sep:
            raise SystemExit(f"compare-sensitivities: --param {p!r}: expected ID=VALUE")
    ref, ymax = sensitivities(a.reference), value_maxima(a.values)
    column_max = collections.defaultdict(float)
    for (_, y, p), v in ref.items():
        if math.isfinite(v):
            column_max[(y, p)] = max(column_max[(y, p)], abs(v))
    scale, above = {}, set()
    for (y, p), cmax in column_max.items():
        if p not in nominal:
            raise SystemExit(f"compare-sensitivities: no --param {p}=VALUE for the parameter "
                             f"{p} of {a.reference}")
        if y not in ymax:
            raise SystemExit(f"compare-sensitivities: {a.values} has no column {y}")
        natural = ymax[y] / nominal[p] if nominal[p] > 0 else 0.0
        scale[(y, p)] = max(cmax, a.floor * natural)
        if cmax > a.floor * natural:
            above.add((y, p))
    print(f"{len(above)} of {len(scale)} columns above the floor {a.floor:g}")
    for path in a.candidates:
        got = sensitivities(path)
        worst = {"all": (0.0, None), "above": (0.0, None)}
        for key, r in ref.items():
            column = key[1:]
            if key not in got or not math.isfinite(r) or scale.get(column, 0) == 0:
                continue
            d = abs(got[key] - r) / scale[column]
            if d > worst["all"][0]:
                worst["all"] = (d, key)
            if column in above and d > worst["above"][0]:
                worst["above"] = (d, key)
        print(f"{path}: all columns {worst['all'][0]:.2e} {worst['all'][1]}; "
              f"above the floor {worst['above'][0]:.2e} {worst['above'][1]}")


if __name__ == "__main__":
    main()
