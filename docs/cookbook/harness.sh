#!/usr/bin/env bash
# A harness's tool loop in bash. Every tool result goes through retval
# retain and the model is shown exactly what retain prints: the output
# itself when it is small, a stub when it is large. The transcript keeps the
# full output, which is what a resumed harness replays (resume.sh).
set -euo pipefail

export RETVAL_RUNS_DIR=${RETVAL_RUNS_DIR:-$HOME/.cache/agent/runs}
export RETVAL_RUN=${RETVAL_RUN:-session-$(date +%Y%m%dT%H%M%S)-$$}
transcript=${TRANSCRIPT:-transcript}
mkdir -p "$transcript"

# tool_call CALL_ID TOOL COMMAND...: run one tool call, record its full
# output, print what the model sees.
tool_call() {
	local call=$1 tool=$2
	shift 2
	local status=0
	"$@" >"$transcript/$call.out" 2>&1 || status=$?
	retval retain --call "$call" --tool "$tool" --exit-code "$status" "$transcript/$call.out" |
		tee "$transcript/$call.seen"
}

# The model's tool calls; a fixed list stands in for the model here.
tool_call toolu_01 greet echo "hello from a small tool"
tool_call toolu_02 numbers seq 1 50000
tool_call toolu_03 listing sh -c 'seq 1 3000 | sed "s/^/file-/"; exit 3'
