#!/usr/bin/env bash
# Times the README's two commands from a fresh clone on a fresh Debian 12 (issue 30, item 4): a
# pristine `debootstrap bookworm` tree (made once, kept at /srv/deb12-pristine) is copied to a
# scratch root per measurement, the checkout's committed HEAD is cloned into it as /work/main
# and ../shared copied beside it as /work/shared, /proc, /sys, /dev and /dev/pts are bound, and
# the command runs in a chroot as root with a clean environment (no ccache contents, no SUNDIALS,
# no build/). Nothing outside /srv is touched.
#
#   sudo scripts/measure-clean-start.sh [example|test|both]   (default: both, one after another)
#
# Each measurement writes its full output and a closing summary (wall time, machine, load before
# and after) to /srv/measure-clean-start/NAME-DATE.log and prints the summary. Idempotent: the
# pristine tree is made only when missing; the scratch roots are wiped before and after use.
# Environment: SENSODE_SHARED_DIR (default: ../shared beside the checkout), MEASURE_ROOT (default
# /srv), MEASURE_MIRROR (default http://deb.debian.org/debian), MEASURE_KEEP=1 keeps the scratch
# root of the last measurement for inspection.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "measure-clean-start: must run as root (debootstrap, chroot and bind mounts)" >&2
  exit 1
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# --one-file-system: never into a bind mount that failed to come off.
wipe() { rm -rf --one-file-system "$1"; }
shared="$(cd "${SENSODE_SHARED_DIR:-$root/../shared}" && pwd)"
base="${MEASURE_ROOT:-/srv}"
pristine="$base/deb12-pristine"
logs="$base/measure-clean-start"
mirror="${MEASURE_MIRROR:-http://deb.debian.org/debian}"
which="${1:-both}"
case "$which" in
  example | test | both) ;;
  *) echo "measure-clean-start: unknown argument '$which' (example, test or both)" >&2; exit 1 ;;
esac
commit="$(git -C "$root" rev-parse HEAD)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "measure-clean-start: note: uncommitted changes in $root are not measured (HEAD $commit is)" >&2
fi

if [ ! -x "$pristine/bin/bash" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
  wipe "$pristine.partial"
  debootstrap bookworm "$pristine.partial" "$mirror"
  mv "$pristine.partial" "$pristine"
fi
mkdir -p "$logs"

scratch=""
unmount_scratch() {
  [ -n "$scratch" ] || return 0
  for m in dev/pts dev sys proc; do
    mountpoint -q "$scratch/$m" && umount -l "$scratch/$m"
  done
  return 0
}
sampler=""
cleanup() {
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  sampler=""
  unmount_scratch
  if [ -n "$scratch" ] && [ "${MEASURE_KEEP:-0}" != 1 ]; then wipe "$scratch"; fi
}
trap cleanup EXIT

# measure NAME COMMAND: one measurement in a fresh copy of the pristine tree.
measure() {
  local name="$1" command="$2"
  cleanup
  scratch="$base/deb12-measure-$name"
  wipe "$scratch"
  cp -a "$pristine" "$scratch"
  cp /etc/resolv.conf "$scratch/etc/resolv.conf"
  mkdir -p "$scratch/work"
  git clone --quiet --no-checkout "$root" "$scratch/work/main"
  git -C "$scratch/work/main" checkout --quiet --detach "$commit"
  cp -a "$shared" "$scratch/work/shared"
  for m in proc sys dev dev/pts; do
    mount --bind "/$m" "$scratch/$m"
  done
  local log
  log="$logs/$name-$(date -u +%Y%m%dT%H%M%SZ).log"
  local before after start end status=0
  before="$(cut -d' ' -f1-3 /proc/loadavg)"
  start="$(date +%s)"
  echo "measure-clean-start: $name: '$command' at $commit in $scratch (log: $log)" >&2
  # The machine may be shared: the 1-minute load average every 30 s, to say what the figure meant.
  (while sleep 30; do cut -d' ' -f1 /proc/loadavg; done) > "$log.load" &
  sampler=$!
  chroot "$scratch" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /work/main && TIMEFORMAT='== CPU: user %U s, system %S s (all processes of the command)' && time { $command; }" \
    > "$log" 2>&1 || status=$?
  end="$(date +%s)"
  after="$(cut -d' ' -f1-3 /proc/loadavg)"
  kill "$sampler" 2>/dev/null || true
  sampler=""
  local load
  load="$(sort -g "$log.load" | awk '{ v[NR] = $1; s += $1 }
    END { if (NR) printf "mean %.1f, median %.1f, max %.1f over %d samples", s / NR, v[int((NR + 1) / 2)], v[NR], NR; else print "no samples" }')"
  local secs=$((end - start))
  {
    echo
    echo "== $name: '$command', exit status $status"
    echo "== wall $((secs / 60)) min $((secs % 60)) s ($secs s), $(date -u +%Y-%m-%dT%H:%MZ), commit $commit"
    grep "^== CPU: " "$log" | tail -n 1
    echo "== machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo); load average before: $before; after: $after; 1-minute load during the run (every 30 s): $load"
  } | tee -a "$log"
  return "$status"
}

result=0
if [ "$which" = example ] || [ "$which" = both ]; then
  measure example "scripts/run-example.sh" || result=1
fi
if [ "$which" = test ] || [ "$which" = both ]; then
  measure test "scripts/test.sh" || result=1
fi
exit "$result"
