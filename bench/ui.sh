#!/usr/bin/env bash
# Measures retval ui against its goals (issue 35) through the real command
# and real HTTP requests, and the server's memory:
#   - the first page of runs of a store of 10,000 runs, from a server that
#     has just started (its scan of the store still under way): ≤ 100 ms;
#   - a page of the viewer (200 lines) anywhere in a 1 GiB value: ≤ 50 ms;
#   - the server's peak memory (VmHWM) after its scan of the store and
#     after browsing the value page by page: < 64 MiB.
# It prints a Markdown table for docs/BENCHMARKS.md.
#
#   bench/ui.sh [SIZE_MIB [RUNS]]    (defaults 1024 and 10000)
#
# Needs go, curl, jq and awk. Works in a temporary directory, removed at the
# end (KEEP=1 keeps it; WORK=DIR reuses one, with its data).
set -euo pipefail

size_mib=${1:-1024}
runs=${2:-10000}
pages=${PAGES:-50}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ui-bench.XXXXXX")}
if [[ -z ${WORK:-} && ${KEEP:-0} != 1 ]]; then trap 'rm -rf "$work"' EXIT; fi
rv=$work/retval
(cd "$root" && go build -o "$rv" .)
store=$work/runs

if [[ ! -d $store/big.values ]]; then
  rm -rf "$store"
  (cd "$root" && go run bench/gen.go store "$store" "$runs" 3)
  (cd "$root" && go run bench/gen.go log $((size_mib << 20))) |
    "$rv" retain --runs-dir "$store" --run big --call log --threshold 0 --max-value-size 0 --max-run-bytes 0 > /dev/null
fi
lines=$("$rv" catalogue --runs-dir "$store" --run big --json | jq '.values[0].lines')
echo "store: $(($(find "$store" -maxdepth 1 -name '*.values' | wc -l))) runs; value: $((size_mib)) MiB, $lines lines" >&2

pid=
# start_ui starts retval ui on the store; sets pid, base and auth.
start_ui() {
  rm -f "$work/url"
  mkfifo "$work/url"
  "$rv" ui --runs-dir "$store" > "$work/url" 2> "$work/ui.err" &
  pid=$!
  local url token
  read -r url < "$work/url" || { cat "$work/ui.err" >&2; exit 1; }
  token=${url##*token=}
  base=${url%%/\?token=*}
  auth="Authorization: Bearer $token"
}
stop_ui() { kill -INT "$pid"; wait "$pid" || true; }
# timed PATH prints the seconds one request took.
timed() { curl -sf -o /dev/null -H "$auth" -w '%{time_total}\n' "$base$1"; }
# stats FILE prints "median (min–max)" in ms of the seconds in FILE.
stats() {
  sort -n "$1" | awk '{v[NR] = $1 * 1000} END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.1f ms (%.1f–%.1f ms, %d requests)", m, v[1], v[NR], NR }'
}
hwm() { awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"; }

# 1. The first page of runs, each from a server just started.
: > "$work/first.txt"
for _ in $(seq "${FIRST_RUNS:-20}"); do
  start_ui
  timed "/api/runs?limit=50&sort=activity&desc=1" >> "$work/first.txt"
  stop_ui
done

# 2. The same page once the store is scanned, and the scan's memory.
start_ui
curl -sf -o /dev/null -H "$auth" "$base/api/runs?wait=1"
scan_hwm=$(hwm)
: > "$work/sorted.txt"
for i in $(seq 20); do timed "/api/runs?limit=50&sort=activity&desc=1&offset=$((i * 50))" >> "$work/sorted.txt"; done

# 3. Pages of the value from anywhere, then its first and last page, and
# the value's page itself (stub and read log).
: > "$work/pages.txt"
for i in $(seq "$pages"); do
  first=$((1 + (i * 7919981) % (lines - 199)))
  timed "/api/runs/big/values/log/lines?count=200&first=$first" >> "$work/pages.txt"
done
timed "/api/runs/big/values/log/lines?count=200&first=1" >> "$work/pages.txt"
timed "/api/runs/big/values/log/lines?count=200&first=$((lines - 199))" >> "$work/pages.txt"
value_page=$(timed "/api/runs/big/values/log")
browse_hwm=$(hwm)
stop_ui

cat <<EOF
## retval ui (\`bench/ui.sh\`)

$(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3); a store of $runs runs and a
$size_mib MiB value of $lines lines; \`curl\` time_total of each request on loopback.

| what | goal | measured |
|---|---|---|
| first page of runs (50 of $runs), fresh server | ≤ 100 ms | $(stats "$work/first.txt") |
| a page of runs once scanned, sorted by activity | | $(stats "$work/sorted.txt") |
| 200 lines anywhere in the $size_mib MiB value | ≤ 50 ms | $(stats "$work/pages.txt") |
| the value's page (stub, reads) | | $(awk '{printf "%.1f ms", $1 * 1000}' <<<"$value_page") |
| server memory after scanning the store (VmHWM) | < 64 MiB | $scan_hwm |
| server memory after browsing the value (VmHWM) | < 64 MiB | $browse_hwm |
EOF
