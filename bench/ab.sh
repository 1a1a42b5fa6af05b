#!/usr/bin/env bash
# bench/ab.sh — the same commands with retval built from two commits, side
# by side in one hyperfine run each, so that a change's effect is read
# from paired figures taken under the same load: start-up (--version, a
# peek of a small value) and a peek and a search of a large value.
#
# Usage: bench/ab.sh OLD NEW [SIZE_MIB]   (commits; default 256 MiB log)
#
# Both are built as a release is (CGO_ENABLED=0 -trimpath) from a
# temporary worktree of each commit; each works on its own store holding
# the same values. Needs go, git, hyperfine, jq, awk.
set -euo pipefail
old=${1:?usage: bench/ab.sh OLD NEW [SIZE_MIB]}
new=${2:?usage: bench/ab.sh OLD NEW [SIZE_MIB]}
size_mib=${3:-256}
root=$(cd "$(dirname "$0")/.." && pwd)
w=$(mktemp -d "${TMPDIR:-/tmp}/retval-ab.XXXXXX")
trap 'git -C "$root" worktree remove --force "$w/src-old" 2>/dev/null; git -C "$root" worktree remove --force "$w/src-new" 2>/dev/null; rm -rf "$w"' EXIT
for side in old new; do
  rev=${!side}
  git -C "$root" worktree add -q --detach "$w/src-$side" "$rev"
  (cd "$w/src-$side" && CGO_ENABLED=0 go build -trimpath -o "$w/$side" .)
done
seq 1 10 > "$w/small.txt"
awk -v limit=$((size_mib << 20)) 'BEGIN {
  srand(1); n = 0
  while (n < limit) {
    line = sprintf("%08d level=%d component=c%02d message=\"request %d served in %d ms\"", NR, int(rand() * 5), int(rand() * 40), int(rand() * 1e6), int(rand() * 900))
    if (NR % 4000000 == 1234567) line = line " RARE-MARKER"
    print line; n += length(line) + 1; NR++
  }
}' > "$w/log.txt"
lines=$(wc -l < "$w/log.txt")
for side in old new; do
  export RETVAL_RUNS_DIR=$w/runs-$side
  "$w/$side" retain --run b --call small --threshold 0 "$w/small.txt" > /dev/null
  "$w/$side" retain --run b --call log --threshold 0 --max-value-size 0 --max-run-bytes 0 "$w/log.txt" > /dev/null
done
echo "$(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3); old $(git -C "$root" rev-parse --short "$old"), new $(git -C "$root" rev-parse --short "$new"); a ${size_mib} MiB log of $lines lines"
echo "| command | old, median | new, median | new / old |"
echo "|---|---|---|---|"
# pair NAME ARGS...: the command with each build, in one hyperfine run.
pair() {
  local name=$1; shift
  hyperfine -N --style none --warmup 10 --runs "${RUNS:-200}" --export-json "$w/t.json" \
    -n old "env RETVAL_RUNS_DIR=$w/runs-old $w/old $*" \
    -n new "env RETVAL_RUNS_DIR=$w/runs-new $w/new $*" > /dev/null 2> "$w/err" || { cat "$w/err" >&2; exit 1; }
  jq -r --arg name "$name" '.results as $r | "| \($name) | \($r[0].median * 1e5 | round / 100) ms | \($r[1].median * 1e5 | round / 100) ms | \($r[1].median / $r[0].median * 100 | round / 100) |"' "$w/t.json"
}
pair "--version" --version
pair "peek of a 10-line value" peek --run b small
pair "peek --lines, 400 at the end of the log" peek --run b log --threshold 0 --peek-bytes 1MiB --lines "$((lines - 399))-$lines"
pair "peek --query, a rare string" peek --run b log --query RARE-MARKER
