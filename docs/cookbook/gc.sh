#!/usr/bin/env bash
# Before putting gc in cron (see gc.md), see what it would do: --dry-run
# prints the same plan and changes nothing.
set -euo pipefail
retval gc --max-age 14d --max-bytes 20GiB --dry-run
retval gc --max-age 14d --max-bytes 20GiB --dry-run --json | jq '.removed | length'
