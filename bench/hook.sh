#!/usr/bin/env bash
# bench/hook.sh — what `retval hook claude-code` adds to one tool call, side
# by side with the floor under it: a Go program built by the same toolchain
# that reads its stdin and prints one line. Claude Code runs the hook on
# every matched tool call (PreToolUse before, PostToolUse after), so the
# common cases are the ones it leaves alone:
#
#   - PreToolUse of a Write with no reference in it (untouched);
#   - PostToolUse of a Bash result under the threshold (untouched);
#   - PreToolUse of the worked move of docs/expand.md (20 new lines and
#     300 of net/http/server.go, retained: expanded);
#   - PostToolUse of a 100 KB Bash result (retained: the stub answers),
#     a new call each time (a new tool_use_id, twenty calls to a session,
#     as an agent's results are), and the same call again (its value is
#     held already: checked, and its stub answers).
#
# The inputs have the fields Claude Code 2.1.328 sends (session_id,
# transcript_path, cwd, permission_mode, hook_event_name, tool_name,
# tool_input, tool_use_id, and tool_response for PostToolUse). Both
# binaries are built with CGO_ENABLED=0 -trimpath, as a release is.
#
# Usage: bench/hook.sh    (from the repository root; needs go, hyperfine, jq; RUNS=300)
set -euo pipefail
w=$(mktemp -d "${TMPDIR:-/tmp}/retval-hook.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/floor"
printf 'module floor\ngo 1.26\n' > "$w/floor/go.mod"
cat > "$w/floor/main.go" <<'EOF'
package main

import (
	"io"
	"os"
)

// Reads the hook input as the hook does, and answers nothing.
func main() { io.Copy(io.Discard, os.Stdin); os.Stdout.WriteString("\n") }
EOF
(cd "$w/floor" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$w/floor.bin" .)
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$w/retval" .
export RETVAL_RUNS_DIR=$w/runs XDG_CONFIG_HOME=$w/config
cp "$(go env GOROOT)/src/net/http/server.go" "$w/source.txt"
"$w/retval" retain --run sess --call toolu_cat "$w/source.txt" > /dev/null

common='"session_id":"sess","transcript_path":"'$w'/t.jsonl","cwd":"'$w'","permission_mode":"default"'
printf '{%s,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"%s/a.go","content":"package a\\n\\nfunc A() {}\\n"},"tool_use_id":"toolu_w1"}' \
  "$common" "$w" > "$w/pre-untouched.json"
jq -c --arg new "$(for i in $(seq 1 20); do echo "// new line $i"; done)" \
  '.tool_input.content = "$expand:" + ({"$concat": [$new + "\n", {"$ref": "toolu_cat", "lines": [2100, 2399]}]} | tojson) | .tool_use_id = "toolu_w2"' \
  "$w/pre-untouched.json" > "$w/pre-expand.json"
post() { # post ID BYTES: a PostToolUse of a Bash result of BYTES bytes
  jq -cn --arg out "$(seq 1 200000 | head -c "$2")" --arg id "$1" --arg w "$w" \
    '{session_id: "sess", transcript_path: ($w + "/t.jsonl"), cwd: $w, permission_mode: "default",
      hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: {command: "make", description: "Build"},
      tool_response: {stdout: $out, stderr: "", interrupted: false, isImage: false, noOutputExpected: false},
      tool_use_id: $id}'
}
post toolu_small 2000 > "$w/post-small.json"
post toolu_big 102400 > "$w/post-big.json"

# Each answer is checked once before it is timed.
[ -z "$("$w/retval" hook claude-code < "$w/pre-untouched.json" 2>/dev/null)" ]
"$w/retval" hook claude-code < "$w/pre-expand.json" | jq -e '.hookSpecificOutput.updatedInput.content | length > 2000' > /dev/null
[ -z "$("$w/retval" hook claude-code < "$w/post-small.json" 2>/dev/null)" ]
"$w/retval" hook claude-code < "$w/post-big.json" | jq -e '.hookSpecificOutput.updatedMCPToolOutput // .decision // .hookSpecificOutput' > /dev/null
# A new call each time: the prepare step (not timed) writes the input with
# the next tool_use_id, and a new session every twenty calls.
echo 0 > "$w/n"
cat > "$w/next.sh" <<EOF
n=\$((\$(cat $w/n) + 1))
echo \$n > $w/n
jq -c --argjson n \$n '.tool_use_id = "toolu_new\(\$n)" | .session_id = "sess\(\$n / 20 | floor)"' $w/post-big.json > $w/post-new.json
EOF
fresh="sh $w/next.sh"
# A long session: a run already holding 300 results, into which each
# timed run retains a new one (what the hook costs late in a session).
for i in $(seq 1 300); do seq 1 100 | "$w/retval" retain --run long --call "toolu_old$i" --threshold 0 > /dev/null; done
cat > "$w/next-long.sh" <<EOF
n=\$((\$(cat $w/n) + 1))
echo \$n > $w/n
jq -c --argjson n \$n '.tool_use_id = "toolu_long\(\$n)" | .session_id = "long"' $w/post-big.json > $w/post-long.json
EOF
$fresh
"$w/retval" hook claude-code < "$w/post-new.json" | jq -e '.hookSpecificOutput' > /dev/null

echo "$(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3), $(hyperfine --version)"
# hyperfine 1.15 has no --input: each command is `sh -c 'exec CMD < FILE'`,
# and the first row, the same with /bin/true, is what that wrapper costs;
# the "net" column takes it off, and the ratio is of net times.
# The prepare steps run before each timed run, one per command in order.
run() { printf "sh -c 'exec %s < %s'" "$1" "$2"; }
hyperfine -N --style none --warmup 20 --runs "${RUNS:-300}" --export-json "$w/times.json" \
  -p true -n 'sh -c exec /bin/true (the wrapper alone)' "$(run /bin/true "$w/post-small.json")" \
  -p true -n 'Go floor: reads stdin, prints a line' "$(run "$w/floor.bin" "$w/post-small.json")" \
  -p true -n 'PreToolUse, no reference (untouched)' "$(run "$w/retval hook claude-code" "$w/pre-untouched.json")" \
  -p true -n 'PostToolUse, 2 KB Bash result (untouched)' "$(run "$w/retval hook claude-code" "$w/post-small.json")" \
  -p true -n 'PreToolUse, the worked move (expanded)' "$(run "$w/retval hook claude-code" "$w/pre-expand.json")" \
  -p "$fresh" -n 'PostToolUse, 100 KB Bash result (retained, a new call)' "$(run "$w/retval hook claude-code" "$w/post-new.json")" \
  -p true -n 'PostToolUse, 100 KB Bash result (the same call again)' "$(run "$w/retval hook claude-code" "$w/post-big.json")" \
  -p "sh $w/next-long.sh" -n 'PostToolUse, 100 KB Bash result (a new call, its session holding 300+)' "$(run "$w/retval hook claude-code" "$w/post-long.json")" > /dev/null 2> "$w/hyperfine.err" \
  || { cat "$w/hyperfine.err" >&2; exit 1; }
echo "| hook call | median | min | max | net of the wrapper | × the Go floor (net) | more than the Go floor (net) |"
echo "|---|---|---|---|---|---|---|"
jq -r '.results[0].median as $sh | (.results[1].median - $sh) as $floor | .results[] |
  "| \(.command) | \(.median * 1e5 | round / 100) ms | \(.min * 1e5 | round / 100) ms | \(.max * 1e5 | round / 100) ms | \((.median - $sh) * 1e5 | round / 100) ms | \((.median - $sh) / $floor * 100 | round / 100)× | \((.median - $sh - $floor) * 1e5 | round / 100) ms |"' "$w/times.json"
