#!/usr/bin/env bash
# The model reads slices of a stored result. Each of its turns is one step:
# --step carries the lookup budget (8 lookups, 8 KiB each, 64 KiB in all by
# default) across the separate retval processes of that turn.
set -euo pipefail
step=turn-7

# One reference, as the model writes it; the bytes come back unchanged.
retval resolve --step "$step" toolu_02 --lines 100-102

# Several at once, as JSON: one JSON result per line, failures included.
echo '[{"$ref": "toolu_02", "lines": [49999, 50000]}, {"$ref": "toolu_99"}]' |
	retval resolve --step "$step" --batch

# Past the budget the whole call is refused (exit 5): tell the model why.
for lines in 1-1 2-2 3-3 4-4 5-5 6-6; do
	if ! text=$(retval resolve --step "$step" toolu_02 --lines "$lines" 2>&1); then
		echo "lookup $lines refused: $text"
	fi
done
