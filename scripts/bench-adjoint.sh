#!/usr/bin/env bash
# The adjoint gradient's cost against the objective's (and against forward sensitivities by CVODES
# and by odeSD) on big PEtab problems, e.g. those of scripts/make-network-problem.py, one process
# per run as users run `sensode gradient`.
#
#   scripts/bench-adjoint.sh [--repeats 3] [--warm-cache] [--sensode PATH] [--timeout SECONDS]
#                            [--methods none,adjoint,forward,odesd] PROBLEM.yaml...
#
# For each problem and repeat, runs `sensode gradient PROBLEM.yaml --stats FILE.json --out G.csv`
# with --method none, --method adjoint, --method forward and --method forward
# --forward-integrator odesd (in that order, so a drift of the machine's load spreads over all
# four). Times are the JSON's evaluation_seconds (objective and gradient, loading excluded);
# medians over the repeats. Each process gets a fresh, empty SENSODE_CACHE_DIR, so every run pays
# the native compilation as a first run does; with --warm-cache all share one temporary cache: a
# first, discarded run per problem and method fills it, its cc -O2 compile finishes (the job that
# outlives a short run, docs/native-cache.md) and a second discarded run adopts the object, so the
# measured runs execute cc -O2's code, as a user's later runs of the model do. --methods runs a
# subset (e.g. none,adjoint for Lang, whose forward runs take minutes). "paired" is the median and
# interquartile range of adjoint_r / objective_r over the repeats r (each pair run back to back,
# so a drift of the machine's load cancels), beside the ratio of the two medians. The gradient error column is
# max|g_adjoint − g_forward| / max|g_forward| (CVODES forward, first repeat). A run that fails or
# exceeds --timeout shows as "fail"/"timeout". A second table gives the processes' wall_seconds
# (load included) and the native tier the runs used.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sensode="$root/build/core/sensode"
repeats=3
warm=0
timeout_s=0
methods=(none adjoint forward odesd)
problems=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --warm-cache) warm=1; shift ;;
    --sensode) sensode="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --methods) IFS=, read -r -a methods <<< "$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-adjoint.sh: unknown option $1" >&2; exit 2 ;;
    *) problems+=("$(realpath "$1")"); shift ;;
  esac
done
[ ${#problems[@]} -gt 0 ] || { echo "usage: bench-adjoint.sh [--repeats N] PROBLEM.yaml..." >&2; exit 2; }
[ -x "$sensode" ] || { echo "bench-adjoint.sh: no sensode at $sensode" >&2; exit 2; }
for m in "${methods[@]}"; do
  case "$m" in none|adjoint|forward|odesd) ;; *) echo "bench-adjoint.sh: unknown method $m" >&2; exit 2 ;; esac
done

work="$(mktemp -d /tmp/bench-adjoint.XXXXXX)"
trap 'rm -rf "$work"' EXIT
method_args() {
  case "$1" in
    none|adjoint|forward) echo "--method $1" ;;
    odesd) echo "--method forward --forward-integrator odesd" ;;
  esac
}

# run PROBLEM_INDEX METHOD TAG: one process; its stats and gradient go to $work/<i>/<method>.<tag>.*
run() {
  local i="$1" m="$2" tag="$3" cache status=0
  local base="$work/$i/$m.$tag"
  if [ "$warm" = 1 ]; then cache="$work/cache"; else cache="$(mktemp -d "$work/cache.XXXXXX")"; fi
  local cmd=("$sensode" gradient "${problems[$i]}" $(method_args "$m") --stats "$base.json" --out "$base.csv")
  [ "$timeout_s" != 0 ] && cmd=(timeout "$timeout_s" "${cmd[@]}")
  # SENSODE_NATIVE_DETACH=0: a run's unfinished cc -O2 compile ends with it instead of going on
  # beside the next measured run (docs/native-cache.md).
  SENSODE_CACHE_DIR="$cache" SENSODE_NATIVE_DETACH="${detach:-0}" "${cmd[@]}" >"$base.log" 2>&1 || status=$?
  echo "$status" >"$base.status"
  [ "$warm" = 1 ] || rm -rf "$cache"
  echo "  ${problems[$i]##*/} $m #$tag: exit $status$( [ -f "$base.json" ] &&
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(", %.2f s (wall %.2f s)" % (s.get("evaluation_seconds", float("nan")), s.get("wall_seconds", float("nan"))))' "$base.json")" >&2
}

# settle: wait (at most 30 min) until no compile job holds a lock in the shared cache.
settle() {
  local waited=0
  while compgen -G "$work/cache/*.compiling" >/dev/null && [ "$waited" -lt 1800 ]; do
    sleep 1; waited=$((waited + 1))
  done
}

echo "bench-adjoint: $sensode, $repeats repeats, $([ "$warm" = 1 ] && echo "warm shared cache" || echo "fresh cache per process"); $(uptime)" >&2
for i in "${!problems[@]}"; do
  mkdir -p "$work/$i"
  if [ "$warm" = 1 ]; then
    mkdir -p "$work/cache"
    for m in "${methods[@]}"; do detach=1 run "$i" "$m" warmup; settle; done
    for m in "${methods[@]}"; do run "$i" "$m" adopt; done
  fi
  for r in $(seq 1 "$repeats"); do
    for m in "${methods[@]}"; do run "$i" "$m" "$r"; done
  done
done
echo "load after the runs: $(uptime)" >&2

python3 - "$work" "$repeats" "$(IFS=,; echo "${methods[*]}")" "${problems[@]}" <<'EOF'
import csv, json, math, os, statistics, sys

work, repeats, problems = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
ALL_METHODS = ["none", "adjoint", "forward", "odesd"]
methods = sys.argv[3].split(",")


def load(i, m, r):
    base = os.path.join(work, str(i), f"{m}.{r}")
    status = int(open(base + ".status").read().strip() or 1)
    if status != 0 or not os.path.exists(base + ".json"):
        return "timeout" if status == 124 else "fail"
    with open(base + ".json") as f:
        return json.load(f)


def gradient(i, m):
    if m not in methods:
        return None
    for r in range(1, repeats + 1):
        path = os.path.join(work, str(i), f"{m}.{r}.csv")
        if isinstance(load(i, m, r), dict) and os.path.exists(path):
            with open(path, newline="") as f:
                return {row["parameterId"]: float(row["gradient"]) for row in csv.DictReader(f)}
    return None


def median(runs, key):
    ok = [s[key] for s in runs if isinstance(s, dict) and key in s]
    if not ok:
        bad = [s for s in runs if not isinstance(s, dict)]
        return bad[0] if bad else "n/a"
    return statistics.median(ok)


def fmt(v, spec="%.2f"):
    return spec % v if isinstance(v, float) and math.isfinite(v) else str(v)


def ratio(a, b):
    return fmt(a / b, "%.1f") if isinstance(a, float) and isinstance(b, float) and b > 0 else "–"


def paired(runs, m):
    """Median (interquartile range) of the per-repeat ratios m / objective."""
    r = sorted(a["evaluation_seconds"] / o["evaluation_seconds"]
               for a, o in zip(runs[m], runs["none"])
               if isinstance(a, dict) and isinstance(o, dict) and o.get("evaluation_seconds", 0) > 0)
    if not r:
        return "–"
    quartile = lambda q: r[min(len(r) - 1, int(q * len(r)))]
    return "%.2f (%.2f–%.2f)" % (statistics.median(r), quartile(0.25), quartile(0.75))


rows, walls = [], []
for i, problem in enumerate(problems):
    # Methods not run (--methods) show as "–".
    runs = {m: [load(i, m, r) for r in range(1, repeats + 1)] if m in methods else []
            for m in ALL_METHODS}
    first = next((s for m in methods for s in runs[m] if isinstance(s, dict)), {})
    ev = {m: median(runs[m], "evaluation_seconds") if m in methods else "–" for m in ALL_METHODS}
    wall = {m: median(runs[m], "wall_seconds") if m in methods else "–" for m in ALL_METHODS}
    ga, gf = gradient(i, "adjoint"), gradient(i, "forward")
    err = "–"
    if ga and gf and ga.keys() == gf.keys():
        scale = max(abs(v) for v in gf.values())
        err = "%.1e" % (max(abs(ga[k] - gf[k]) for k in gf) / scale) if scale > 0 else "–"
    # The method the runs really used (sensode may fall back), when not the one asked for.
    used = {m: {s.get("method") for s in runs[m] if isinstance(s, dict)} for m in ALL_METHODS}
    notes = [f"{m}→{'/'.join(sorted(map(str, u)))}" for m, u in used.items()
             if u and u != {"forward" if m == "odesd" else m}]
    name = os.path.relpath(problem, "/tmp") if problem.startswith("/tmp/") else problem
    rows.append([name, str(first.get("n_states", "?")), str(first.get("n_parameters", "?")),
                 fmt(ev["none"], "%.3f"), fmt(ev["adjoint"], "%.3f"), ratio(ev["adjoint"], ev["none"]),
                 paired(runs, "adjoint"),
                 fmt(ev["forward"]), ratio(ev["forward"], ev["none"]), fmt(ev["odesd"]), err])
    tiers = sorted({f"{s.get('native_tier')}/{s.get('native_cache')}" for m in methods
                    for s in runs[m] if isinstance(s, dict)})
    walls.append([name] + [fmt(wall[m]) for m in ALL_METHODS] + [", ".join(tiers)] +
                 ["; ".join(notes) or "–"])


def table(header, body):
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in body:
        print("| " + " | ".join(row) + " |")


print(f"Medians over {repeats} repeats; seconds are evaluation_seconds (objective and gradient, "
      "load excluded).\n")
table(["problem", "nx", "θ", "objective s", "adjoint s", "adjoint/objective",
       "adjoint/objective paired", "forward s",
       "forward/objective", "odeSD forward s", "max abs(adjoint−forward) / max abs(forward)"], rows)
print("\nProcess wall_seconds (load included), medians; native tier/cache of the runs.\n")
table(["problem", "objective", "adjoint", "forward", "odeSD forward", "native", "fallbacks"],
      walls)
EOF
