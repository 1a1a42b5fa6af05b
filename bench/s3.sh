#!/usr/bin/env bash
# Measures retval on S3-compatible object storage against versitygw on
# loopback (posix backend in a temporary directory), side by side with
# the AWS CLI and curl doing the same transfer, and prints a markdown
# table: retain of 1 MiB and 256 MiB (time, peak RSS), the last 400 lines
# of a 256 MiB value (requests the server saw, time), a JSON pointer into
# a 200 MiB package-lock, and gc of 1,000 runs × 20 values.
#
#   bench/s3.sh            full sizes
#   bench/s3.sh --quick    small sizes, for a smoke test
#
# Needs go, hyperfine, GNU time and versitygw ($VERSITYGW, on $PATH, or
# built by .ci/run into ~/.cache/retval-ci). The AWS CLI and curl rows are
# measured where those are installed.
set -euo pipefail
quick=0
[[ ${1:-} == --quick ]] && quick=1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ((quick)); then
  big=$((16 << 20)); lock_size=$((8 << 20)); gc_runs=50; gc_values=20; runs=3
else
  big=$((256 << 20)); lock_size=$((200 << 20)); gc_runs=1000; gc_values=20; runs=5
fi
vgw=${VERSITYGW:-$(command -v versitygw || echo "$HOME/.cache/retval-ci/versitygw@v1.8.0/versitygw")}
[[ -x $vgw ]] || { echo "bench/s3.sh: no versitygw (set VERSITYGW)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/retval-s3bench.XXXXXX")
trap 'kill "$gw" 2>/dev/null; wait "$gw" 2>/dev/null; rm -rf "$work"' EXIT
R=$work/retval
go build -o "$R" .

# The gateway, on a free port, with its own access log to count requests.
mkdir -p "$work/gw/bench"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=benchsecret AWS_REGION=us-east-1
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$port AWS_ENDPOINT_URL=http://127.0.0.1:$port
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
"$vgw" --port "127.0.0.1:$port" --quiet --access bench --secret benchsecret --region us-east-1 \
  --access-log "$work/access.log" posix "$work/gw" > "$work/gw.log" 2>&1 &
gw=$!
for _ in $(seq 100); do curl -s -o /dev/null "$AWS_ENDPOINT_URL" && break; sleep 0.1; done
export RETVAL_STORE=s3://bench/runs
lift=(--threshold 0 --max-value-size 0 --max-run-bytes 0 --max-run-values 0)

go run bench/gen.go log $((1 << 20)) > "$work/one.log"
go run bench/gen.go log "$big" > "$work/big.log"
go run bench/gen.go lock "$lock_size" > "$work/lock.json"
lines=$(wc -l < "$work/big.log")

hf() {
  hyperfine --style none --runs "$1" --export-json "$work/hf.json" "${@:2}" > "$work/hf.log" 2>&1 ||
    { cat "$work/hf.log" >&2; exit 1; }
}
# median NAME: "median (min–max)" of the last hyperfine run's command NAME.
row() {
  jq -r --arg c "$1" '.results[] | select(.command == $c) | "\(.median * 1000 | floor) ms (\(.min * 1000 | floor)–\(.max * 1000 | floor) ms)"' "$work/hf.json"
}
rss() { /usr/bin/time -f '%M' -o "$work/rss" "$@" > /dev/null 2>&1; echo "$(($(tail -n 1 "$work/rss") / 1024)) MiB"; }
requests() { local before; before=$(wc -l < "$work/access.log"); "$@" > /dev/null 2>&1; echo $(($(wc -l < "$work/access.log") - before)); }
curl_s3="curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user bench:benchsecret -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD'"

echo "| operation | retval | baseline | baseline time | retval RSS | requests |"
echo "|---|---|---|---|---|---|"
# retain: a fresh call id each time (the same id again is a no-op).
for f in one big; do
  n=$([[ $f == one ]] && echo 20 || echo "$runs")
  ret="sh -c '$R retain --run b --call c\$(od -An -N6 -tx1 /dev/urandom | tr -d \" \\n\") ${lift[*]} $work/$f.log > /dev/null'"
  cmds=("$ret")
  base=()
  if command -v aws > /dev/null; then cmds+=("aws s3 cp --quiet $work/$f.log s3://bench/cli/$f.log"); base+=(aws); fi
  cmds+=("$curl_s3 -T $work/$f.log $AWS_ENDPOINT_URL/bench/curl/$f.log"); base+=(curl)
  hf "$n" "${cmds[@]}"
  m=$(rss "$R" retain --run b --call "rss$f" "${lift[@]}" "$work/$f.log")
  k=$(requests "$R" retain --run b --call "req$f" "${lift[@]}" "$work/$f.log")
  for i in "${!base[@]}"; do
    echo "| retain $(($(stat -c %s "$work/$f.log") >> 20)) MiB | $(row "$ret") | ${base[$i]} | $(row "${cmds[$((i + 1))]}") | $m | $k |"
  done
done

# The last 400 lines of the big value, and the same bytes by one ranged GET.
"$R" retain --run b --call big "${lift[@]}" "$work/big.log" > /dev/null
peek="$R peek --run b big --lines $((lines - 399))-$lines --peek-bytes 1MiB --threshold 2MiB"
off=$(($(stat -c %s "$work/big.log") - 16384))
cmds=("$peek" "$curl_s3 -r $off- $AWS_ENDPOINT_URL/bench/curl/big.log")
command -v aws > /dev/null && cmds+=("aws s3api get-object --bucket bench --key curl/big.log --range bytes=$off- $work/range.out")
hf 20 "${cmds[@]}"
k=$(requests $peek)
echo "| last 400 lines of $((big >> 20)) MiB | $(row "$peek") | curl -r (16 KiB) | $(row "${cmds[1]}") | $(rss $peek) | $k |"
[[ ${#cmds[@]} -gt 2 ]] && echo "| last 400 lines of $((big >> 20)) MiB | $(row "$peek") | aws s3api get-object --range | $(row "${cmds[2]}") | | |"

# A pointer into the package-lock, on S3 and on local disk.
"$R" retain --run b --call lock "${lift[@]}" "$work/lock.json" > /dev/null
RETVAL_STORE= "$R" retain --runs-dir "$work/local" --run b --call lock "${lift[@]}" "$work/lock.json" > /dev/null
ptr=$(jq -r '.packages | keys | .[length / 2 | floor]' "$work/lock.json" | sed 's/~/~0/g; s#/#~1#g')
res="$R resolve --run b lock --pointer /packages/$ptr/version"
loc="env RETVAL_STORE= $R resolve --runs-dir $work/local --run b lock --pointer /packages/$ptr/version"
hf "$runs" "$res" "$loc"
echo "| pointer into a $((lock_size >> 20)) MiB package-lock | $(row "$res") | the same on local disk | $(row "$loc") | $(rss $res) | $(requests $res) |"

# gc of many runs: filled directly through the object layer, then collected.
RETVAL_STORE=s3://bench/gc go run bench/s3fill.go "$gc_runs" "$gc_values"
t0=$(date +%s.%N)
RETVAL_NOW=2099-01-01T00:00:00Z RETVAL_STORE=s3://bench/gc /usr/bin/time -f '%M' -o "$work/rss" "$R" gc --max-age 7d > "$work/gc.out"
t1=$(date +%s.%N)
gcs=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)")
RETVAL_STORE=s3://bench/gc2 go run bench/s3fill.go "$gc_runs" "$gc_values"
t0=$(date +%s.%N)
if command -v aws > /dev/null; then
  aws s3 rm --quiet --recursive s3://bench/gc2/ > /dev/null
  base="aws s3 rm --recursive"
else
  base="(no aws CLI)"
fi
t1=$(date +%s.%N)
echo "| gc of $gc_runs runs × $gc_values values | ${gcs} s | $base | $(printf '%.2f' "$(echo "$t1 - $t0" | bc)") s | $(($(tail -n 1 "$work/rss") / 1024)) MiB | |"
echo
echo "gc said: $(tail -n 1 "$work/gc.out")"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(go version | cut -d' ' -f3); versitygw v1.8.0 (posix backend, loopback)"
