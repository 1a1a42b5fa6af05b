#!/usr/bin/env bash
# A test-runner tool call in one step: retval exec runs the command, streams
# its output into the store, and exits with the command's own status, so no
# pipefail, --exit-code or --timed-out plumbing is needed. The model is
# shown what exec prints; the harness branches on the status.
set -uo pipefail

export RETVAL_RUNS_DIR=${RETVAL_RUNS_DIR:-$HOME/.cache/agent/runs}
export RETVAL_RUN=${RETVAL_RUN:-session-$(date +%Y%m%dT%H%M%S)-$$}

# run_tests CALL_ID COMMAND...: at most 15 minutes, whatever it prints.
run_tests() {
	local call=$1
	shift
	local status=0
	retval exec --call "$call" --tool tests --timeout 15m -- "$@" || status=$?
	case $status in
	0) echo "[harness: tests passed]" ;;
	124) echo "[harness: tests timed out after 15m; the output so far is kept]" ;;
	*) echo "[harness: tests failed with status $status]" ;;
	esac
	return 0
}

run_tests toolu_11 sh -c 'for i in $(seq 1 3000); do echo "ok   pkg/$i"; done; echo "FAIL pkg/3001"; exit 1'

# A runner that only keeps the tail: the value says how much was discarded.
retval exec --call toolu_12 --tail 64KiB -- seq 1 100000

# A command that hangs: stopped by the timeout, its process group with it.
retval exec --call toolu_13 --threshold 0 --timeout 1s -- sh -c 'echo started; sleep 600' ||
	echo "[harness: status $?]"
