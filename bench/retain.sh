#!/usr/bin/env bash
# Retain of a large log, side by side with what a user would do instead:
# `tee FILE | sha256sum` (copy and hash) and `openssl sha256` (hash alone).
#
#   bench/retain.sh [SIZE_BYTES]    default 1 GiB
#
# Needs hyperfine, openssl and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1073741824}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/retval" .
go run bench/gen.go log "$size" > "$work/big.log"
echo "data: $(du -h "$work/big.log" | cut -f1) log, $(wc -l < "$work/big.log") lines"

hyperfine --warmup 1 --runs 5 --export-json "$work/retain.json" \
  --prepare "rm -rf $work/runs $work/tee.out; sync" \
  -n 'retval retain' "$work/retval retain --runs-dir $work/runs --run b --call c --threshold 0 --max-value-size 0 --max-run-bytes 0 $work/big.log > /dev/null" \
  -n 'tee FILE | sha256sum' "tee $work/tee.out < $work/big.log | sha256sum > /dev/null" \
  -n 'openssl sha256' "openssl sha256 < $work/big.log > /dev/null"

rm -rf "$work/runs"
/usr/bin/time -f 'retval retain peak RSS: %M KiB' "$work/retval" retain --runs-dir "$work/runs" --run b --call c \
  --threshold 0 --max-value-size 0 --max-run-bytes 0 "$work/big.log" > /dev/null
