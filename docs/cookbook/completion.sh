#!/usr/bin/env bash
# Shell completion: commands, flags, run ids after --run and value ids
# after peek and resolve. Install it once (or source it from ~/.bashrc).
set -euo pipefail
dir=${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions
mkdir -p "$dir"
retval completion bash >"$dir/retval"
source "$dir/retval" && complete -p retval
