#!/usr/bin/env bash
# Runs the tests of the store (pkg/retain and the file layer under it,
# internal/fsx), peek, resolve and expand (pkg/expand), gc and exec
# (pkg/execute) built for windows/amd64, under Wine. Installs what it
# needs (Debian packages) when missing and keeps the Wine prefix under
# $HOME/.cache/retval-ci. Quiet unless something fails: one line per
# package, as go test prints.
#
# Wine is not Windows: what a test needs of Windows that Wine lacks skips
# there and says so (testenv.SkipUnderWine: POSIX rename semantics,
# symlinks, atomic appends by concurrent writers). Two gaps of Debian 12's
# Wine 8 are bridged here, for the test binaries only:
#   - Go (1.24 and later) needs ProcessPrng from bcryptprimitives.dll, which
#     Wine 8 does not have: a DLL that forwards it to advapi32's
#     SystemFunction036 (RtlGenRandom, the same contract) stands in.
#   - Go deletes a file with FileDispositionInformationEx (POSIX
#     semantics), falling back to the older call where a system says it
#     lacks it; Wine 8 says so with a status Go does not expect
#     (STATUS_NOT_IMPLEMENTED), so every delete failed. An overlay of the
#     standard library's at_windows.go adds that status to the fallback.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${HOME:?}/.cache/retval-ci
# The slowest under Wine first, so that the last to finish is a quick one.
packages=(pkg/retain pkg/retain/internal/format pkg/expand pkg/gc pkg/peek pkg/execute internal/fsx internal/flock)

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

need=()
command -v wine >/dev/null 2>&1 || need+=(wine wine64)
command -v x86_64-w64-mingw32-ld >/dev/null 2>&1 || need+=(binutils-mingw-w64-x86-64)
if ((${#need[@]})); then
  as_root=()
  [[ $(id -u) == 0 ]] || as_root=(sudo)
  quietly "apt-get update" "${as_root[@]}" apt-get update -q
  quietly "apt-get install ${need[*]}" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml="
version=$(wine --version)
export WINEPREFIX=$cache/wine-prefix-${version//[^A-Za-z0-9.]/-}
mkdir -p "$cache"
prng=$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll
if [[ ! -f $prng ]]; then
  quietly "wineboot" wineboot --init
  work=$(mktemp -d)
  printf 'LIBRARY bcryptprimitives\nEXPORTS\n  ProcessPrng = advapi32.SystemFunction036\n' >"$work/b.def"
  : >"$work/empty.s"
  quietly "assembling the ProcessPrng shim" x86_64-w64-mingw32-as -o "$work/empty.o" "$work/empty.s"
  quietly "linking the ProcessPrng shim" x86_64-w64-mingw32-ld --dll -e 0 --no-seh -o "$work/bcryptprimitives.dll" "$work/empty.o" "$work/b.def"
  cp "$work/bcryptprimitives.dll" "$prng"
  rm -rf "$work"
fi

at=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
overlay=$cache/wine-overlay-$(go env GOVERSION)
mkdir -p "$overlay"
sed 's|\tcase STATUS_INVALID_INFO_CLASS, // the operating system doesn.t support FileDispositionInformationEx|\tcase STATUS_INVALID_INFO_CLASS, NTStatus(0xC0000002), // Wine 8 answers STATUS_NOT_IMPLEMENTED|' "$at" >"$overlay/at_windows.go"
if ! grep -q 'NTStatus(0xC0000002)' "$overlay/at_windows.go"; then
  echo "ci: the Wine overlay no longer applies to $at (see .ci/wine.sh)" >&2
  exit 1
fi
printf '{"Replace":{"%s":"%s"}}\n' "$at" "$overlay/at_windows.go" >"$overlay/overlay.json"

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
module=$(go list -m)
# One go test -c for every package: they compile side by side, each into
# $bin/NAME.test.exe.
quietly "GOOS=windows go test -c" env GOOS=windows GOARCH=amd64 go test -overlay "$overlay/overlay.json" -c -o "$bin/" "${packages[@]/#/./}"

# Left out under Wine, each for a reason: what it proves is the same on
# every system, through code the package's other tests run on Windows too.
declare -A skip=(
  # Stub rendering under 362 preview budgets: the same text on every
  # system, and the same write path, 362 times, as the other retain
  # tests. A third of pkg/retain's time under Wine.
  [pkg/retain]='^TestStubTinyBudgets$'
)

# The packages run side by side, as many at once as there are CPUs: a
# test under Wine spends most of its time in round trips to wineserver,
# not computing. Each one's output is held back and printed whole if it
# fails.
winetest() {
  local pkg=$1 name=${1//\//-} start=$SECONDS status=0
  local args=(-test.short -test.timeout 15m)
  [[ -z ${skip[$pkg]:-} ]] || args+=(-test.skip "${skip[$pkg]}")
  # From the package's directory, as go test runs a test (testdata).
  # Without CI and VERSITYGW: versitygw is a Linux binary, so the S3
  # tests run against the in-process fake here (natively, against both).
  (cd "$pkg" && env -u CI -u VERSITYGW wine "$bin/${pkg##*/}.test.exe" "${args[@]}") >"$bin/$name.log" 2>&1 || status=$?
  echo "$status $((SECONDS - start))" >"$bin/$name.status"
}
slots=$(nproc)
for pkg in "${packages[@]}"; do
  while (($(jobs -rp | wc -l) >= slots)); do wait -n || true; done
  winetest "$pkg" &
done
wait
failed=0
for pkg in "${packages[@]}"; do
  name=${pkg//\//-}
  read -r status secs <"$bin/$name.status"
  if ((status != 0)); then
    echo "ci: windows/amd64 tests of $pkg under Wine failed (exit $status):" >&2
    cat "$bin/$name.log" >&2
    failed=1
    continue
  fi
  printf 'ok  \t%s\t%ds (windows/amd64 under Wine, -short)\n' "$module/$pkg" "$secs"
done
exit "$failed"
