#!/usr/bin/env bash
# Reruns the worked table of docs/EFFICIENCY.md from real sessions: the
# Claude Code end-to-end test (the hook, Bash and MCP results) and the
# Codex one (the MCP proxy), each run with and without retval against a
# scripted mock of the model's API inside a network namespace. The tests
# append what the model received, and retval stats of each session, to a
# file; bench/efficiency.go turns that into the table.
#
#   bench/efficiency.sh          rewrite the table in docs/EFFICIENCY.md
#
# Needs go, root or user namespaces (unshare -n), and the pinned clients
# (.ci/clients.sh installs them under ~/.cache/retval-ci).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=$(mktemp "${TMPDIR:-/tmp}/retval-efficiency.XXXXXX")
trap 'rm -f "$out"' EXIT
[[ -x .ci/clients.sh ]] && .ci/clients.sh
RETVAL_E2E_LEDGER=$out CI=true go test -count=1 ./internal/e2e/claudecode ./internal/e2e/codex
go run bench/efficiency.go "$out" docs/EFFICIENCY.md
echo "bench/efficiency.sh: $(wc -l <"$out") results measured; docs/EFFICIENCY.md updated"
