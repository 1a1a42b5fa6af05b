#!/usr/bin/env bash
# Resuming a session: rebuild what the model saw from the transcript's full
# outputs. replay prints the stub retain printed, byte for byte, for a value
# still in the store, and the output itself otherwise; it writes nothing.
set -euo pipefail
transcript=${TRANSCRIPT:-transcript}

for out in "$transcript"/*.out; do
	call=$(basename "$out" .out)
	retval replay --call "$call" "$out"
done
