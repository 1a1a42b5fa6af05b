#!/usr/bin/env bash
# An engineer looking at a run: what is kept, then slices of it. The store
# is plain files, so the usual tools work too.
set -euo pipefail
run=${RETVAL_RUN:?set RETVAL_RUN}
dir=${RETVAL_RUNS_DIR:-./runs}/$run.values

retval catalogue --all               # every run: values, bytes, last activity
retval catalogue --run "$run"        # one run's values, oldest first
retval peek --run "$run" toolu_03 --query 'file-1500$' --regex --context 2
retval stats --run "$run"            # what retention kept out of context, lookups counted

# Content is the exact bytes (less, grep, diff work); the descriptor is JSON.
grep -c . "$dir/toolu_02.txt"
jq '{id, tool, size, lines, exit_code}' "$dir/toolu_03.meta.json"

# Values retained with --compress zstd are seekable zstd: zstd -dc reads them.
seq 1 100000 | retval retain --call big --tool numbers --compress zstd >/dev/null
zstd -dc "$dir/big.txt.zst" | tail -n 2
