#!/bin/sh
# bench/resolve.sh — retval resolve side by side with what a user would run
# instead:
#   1. a JSON pointer into a 200 MiB package-lock-shaped document, vs jq;
#   2. 8 KiB at offset 900 MiB of a 1 GiB value, vs dd.
# Times with hyperfine, peak memory with GNU time -v. Needs go, jq,
# hyperfine, awk and /usr/bin/time, and about 2.5 GiB of free disk, all of
# which is removed at the end.
#
# Usage: bench/resolve.sh [WORKDIR]    (run from the repository root)
set -eu

W=${1:-${TMPDIR:-/tmp}/retval-bench.$$}
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT INT TERM
export RETVAL_RUNS_DIR="$W/runs"
RUNS=${RUNS:-10}

go build -o "$W/retval" .
R="$W/retval"
big="--threshold 0 --max-value-size 0 --max-run-bytes 0"

peak() { # peak resident set size in KiB of a command
	/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
}

# 1. package-lock.json of 200 MiB: {"packages": {"node_modules/pkg-N": {...}, ...}}.
N=${N:-731000}
T=$((N / 2))
awk -v n="$N" 'BEGIN {
	printf "{\n  \"name\": \"bench\",\n  \"lockfileVersion\": 3,\n  \"packages\": {"
	for (i = 0; i < n; i++) {
		c = sprintf("%c", 65 + i % 26)
		s = c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c
		printf "%s\n    \"node_modules/pkg-%d\": {\n      \"version\": \"%d.%d.%d\",\n      \"resolved\": \"https://registry.npmjs.org/pkg-%d/-/pkg-%d-%d.%d.%d.tgz\",\n      \"integrity\": \"sha512-%s==\",\n      \"license\": \"MIT\"\n    }", (i ? "," : ""), i, i % 7, i % 13, i % 101, i, i, i % 7, i % 13, i % 101, s
	}
	printf "\n  }\n}\n"
}' > "$W/lock.json"
ls -l "$W/lock.json"
"$R" retain --run bench --call lock $big "$W/lock.json" | head -1

ptr="/packages/node_modules~1pkg-$T/version"
jqf=".packages[\"node_modules/pkg-$T\"].version"
a=$("$R" resolve --run bench lock --pointer "$ptr")
b=$(jq "$jqf" "$W/lock.json")
[ "$a" = "$b" ] || { echo "answers differ: retval $a, jq $b" >&2; exit 1; }
echo "both answer $a"
hyperfine -N --warmup 2 --runs "$RUNS" \
	"$R resolve --run bench lock --pointer $ptr" \
	"jq '$jqf' $W/lock.json"
echo "peak RSS (KiB): retval $(peak "$R" resolve --run bench lock --pointer "$ptr"), jq $(peak jq "$jqf" "$W/lock.json")"
rm -f "$W/lock.json"

# 2. 8 KiB at offset 900 MiB of a 1 GiB value.
yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c 1073741824 > "$W/big.txt"
"$R" retain --run bench --call big $big "$W/big.txt" | head -1
off=$((900 << 20))
end=$((off + 8192))
"$R" resolve --run bench big --bytes "$off-$end" > "$W/a.out"
dd if="$W/big.txt" iflag=skip_bytes,count_bytes skip="$off" count=8192 status=none > "$W/b.out"
cmp "$W/a.out" "$W/b.out"
echo "both read the same 8192 bytes"
hyperfine -N --warmup 3 --runs $((RUNS * 5)) \
	"$R --version" \
	"$R resolve --run bench big --bytes $off-$end" \
	"dd if=$W/big.txt iflag=skip_bytes,count_bytes skip=$off count=8192 status=none"
echo "peak RSS (KiB): retval $(peak "$R" resolve --run bench big --bytes "$off-$end"), dd $(peak dd if="$W/big.txt" iflag=skip_bytes,count_bytes skip="$off" count=8192 status=none)"
