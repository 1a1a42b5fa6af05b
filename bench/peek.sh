#!/usr/bin/env bash
# Measures retval peek against the tools a person would use instead (sed,
# tail | head, grep) on a large deterministic log, side by side in one
# hyperfine run each, and peak memory with /usr/bin/time -v.
#
#   bench/peek.sh [SIZE_MIB]      (default 1024: a 1 GiB log)
#
# LOG=FILE uses an existing log instead of generating one.
#
# Needs: go, hyperfine, awk, GNU time. Writes everything under a temporary
# directory and removes it at the end (keep it with KEEP=1).
set -euo pipefail

size_mib=${1:-1024}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/peek-bench.XXXXXX")
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi
export RETVAL_RUNS_DIR="$work/runs"
rv="$work/retval"
(cd "$root" && go build -o "$rv" .)

# A deterministic log of mixed ASCII and multi-byte lines; one line in
# 4,000,000 holds a rare marker, about one in five holds "level=3".
log="${LOG:-$work/log.txt}"
[ -n "${LOG:-}" ] || awk -v limit=$((size_mib << 20)) 'BEGIN {
	split("GET POST résumé 日本語 ошибка ok timeout 🙂 données ünïcödé", w, " ")
	x = 1; n = 0; bytes = 0
	while (bytes < limit) {
		n++
		x = (x * 1103515245 + 12345) % 2147483648
		line = sprintf("%09d level=%d msg=%s user=%d", n, x % 5, w[1 + x % 10], x % 99991)
		k = x % 7
		for (i = 0; i < k; i++) line = line " " w[1 + int(x / (i + 3)) % 10]
		if (n % 4000000 == 123457) line = line " rare-marker-7f3a"
		print line
		bytes += length(line) + 1   # awk counts characters; close enough
	}
}' > "$log"
bytes=$(stat -c %s "$log")
lines=$(wc -l < "$log")
echo "log: $bytes bytes, $lines lines"

"$rv" retain --run bench --call log --threshold 0 --max-value-size 0 --max-run-bytes 0 "$log" | head -1
ls -l "$RETVAL_RUNS_DIR/bench.values/"

# Peek's caps are raised so that it prints the same 400 lines sed does.
peek="$rv peek --run bench log --threshold 0 --peek-bytes 1MiB"
mid=$((lines / 2))
end=$((lines - 399))
for a in 1 $mid $end; do
	b=$((a + 399))
	hyperfine -N --warmup 3 --runs 20 --output=pipe \
		-n "peek --lines $a-$b" "$peek --lines $a-$b" \
		-n "sed -n '$a,${b}p;${b}q'" "sed -n $a,${b}p;${b}q $log" \
		-n "tail -n +$a | head -n 400" "sh -c 'tail -n +$a $log | head -n 400'"
done

for q in rare-marker-7f3a level=3; do
	hyperfine -N -i --warmup 2 --runs 10 --output=pipe \
		-n "peek --query $q" "$rv peek --run bench log --query $q" \
		-n "grep -nF $q" "grep -nF $q $log" \
		-n "grep -cF $q" "grep -cF $q $log"
done

echo "peak RSS:"
for q in rare-marker-7f3a level=3; do
	/usr/bin/time -v "$rv" peek --run bench log --query "$q" 2>&1 >/dev/null | sed -n "s/Maximum resident set size/peek --query $q: max RSS/p"
done
/usr/bin/time -v "$rv" peek --run bench log --lines "$end-$lines" 2>&1 >/dev/null | sed -n "s/Maximum resident set size/peek --lines $end-$lines: max RSS/p"
