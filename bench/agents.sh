#!/usr/bin/env bash
# Measures the figures docs/agents.md gives for Qwen Code and Cline: what
# their model receives for seq 1 100000 (588,895 bytes) through the shell
# tool and an MCP server, without retval and with it, and what their hooks
# and plugins can do with a result. Each client is its pinned npm package
# (installed under ~/.cache/retval-ci on first use), run inside a network
# namespace that has only loopback against a scripted mock of its model
# API: go test -tags agents ./internal/e2e/agents. About five minutes; not
# part of .ci/run.
#
#   bench/agents.sh              every client
#   bench/agents.sh TestCline    one (go test -run's pattern)
#
# Needs go, node and npm, jq, and root or user namespaces (unshare -n).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log=$(mktemp "${TMPDIR:-/tmp}/retval-agents.XXXXXX")
trap 'rm -f "$log"' EXIT
status=0
go test -tags agents -count=1 -timeout 30m -v -run "${1:-.}" ./internal/e2e/agents >"$log" 2>&1 || status=$?
if ((status != 0)); then
  cat "$log" >&2
  exit "$status"
fi
grep -E -- '--- SKIP|figure: ' "$log" | sed -E 's/^ *//; s/^[a-z_]+\.go:[0-9]+: //'
