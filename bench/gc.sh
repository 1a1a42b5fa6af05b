#!/bin/sh
# gc over RUNS runs × VALUES values, against what a user would write
# instead: find RUNS -mindepth 1 -mtime +7 -delete.
#
# The tree is written directly in the store layout (content, descriptor,
# .lock and .activity per run; no retain processes): half of the runs idle
# for 10 days, half for 1 day, so both commands delete the same half.
# hyperfine rebuilds the tree from a template before every timed run.
#
# Usage: bench/gc.sh [RUNS [VALUES]]   (defaults 1000 100; values of 1 KiB)
# Needs go and hyperfine. Set WORK to choose the scratch directory.
set -eu

RUNS=${1:-1000}
VALUES=${2:-100}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
BIN=$WORK/retval
TEMPLATE=$WORK/template
TREE=$WORK/tree

(cd "$ROOT" && go build -o "$BIN" .)

rm -rf "$TEMPLATE"
(cd "$ROOT" && go run bench/gen.go store "$TEMPLATE" "$RUNS" "$VALUES")
echo "tree: $(find "$TEMPLATE" -type f | wc -l) files, $(du -sh "$TEMPLATE" | cut -f1)"

# Both leave the same runs behind: check once before timing.
rm -rf "$TREE" && cp -a "$TEMPLATE" "$TREE"
"$BIN" gc --runs-dir "$TREE" --max-age 7d
A=$(cd "$TREE" && find . -path ./.retval -prune -o -type f -print | sort | md5sum)
rm -rf "$TREE" && cp -a "$TEMPLATE" "$TREE"
find "$TREE" -mindepth 1 -mtime +7 -delete
B=$(cd "$TREE" && find . -path ./.retval -prune -o -type f -print | sort | md5sum)
[ "$A" = "$B" ] || { echo "gc and find left different files" >&2; exit 1; }

hyperfine --warmup 1 --runs "${BENCH_RUNS:-5}" \
	--prepare "rm -rf '$TREE' && cp -a '$TEMPLATE' '$TREE' && sync" \
	-n 'retval gc --max-age 7d' "'$BIN' gc --runs-dir '$TREE' --max-age 7d" \
	-n 'find -mtime +7 -delete' "find '$TREE' -mindepth 1 -mtime +7 -delete"
