#!/usr/bin/env bash
# Regenerates docs/screenshots: every task's result tabs, each with its tab in front, at
# 1280x800 and at the window's default size (1400x880), on curated BioModels models and PEtab
# problems from ../shared that no GUI test is written around. The application takes them itself,
# offscreen, with stored settings ignored (--fresh): sensode-gui --open --run --settings
# --screenshot --every-tab --size. Needs a build (scripts/build.sh) and ../shared.
# Usage: scripts/screenshots.sh [BUILD_DIR]   (about two minutes on two busy cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
gui="$build/gui/sensode-gui"
shared="${SENSODE_SHARED_DIR:-$root/../shared}"
out="$root/docs/screenshots"
[ -x "$gui" ] || { echo "screenshots.sh: $gui not built (scripts/build.sh)" >&2; exit 1; }
[ -d "$shared/biomodels" ] || { echo "screenshots.sh: $shared/biomodels not found" >&2; exit 1; }
export QT_QPA_PLATFORM=offscreen

# name | file | task | settings (JSON; other keys keep the task's defaults)
shots=(
  "timecourse|$shared/biomodels/BIOMD0000000016.xml|timecourse|{\"t_end\": 100}"
  "sensitivities|$shared/biomodels/BIOMD0000000026.xml|sensitivities|{\"t_end\": 100}"
  "ssgradient-zheng|$shared/petab/Zheng_PNAS2012/Zheng_PNAS2012.yaml|ssgradient|{}"
  "ssgradient-fujita|$shared/petab/Fujita_SciSignal2010/Fujita_SciSignal2010.yaml|ssgradient|{}"
  "estimation-bruno|$shared/petab/Bruno_JExpBot2016/Bruno_JExpBot2016.yaml|estimation|{\"seed\": 1, \"profile\": [\"init_b10_1\"]}"
)
sizes=("1280x800" "default")

start=$SECONDS
failed=()
for size in "${sizes[@]}"; do
  mkdir -p "$out/$size"
  rm -f "$out/$size"/*.png
  for shot in "${shots[@]}"; do
    IFS='|' read -r name file task settings <<<"$shot"
    size_flag=()
    [ "$size" != default ] && size_flag=(--size "$size")
    if ! log=$("$gui" --fresh "${size_flag[@]}" --open "$file" --run "$task" \
          --settings "$settings" --screenshot "$out/$size/$name.png" --every-tab 2>&1); then
      failed+=("$size/$name")
    fi
    grep -v -e propagateSizeHints -e XDG_RUNTIME_DIR <<<"$log" || true
  done
done
echo "screenshots.sh: $(ls "$out"/*/*.png | wc -l) screenshots in $((SECONDS - start)) s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "screenshots.sh: failed: ${failed[*]}" >&2
  exit 1
fi
