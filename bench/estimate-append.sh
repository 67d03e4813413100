#!/usr/bin/env bash
# bench/estimate-append.sh BIN MB TRIALS — the "after one append" figures of
# docs/BENCHMARKS.md ("estimate"): a generated MB-megabyte Claude Code
# transcript imported as a session, then TRIALS times: append one turn
# (`ctxfold append`: a user node and an assistant node with usage) and time
# `ctxfold estimate DIR --json` from the view stored before the append
# (incremental), from the count cache only, and (first trial) from no
# cache; the outputs must be byte-identical.
#
#   go build -o /tmp/ctxfold . && bench/estimate-append.sh /tmp/ctxfold 100 5
set -euo pipefail
bin=$1; mb=$2; n=$3
w=$(mktemp -d /tmp/estimate-append.XXXXXX)
go run ./bench/claudecode-gen -mb "$mb" -o "$w/big.jsonl"
"$bin" import "$w/big.jsonl" -o "$w/S" > /dev/null
S=$w/S
echo "nodes.jsonl: $(stat -c %s "$S/nodes.jsonl") bytes, $(wc -l < "$S/nodes.jsonl") nodes"
wall() { /usr/bin/time -o "$w/t" -f %e "$@" > "$w/out" 2> "$w/err" || { cat "$w/err" >&2; exit 1; }; cat "$w/t"; }
"$bin" estimate "$S" --json > /dev/null
for i in $(seq "$n"); do
	rm -rf "$w/c"; cp -r "$S/cache" "$w/c"
	printf '{"role":"user","content":"turn %s: run the tests again"}\n{"role":"assistant","content":"All %s pass.","usage":{"input_tokens":%s,"output_tokens":20}}\n' "$i" "$i" $((700000 + i)) > "$w/b.jsonl"
	"$bin" append "$S" --file "$w/b.jsonl" > /dev/null
	inc=$(wall "$bin" estimate "$S" --json); cp "$w/out" "$w/inc.json"
	rm -rf "$S/cache"; cp -r "$w/c" "$S/cache"; rm -f "$S/cache/estimate.view" "$S/cache/estimate.incr"
	nc=$(wall "$bin" estimate "$S" --json); cmp "$w/out" "$w/inc.json"
	cold=-
	if [ "$i" = 1 ]; then
		rm -rf "$S/cache"
		cold=$(wall "$bin" estimate "$S" --json); cmp "$w/out" "$w/inc.json"
	fi
	view=$(wall "$bin" estimate "$S" --json)
	echo "trial $i: incremental $inc s, count cache only $nc s, cold $cold s, unchanged $view s"
done
rm -rf "$w"
