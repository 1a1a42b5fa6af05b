#!/bin/sh
# gc over RUNS runs × VALUES values, against what a user would write
# instead: find RUNS -mindepth 1 -mtime +7 -delete.
#
# The tree is written directly in the store layout (content, descriptor,
# .lock and .activity per run; no retain processes): half of the runs idle
# for 10 days, half for 1 day, so both commands delete the same half.
# hyperfine rebuilds the tree from a template before every timed run.
#
# Usage: bench/gc.sh [RUNS [VALUES [VALUE_BYTES]]]   (defaults 1000 100 1024)
# Needs go and hyperfine. Set WORK to choose the scratch directory.
set -eu

RUNS=${1:-1000}
VALUES=${2:-100}
SIZE=${3:-1024}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
BIN=$WORK/retval
GEN=$WORK/gen
TEMPLATE=$WORK/template
TREE=$WORK/tree

(cd "$ROOT" && go build -o "$BIN" .)

mkdir -p "$GEN"
cat > "$GEN/go.mod" <<'EOF'
module gen

go 1.22
EOF
cat > "$GEN/main.go" <<'EOF'
// gen writes a store of runs × values in retval's layout, with old mtimes.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	dir := os.Args[1]
	runs, _ := strconv.Atoi(os.Args[2])
	values, _ := strconv.Atoi(os.Args[3])
	size, _ := strconv.Atoi(os.Args[4])
	now := time.Now()
	line := []byte("0123456789 the quick brown fox jumps over the lazy dog 0123456789\n")
	for r := 0; r < runs; r++ {
		run := fmt.Sprintf("run-%04d", r)
		rd := filepath.Join(dir, run+".values")
		must(os.MkdirAll(rd, 0o700))
		idle := 24 * time.Hour
		if r%2 == 0 {
			idle = 10 * 24 * time.Hour
		}
		t := now.Add(-idle)
		for v := 0; v < values; v++ {
			body := make([]byte, 0, size)
			for len(body) < size {
				body = append(body, fmt.Sprintf("%s %d ", run, v)...)
				body = append(body, line...)
			}
			body = body[:size]
			id := fmt.Sprintf("call-%03d", v)
			sum := sha256.Sum256(body)
			d := map[string]any{"id": id, "call_id": id, "run": run, "tool": "bench", "size": size,
				"lines": size / len(line), "sha256": hex.EncodeToString(sum[:]), "utf8": true, "json": false,
				"complete": true, "timed_out": false, "created": t.UTC().Format(time.RFC3339),
				"compression": "none", "stored_bytes": size}
			meta, _ := json.MarshalIndent(d, "", "  ")
			must(os.WriteFile(filepath.Join(rd, id+".txt"), body, 0o600))
			must(os.WriteFile(filepath.Join(rd, id+".meta.json"), append(meta, '\n'), 0o600))
			must(os.Chtimes(filepath.Join(rd, id+".txt"), t, t))
			must(os.Chtimes(filepath.Join(rd, id+".meta.json"), t, t))
		}
		for _, f := range []string{".lock", ".activity"} {
			must(os.WriteFile(filepath.Join(rd, f), nil, 0o600))
			must(os.Chtimes(filepath.Join(rd, f), t, t))
		}
		must(os.Chtimes(rd, t, t))
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
EOF

rm -rf "$TEMPLATE"
(cd "$GEN" && go run . "$TEMPLATE" "$RUNS" "$VALUES" "$SIZE")
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
