#!/usr/bin/env bash
# `retval retain --compress zstd` of a generated log against `zstd -3 -T0`
# writing the same log, in pairs: one run of each, back to back, the order
# alternating from pair to pair, both writing to the same file system,
# with `sync` before each. Prints every pair and the median of the pairs'
# ratios (retval's time over zstd's; the goal is at most 1.3), for the
# elapsed time and for the CPU time (user + system), and each side's
# compressed size and peak RSS. On a loaded machine the CPU ratio moves
# less than the elapsed one; on an idle one the two agree when both keep
# every core busy.
#
#   bench/zstd.sh [SIZE_BYTES [PAIRS]]    default 1 GiB, 7 pairs
#
# Needs go, zstd and GNU time (/usr/bin/time). BENCH_WORK=DIR keeps the
# generated log there (reused when present).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1073741824}
pairs=${2:-7}
work=${BENCH_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/retval-zstd.XXXXXX")}
[[ -n ${BENCH_WORK:-} ]] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
go build -o "$work/retval" .
log=$work/big.log
[[ -s $log && $(stat -c %s "$log") == "$size" ]] || go run bench/gen.go log "$size" > "$log"
echo "$(nproc) cores, $(uptime | sed 's/.*load/load/'), $(zstd --version | head -n 1)"
echo "data: $(stat -c %s "$log") bytes, $(wc -l < "$log") lines"

# one NAME CMD...: run CMD once after a sync; append "NAME elapsed cpu rss".
one() {
  local name=$1; shift
  sync
  /usr/bin/time -f '%e %U %S %M' -o "$work/time.one" "$@" > /dev/null
  read -r e u s m < <(tail -n 1 "$work/time.one")
  echo "$name $e $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $m" >> "$work/times"
}
retval_run() {
  rm -rf "$work/rt"
  one retval "$work/retval" retain --runs-dir "$work/rt" --run b --call c --compress zstd \
    --threshold 0 --max-value-size 0 --max-run-bytes 0 --max-run-values 0 "$log"
}
zstd_run() {
  rm -f "$work/z.zst"
  one zstd zstd -q -3 -T0 -f "$log" -o "$work/z.zst"
}

: > "$work/times"
retval_run; zstd_run  # warm-up, not counted
: > "$work/times"
for ((i = 0; i < pairs; i++)); do
  if ((i % 2 == 0)); then retval_run; zstd_run; else zstd_run; retval_run; fi
done

echo "compressed: retval $(find "$work/rt" -name c.txt.zst -exec stat -c %s {} +) bytes, zstd -3 $(stat -c %s "$work/z.zst") bytes"
awk -v size="$size" '
  $1 == "retval" { re[++r] = $2; rc[r] = $3; rm[r] = $4 }
  $1 == "zstd"   { ze[++z] = $2; zc[z] = $3; zm[z] = $4 }
  function median(a, n,   i, j, t, b) {
    for (i = 1; i <= n; i++) b[i] = a[i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
    return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
  }
  END {
    printf "%-5s %10s %10s %8s %10s %10s %8s\n", "pair", "retval s", "zstd s", "ratio", "retval cpu", "zstd cpu", "ratio"
    for (i = 1; i <= r; i++) {
      er[i] = re[i] / ze[i]; cr[i] = rc[i] / zc[i]
      printf "%-5d %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f\n", i, re[i], ze[i], er[i], rc[i], zc[i], cr[i]
    }
    printf "median elapsed: retval %.2f s (%.0f MB/s), zstd -3 -T0 %.2f s (%.0f MB/s)\n", median(re, r), size / median(re, r) / 1e6, median(ze, z), size / median(ze, z) / 1e6
    printf "peak RSS: retval %.1f MiB, zstd %.1f MiB (medians)\n", median(rm, r) / 1024, median(zm, z) / 1024
    printf "ratio (retval / zstd -3 -T0), median of %d pairs: elapsed %.2f, cpu %.2f (goal: at most 1.3)\n", r, median(er, r), median(cr, r)
  }' "$work/times"
