#!/usr/bin/env bash
# bench/startup.sh — what one process costs here before it does any work:
# sed, a Go program that prints one line (without and with the net package
# linked), and retval peek of a small value, each built by plain go build
# and with CGO_ENABLED=0. It shows the floor under the start-up rows of
# bench/run: a Go binary that links net is dynamically linked against libc
# wherever a C compiler is installed, and pays the dynamic loader and
# libc's start on every call.
#
# Usage: bench/startup.sh    (run from the repository root; needs go, hyperfine and jq)
set -euo pipefail
w=$(mktemp -d "${TMPDIR:-/tmp}/retval-startup.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/hello" "$w/hellonet"
printf 'module hello\ngo 1.26\n' > "$w/hello/go.mod"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hi\\n") }\n' > "$w/hello/main.go"
printf 'module hellonet\ngo 1.26\n' > "$w/hellonet/go.mod"
printf 'package main\n\nimport (\n\t_ "net"\n\t"os"\n)\n\nfunc main() { os.Stdout.WriteString("hi\\n") }\n' > "$w/hellonet/main.go"
for p in hello hellonet; do
  (cd "$w/$p" && go build -o "$w/$p.bin" . && CGO_ENABLED=0 go build -o "$w/$p-nocgo.bin" .)
done
go build -o "$w/retval" .
CGO_ENABLED=0 go build -o "$w/retval-nocgo" .
export RETVAL_RUNS_DIR=$w/runs
seq 1 10 > "$w/small.txt"
"$w/retval" retain --run b --call small --threshold 0 "$w/small.txt" > /dev/null
echo "$(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3), C compiler: $(command -v "$(go env CC)" || echo none)"
hyperfine -N --style none --warmup 20 --runs "${RUNS:-300}" --export-json "$w/times.json" \
  -n 'sed -n 1,10p' "sed -n 1,10p $w/small.txt" \
  -n 'Go, prints a line' "$w/hello.bin" \
  -n 'Go, prints a line, links net' "$w/hellonet.bin" \
  -n 'Go, prints a line, links net, CGO_ENABLED=0' "$w/hellonet-nocgo.bin" \
  -n 'retval peek' "$w/retval peek --run b small --lines 1-10" \
  -n 'retval peek, CGO_ENABLED=0' "$w/retval-nocgo peek --run b small --lines 1-10" > /dev/null
echo "| command | median | min | max |"
echo "|---|---|---|---|"
jq -r '.results[] | "| \(.command) | \(.median * 1e5 | round / 100) ms | \(.min * 1e5 | round / 100) ms | \(.max * 1e5 | round / 100) ms |"' "$w/times.json"
