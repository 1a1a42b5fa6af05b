#!/bin/sh
# retval stats --all over a store of RUNS runs × VALUES values × READS
# lookups each (1,000 × 100 × 10 by default: 1.1 million records): time
# (hyperfine) and peak RSS (GNU time).
#
# Usage: bench/stats.sh [RUNS [VALUES [READS]]]
# Needs go, hyperfine and /usr/bin/time. Set WORK to choose the scratch
# directory (the store is kept there and reused).
set -eu

RUNS=${1:-1000}
VALUES=${2:-100}
READS=${3:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
BIN=$WORK/retval
STORE=$WORK/reads-$RUNS-$VALUES-$READS

(cd "$ROOT" && go build -o "$BIN" .)
if [ ! -d "$STORE" ]; then
  (cd "$ROOT" && go run bench/genreads.go "$STORE.tmp" "$RUNS" "$VALUES" "$READS")
  mv "$STORE.tmp" "$STORE"
fi
echo "store: $RUNS runs, $(cat "$STORE"/*.values/.reads | wc -l) records, $(du -sh "$STORE" | cut -f1)"
"$BIN" stats --runs-dir "$STORE" --all
hyperfine -N --warmup 1 --runs 5 "$BIN stats --runs-dir $STORE --all --json" "$BIN stats --runs-dir $STORE --all --by tool --json"
/usr/bin/time -v "$BIN" stats --runs-dir "$STORE" --all --json 2>&1 >/dev/null | grep -E 'Maximum resident|Elapsed'
