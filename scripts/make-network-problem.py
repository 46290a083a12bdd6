#!/usr/bin/env python3
"""A reproducible PEtab v1 benchmark problem around a generated mass-action network.

  scripts/make-network-problem.py OUT_DIR [--species 500] [--estimated 100] [--observables 20]
      [--times 1,2,5,10,20,50] [--noise 0.05] [--seed 1] [--network-seed S]
      [--sensode PATH] [--writer PATH]

Writes into OUT_DIR:
  model.xml         the network of tests/bench/network_generator.h, by write_network_problem
                    (species S0..S{n-1}, rate constants kf_<r>/kr_<r>; pure function of
                    --species and --network-seed)
  parameters.tsv    the first --estimated rate constants in document order, log10 scale, bounds
                    nominal/100..nominal*100, nominal = the SBML value. The other parameters are
                    left to the SBML (Sensode's loader does not need them listed).
  conditions.tsv    one condition c0 without overrides
  observables.tsv   obs_<S> = species S, normal noise, sigma from the measurement table
  measurements.tsv  the model at the nominal parameters times (1 + noise·N(0,1)), --seed fixed,
                    with noiseParameters = noise · (noise-free value): sigma equals the noise that
                    was added, so at the nominal parameters the weighted residual sum of squares
                    is about the number of measurements (halfWeightedSquares ≈ measurements / 2).
  problem.yaml      format_version 1, like the shared problems' YAML files

Observables are the first --observables species whose noise-free value is at least --min-level
at every time point: species that decay to ~0 would make proportional noise (and sigma) vanish.
The data come from `sensode simulate` at the gradient's default tolerances (rtol 1e-10, atol
1e-12), so the objective at the nominal parameters measures the added noise, not solver error.
"""
import argparse
import csv
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("out_dir")
p.add_argument("--species", type=int, default=500)
p.add_argument("--estimated", type=int, default=100)
p.add_argument("--observables", type=int, default=20)
p.add_argument("--times", default="1,2,5,10,20,50")
p.add_argument("--noise", type=float, default=0.05, help="relative measurement noise")
p.add_argument("--seed", type=int, default=1, help="seed of the measurement noise")
p.add_argument("--network-seed", type=int, default=None,
               help="seed of the network (default: the generator's)")
p.add_argument("--min-level", type=float, default=0.05,
               help="smallest noise-free value an observed species may take (default 0.05)")
p.add_argument("--sensode", default=os.path.join(root, "build/core/sensode"))
p.add_argument("--writer", default=os.path.join(root, "build/tests/bench/write_network_problem"))
a = p.parse_args()

times = [float(t) for t in a.times.split(",")]
if not times or any(t < 0 for t in times) or times != sorted(set(times)):
    sys.exit("--times: ascending, distinct, non-negative")
out = os.path.abspath(a.out_dir)
os.makedirs(out, exist_ok=True)
model = os.path.join(out, "model.xml")


def run(args):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}):\n{r.stderr}{r.stdout}")
    return r.stdout


# 1. The SBML.
writer = [a.writer, out, "--species", str(a.species)]
if a.network_seed is not None:
    writer += ["--seed", str(a.network_seed)]
print(run(writer).strip())

# 2. The estimated parameters: the first rate constants in document order (kf_0, kf_1, ..., with
# kr_<r> right after kf_<r> for a reversible reaction).
ns = {"s": "http://www.sbml.org/sbml/level3/version2/core"}
rates = [(e.get("id"), float(e.get("value")))
         for e in ET.parse(model).getroot().iterfind(".//s:listOfParameters/s:parameter", ns)
         if re.fullmatch(r"k[fr]_\d+", e.get("id", ""))]
if len(rates) < a.estimated:
    sys.exit(f"--estimated {a.estimated}: the model has only {len(rates)} rate constants")
estimated = rates[:a.estimated]

# 3. The noise-free data at the nominal parameters (= the SBML's values).
with tempfile.TemporaryDirectory() as tmp:
    sim_csv = os.path.join(tmp, "sim.csv")
    run([a.sensode, "simulate", model, "--times", ",".join(repr(t) for t in times),
         "--rtol", "1e-10", "--atol", "1e-12", "--out", sim_csv])
    with open(sim_csv, newline="") as f:
        rows = list(csv.reader(f))
header, values = rows[0], [[float(v) for v in r] for r in rows[1:]]
if len(values) != len(times) or any(abs(r[0] - t) > 1e-9 * max(1, t) for r, t in zip(values, times)):
    sys.exit("sensode simulate: unexpected output times")
column = {sid: k for k, sid in enumerate(header)}
observed = [f"S{i}" for i in range(a.species)
            if f"S{i}" in column and all(r[column[f"S{i}"]] >= a.min_level for r in values)]
if len(observed) < a.observables:
    sys.exit(f"only {len(observed)} species stay >= {a.min_level} at all times")
observed = observed[:a.observables]


def tsv(name, header, rows):
    with open(os.path.join(out, name), "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def g(x):
    return repr(float(x))


tsv("parameters.tsv",
    ["parameterId", "parameterName", "parameterScale", "lowerBound", "upperBound", "nominalValue",
     "estimate"],
    [[pid, pid, "log10", g(v / 100), g(v * 100), g(v), 1] for pid, v in estimated])
tsv("conditions.tsv", ["conditionId", "conditionName"], [["c0", "nominal"]])
tsv("observables.tsv",
    ["observableId", "observableName", "observableFormula", "noiseFormula",
     "observableTransformation", "noiseDistribution"],
    [[f"obs_{s}", s, s, f"noiseParameter1_obs_{s}", "lin", "normal"] for s in observed])
rng = random.Random(a.seed)
measurements = []
for s in observed:  # observable-major, the order of the shared problems' tables
    for t, r in zip(times, values):
        y = r[column[s]]
        measurements.append([f"obs_{s}", "", "c0", g(y * (1 + a.noise * rng.gauss(0, 1))), g(t),
                             "", g(a.noise * y)])
tsv("measurements.tsv",
    ["observableId", "preequilibrationConditionId", "simulationConditionId", "measurement", "time",
     "observableParameters", "noiseParameters"], measurements)
with open(os.path.join(out, "problem.yaml"), "w") as f:
    f.write("format_version: 1\n"
            "parameter_file: parameters.tsv\n"
            "problems:\n"
            "- condition_files:\n  - conditions.tsv\n"
            "  measurement_files:\n  - measurements.tsv\n"
            "  observable_files:\n  - observables.tsv\n"
            "  sbml_files:\n  - model.xml\n")
print(f"{out}/problem.yaml: {len(estimated)} estimated parameters, {len(observed)} observables "
      f"({observed[0]}..{observed[-1]}), {len(measurements)} measurements at t = {a.times}, "
      f"noise {a.noise}, seed {a.seed}")
