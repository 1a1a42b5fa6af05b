#!/usr/bin/env bash
# bench/startup.sh — what one process costs here before it does any work,
# side by side in one hyperfine run: sed; a Go program that prints one
# line (without and with the net package linked), the floor under any Go
# command; and retval --version and retval peek of a small value. Each Go
# program is built twice: as a release is (CGO_ENABLED=0 -trimpath
# -ldflags "-s -w") and by a plain go build, which links net against libc
# wherever a C compiler is installed and then pays the dynamic loader and
# libc's start on every call. The last column divides each median by the
# Go program's of the same build (the release build's for sed).
#
# Usage: bench/startup.sh    (run from the repository root; needs go, hyperfine and jq; RUNS=300)
set -euo pipefail
w=$(mktemp -d "${TMPDIR:-/tmp}/retval-startup.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/hello" "$w/hellonet"
printf 'module hello\ngo 1.26\n' > "$w/hello/go.mod"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hi\\n") }\n' > "$w/hello/main.go"
printf 'module hellonet\ngo 1.26\n' > "$w/hellonet/go.mod"
printf 'package main\n\nimport (\n\t_ "net"\n\t"os"\n)\n\nfunc main() { os.Stdout.WriteString("hi\\n") }\n' > "$w/hellonet/main.go"
release() { CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" "$@"; }
for p in hello hellonet; do
  (cd "$w/$p" && release -o "$w/$p.bin" . && go build -o "$w/$p-default.bin" .)
done
release -o "$w/retval" .
go build -o "$w/retval-default" .
export RETVAL_RUNS_DIR=$w/runs XDG_CONFIG_HOME=$w/config
seq 1 10 > "$w/small.txt"
"$w/retval" retain --run b --call small --threshold 0 "$w/small.txt" > /dev/null
echo "$(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3), C compiler: $(command -v "$(go env CC)" || echo none), $(hyperfine --version)"
hyperfine -N --style none --warmup 20 --runs "${RUNS:-300}" --export-json "$w/times.json" \
  -n 'sed -n 1,10p' "sed -n 1,10p $w/small.txt" \
  -n 'Go, prints a line' "$w/hello.bin" \
  -n 'Go, prints a line, links net' "$w/hellonet.bin" \
  -n 'retval --version' "$w/retval --version" \
  -n 'retval peek (small value)' "$w/retval peek --run b small --lines 1-10" \
  -n 'Go, prints a line (plain go build)' "$w/hello-default.bin" \
  -n 'Go, prints a line, links net (plain go build)' "$w/hellonet-default.bin" \
  -n 'retval --version (plain go build)' "$w/retval-default --version" \
  -n 'retval peek (small value, plain go build)' "$w/retval-default peek --run b small --lines 1-10" > /dev/null
echo "| command | median | min | max | × the Go program's median |"
echo "|---|---|---|---|---|"
jq -r '.results[1].median as $floor | .results[5].median as $plain | .results[] |
  (if (.command | test("plain go build")) then $plain else $floor end) as $f |
  "| \(.command) | \(.median * 1e5 | round / 100) ms | \(.min * 1e5 | round / 100) ms | \(.max * 1e5 | round / 100) ms | \(.median / $f * 100 | round / 100)× |"' "$w/times.json"
