#!/usr/bin/env bash
# bench/inittrace.sh — what retval's package initialisers cost before main
# runs, from the Go runtime's own trace (GODEBUG=inittrace=1), for a small
# peek and for --version, built as a release is (CGO_ENABLED=0 -trimpath).
#
# The allocations and the list of packages are exact (the same on every
# run); the times are medians of RUNS runs, and only as quiet as the
# machine. Prints, for each command: the packages whose init runs, their
# total allocations, the median of the total init time, and the TOP
# costliest packages by median time with their allocations.
#
# Usage: bench/inittrace.sh [BINARY]   (from the repository root; RUNS=50, TOP=15)
set -euo pipefail
runs=${RUNS:-50}
top=${TOP:-15}
w=$(mktemp -d "${TMPDIR:-/tmp}/retval-inittrace.XXXXXX")
trap 'rm -rf "$w"' EXIT
bin=${1:-}
if [[ -z $bin ]]; then
  CGO_ENABLED=0 go build -trimpath -o "$w/retval" .
  bin=$w/retval
fi
export RETVAL_RUNS_DIR=$w/runs XDG_CONFIG_HOME=$w/config
seq 1 10 > "$w/small.txt"
"$bin" retain --run b --call small --threshold 0 "$w/small.txt" > /dev/null

trace() { # trace NAME ARGS...: the init lines of RUNS runs, each prefixed by its run number
  local name=$1
  shift
  for i in $(seq 1 "$runs"); do
    GODEBUG=inittrace=1 "$bin" "$@" 2>&1 > /dev/null | grep '^init ' | sed "s/^/$i /"
  done > "$w/$name.trace"
}
# A line reads: RUN init PACKAGE @T ms, D ms clock, B bytes, A allocs
report() {
  local name=$1 t=$w/$1.trace
  awk -v r=1 '$1 == r' "$t" | awk -v name="$name" '{ n++; b += $9; a += $11 }
    END { printf "%s: %d packages run an init; %d allocations, %d bytes in all\n", name, n, a, b }'
  awk '{ s[$1] += $6 } END { for (r in s) print s[r] }' "$t" | sort -n |
    awk '{ v[NR] = $1 } END { printf "  total init time: median %.2f ms of %d runs (fastest %.2f ms)\n", v[int((NR + 1) / 2)], NR, v[1] }'
  echo "  | package | median | allocs | bytes |"
  echo "  |---|---|---|---|"
  sort -k3,3 -k6,6n "$t" | awk '{ k = $3; n[k]++; v[k, n[k]] = $6; b[k] = $9; a[k] = $11 }
    END { for (k in n) printf "%.3f %s %d %d\n", v[k, int((n[k] + 1) / 2)], k, a[k], b[k] }' |
    sort -k1,1nr | head -n "$top" | awk '{ printf "  | %s | %.3f ms | %d | %d |\n", $2, $1, $3, $4 }'
}
trace "retval --version" --version
trace "retval peek (small value)" peek --run b small --lines 1-10
report "retval --version"
report "retval peek (small value)"
