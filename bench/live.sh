#!/usr/bin/env bash
# bench/live.sh BIN MB TURNS — the live-session figures of docs/BENCHMARKS.md:
# a generated MB-megabyte Claude Code transcript (real turns replicated by
# bench/claudecode-gen), cold `estimate FILE`, the same after appending one
# turn (with how many bytes of the file that refresh parsed), unchanged,
# and `statusline` after each of TURNS appended turns (median and p95
# wall). Caches live in a fresh XDG_CACHE_HOME under /tmp.
#
#   go build -o /tmp/ctxfold . && bench/live.sh /tmp/ctxfold 100 100
set -euo pipefail
bin=$1; mb=$2; turns=$3
work=$(mktemp -d /tmp/live-bench.XXXXXX)
export XDG_CACHE_HOME=$work/cache
f=$work/s.jsonl
go run ./bench/claudecode-gen -mb "$mb" -o "$f"
wall() { /usr/bin/time -f '%e' -o $work/t "$@" >/dev/null 2>$work/err || { cat $work/err >&2; exit 1; }; cat $work/t; }
echo "file: $(stat -c %s "$f") bytes"
echo "estimate FILE, cold: $(wall "$bin" estimate "$f" --json) s"
go run ./bench/claudecode-gen -append 1 -o "$f"
/usr/bin/time -f '%e' -o $work/t "$bin" estimate "$f" --json >$work/out 2>$work/err || { cat $work/err >&2; exit 1; }
echo "estimate FILE after appending one turn: $(cat $work/t) s ($(grep -o '"update":"[a-z]*"' $work/out), $(grep -o '"parsed_bytes":[0-9]*' $work/out) of $(stat -c %s "$f"))"
echo "estimate FILE unchanged: $(wall "$bin" estimate "$f" --json) s"
hook=$work/hook.json
printf '{"transcript_path":"%s","model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"}}' "$f" > "$hook"
go build -o $work/gen ./bench/claudecode-gen
: > $work/times
for _ in $(seq "$turns"); do
	$work/gen -append 1 -o "$f"
	/usr/bin/time -f '%e' -o $work/t "$bin" statusline < "$hook" > $work/line
	cat $work/t >> $work/times
done
sort -n $work/times | awk -v n="$turns" '{a[NR]=$1} END {m=a[int((n+1)/2)]; p=a[int(n*0.95+0.999)]; printf "statusline after each of %d appended turns: median %s s, p95 %s s, max %s s\n", n, m, p, a[n]}'
echo "last line: $(cat $work/line)"
rm -rf "$work"
