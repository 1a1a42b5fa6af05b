#!/bin/sh
# bench/expand.sh — retval expand reassembling a 16 MiB value from 1,000
# ranges: a template whose "content" is a $concat of 1,000 "lines" refs
# (then of 1,000 "bytes" refs) that together cover the whole value. Checks
# that the output's content is the value, byte for byte, then times it with
# hyperfine next to jq building the same JSON string from the file
# (jq -Rs), and reports peak memory with GNU time -v. Needs go, jq, awk,
# hyperfine and /usr/bin/time, and about 100 MiB of free disk, removed at
# the end.
#
# Usage: bench/expand.sh [WORKDIR]    (run from the repository root)
set -eu

W=${1:-${TMPDIR:-/tmp}/retval-bench.$$}
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT INT TERM
export RETVAL_RUNS_DIR="$W/runs"
RUNS=${RUNS:-10}
PARTS=${PARTS:-1000}

go build -o "$W/retval" .
R="$W/retval"

peak() { # peak resident set size in KiB of a command
	/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
}

# A 16 MiB log of mixed ASCII and multi-byte lines; the last line, which
# the generator cuts at the size, is dropped so that every line is whole.
go run bench/gen.go log 16777216 | sed '$d' > "$W/big.log"
size=$(wc -c < "$W/big.log")
lines=$(wc -l < "$W/big.log")
"$R" retain --run bench --call big --threshold 0 --max-value-size 0 --max-run-bytes 0 "$W/big.log" | head -1

# The templates: PARTS consecutive ranges of lines, and the same ranges as
# byte offsets (line starts, so never inside a UTF-8 sequence).
LC_ALL=C awk -v parts="$PARTS" -v n="$lines" '
	BEGIN { off = 0; k = 0; next_first = 1 }
	{ if (NR == next_first) { first[k] = NR; start[k] = off; k++; next_first = int(k * n / parts) + 1 }; off += length($0) + 1 }
	END {
		printf "{\"path\": \"big.log\", \"content\": {\"$concat\": [" > lt
		printf "{\"path\": \"big.log\", \"content\": {\"$concat\": [" > bt
		for (i = 0; i < k; i++) {
			last = (i + 1 < k) ? first[i + 1] - 1 : n
			end = (i + 1 < k) ? start[i + 1] : off
			printf "%s\n  {\"$ref\": \"big\", \"lines\": [%d, %d]}", (i ? "," : ""), first[i], last > lt
			printf "%s\n  {\"$ref\": \"big\", \"bytes\": [%d, %d]}", (i ? "," : ""), start[i], end > bt
		}
		printf "\n]}}\n" > lt
		printf "\n]}}\n" > bt
	}' lt="$W/lines.json" bt="$W/bytes.json" "$W/big.log"
echo "value: $size bytes, $lines lines; templates: $(wc -c < "$W/lines.json") bytes (lines), $(wc -c < "$W/bytes.json") bytes (bytes), $(grep -c '\$ref' "$W/lines.json") refs each"

for t in lines bytes; do
	"$R" expand --run bench "$W/$t.json" > "$W/out.json"
	jq -j .content "$W/out.json" | cmp - "$W/big.log"
	echo "$t: the expanded content is the value ($(wc -c < "$W/out.json") bytes of output)"
done
jq -Rs '{path: "big.log", content: .}' "$W/big.log" > "$W/jq.json"
echo "jq -Rs: $(wc -c < "$W/jq.json") bytes of output"

hyperfine -N --warmup 2 --runs "$RUNS" --output=null \
	"$R expand --run bench $W/lines.json" \
	"$R expand --run bench $W/bytes.json" \
	"$R expand --run bench --summary $W/summary.json $W/lines.json" \
	"jq -Rs '{path: \"big.log\", content: .}' $W/big.log"
echo "peak RSS (KiB): lines $(peak "$R" expand --run bench "$W/lines.json"), bytes $(peak "$R" expand --run bench "$W/bytes.json"), with --summary $(peak "$R" expand --run bench --summary "$W/summary.json" "$W/lines.json"), jq -Rs $(peak jq -Rs '{path: "big.log", content: .}' "$W/big.log")"
