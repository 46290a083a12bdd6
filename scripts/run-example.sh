#!/usr/bin/env bash
# The main job: simulate the bundled example model, write its time course as CSV and the
# integrator statistics as JSON into out/, and print a short summary. Installs and builds only
# what the `sensode` CLI needs (scripts/build.sh --cli: no Qt, no GUI, no tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh" --cli >/dev/null
build="${SENSODE_BUILD_DIR:-$root/build}"
mkdir -p "$root/out"
"$build/core/sensode" simulate "$root/resources/models/repressilator.xml" \
  --t-end 300 --points 301 --rtol 1e-8 --atol 1e-12 \
  --out "$root/out/repressilator.csv" --stats "$root/out/repressilator.stats.json"
echo "wrote $root/out/repressilator.csv and $root/out/repressilator.stats.json"
