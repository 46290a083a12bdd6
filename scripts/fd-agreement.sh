#!/usr/bin/env bash
# Finite differences against odeSD direct sensitivities on every PEtab model in ../shared/petab
# (issue 16): for each model, dy/dp for all parameters of the SBML file (global, local, species
# initial values, compartment sizes) at 11 times over [0, the last finite measurement time], by
#   sensode sensitivities --method fd                      (simulations at rtol 1e-12)
#   sensode sensitivities --method odesd --rtol 1e-10 --atol 1e-14
# and the worst |fd − odesd| scaled by each output's largest |dy/dp| (over times and
# parameters). Models the CLI refuses are listed with its reason; a model with an output that has
# no value at t = 0 (Laske) uses the 10 later times.
# Usage: scripts/fd-agreement.sh [BUILD_DIR] [PROBLEM ...]   (default build, every problem)
# SENSODE_FD_TIMEOUT (seconds per run, default 1800) bounds the large models. SENSODE_FD_ARGS and
# SENSODE_ODESD_ARGS set options of the two runs (e.g. "--rtol 1e-14 --atol 1e-20" for FD runs at
# tighter tolerances; "--rtol 1e-12 --atol 1e-16" for odeSD instead of its default 1e-10, 1e-14).
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
shift || true
cli="$build/core/sensode"
petab="$here/../shared/petab"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
problems=("$@")
if [ ${#problems[@]} -eq 0 ]; then
  for d in "$petab"/*/; do problems+=("$(basename "$d")"); done
fi
printf "%-36s %6s %6s %12s  %s\n" problem params outputs worst "(output, parameter, time)"
for p in "${problems[@]}"; do
  model="$petab/$p/model_$p.xml"
  [ -f "$model" ] || model="$(ls "$petab/$p"/*.xml 2> /dev/null | head -n 1)"
  [ -n "$model" ] && [ -f "$model" ] || continue
  tEnd=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "time") c = i; next }
                     FNR == 1 { next }
                     $c != "inf" && $c + 0 > m { m = $c + 0 } END { print (m > 0 ? m : 10) }' \
         $(ls "$petab/$p"/measurementData*.tsv "$petab/$p"/measurements.tsv 2> /dev/null) |
         tail -n 1)
  common=(sensitivities "$model" --t-end "$tEnd" --points 11)
  limit="${SENSODE_FD_TIMEOUT:-1800}"
  # An output with no value at t = 0 (Laske's F_rnp_nuc = 0/0) is refused: the 10 later times.
  if "$cli" simulate "$model" --t-end "$tEnd" --points 11 --out "$work/sim.csv" 2>&1 > /dev/null |
       grep -q "has no value at t = 0"; then
    common=(sensitivities "$model" --times "$(awk -v e="$tEnd" 'BEGIN {
      for (i = 1; i <= 10; ++i) printf "%s%.17g", (i > 1 ? "," : ""), e * i / 10 }')")
  fi
  if ! timeout "$limit" "$cli" "${common[@]}" --method fd ${SENSODE_FD_ARGS:-} --out "$work/fd.csv" > /dev/null 2> "$work/err"; then
    printf "%-36s fd failed or over %ss: %s\n" "$p" "$limit" "$(head -c 300 "$work/err" | tr '\n' ' ')"
    continue
  fi
  if ! timeout "$limit" "$cli" "${common[@]}" --method odesd \
         ${SENSODE_ODESD_ARGS:---rtol 1e-10 --atol 1e-14} --out "$work/sd.csv" > /dev/null 2> "$work/err"; then
    printf "%-36s odesd failed: %s\n" "$p" "$(head -c 300 "$work/err" | tr '\n' ' ')"
    continue
  fi
  awk -F, -v name="$p" '
    FNR == 1 { file++; next }
    file == 1 { fd[$1 "," $2 "," $3] = $4; next }
    {
      key = $1 "," $2 "," $3; v = $4 + 0; d = fd[key] - v; if (d < 0) d = -d
      a = v < 0 ? -v : v
      if (a > scale[$2]) scale[$2] = a
      if (d > diff[$2]) { diff[$2] = d; where[$2] = $3 ", t = " $1 }
      params[$3] = 1
    }
    END {
      worst = 0; at = ""; n = 0
      for (o in diff) {
        n++
        e = scale[o] > 0 ? diff[o] / scale[o] : (diff[o] > 0 ? 1e300 : 0)
        if (e > worst || at == "") { worst = e; at = o ", " where[o] }
      }
      np = 0; for (q in params) np++
      printf "%-36s %6d %6d %12.3g  (%s)\n", name, np, n, worst, at
    }' "$work/fd.csv" "$work/sd.csv"
done
