#!/usr/bin/env bash
# Settings come from flags, RETVAL_* variables, a TOML or YAML config file,
# or the defaults, in that order. retval config shows where each came from.
set -euo pipefail

cat >retval.toml <<'TOML'
threshold = "8KiB"
peek_lines = 100
compress = "auto"
max_run_bytes = "256MiB"
TOML
export RETVAL_CONFIG=$PWD/retval.toml

RETVAL_PEEK_LINES=50 retval config --threshold 4KiB
