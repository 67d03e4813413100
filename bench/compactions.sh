#!/usr/bin/env bash
# bench/compactions.sh OLD NEW [MB] [COUNTS] — issue 44's storage and memory
# against the number of compactions: a generated Claude Code transcript of
# MB megabytes (default 30) with K compactions spread evenly over it
# (claudecode-gen -compact-every), imported by the old and the new binary.
# Prints, per K and binary: nodes.jsonl bytes, the bytes its summary lines
# take, import wall seconds and peak RSS, and `estimate FILE` (a fresh
# cache: import + estimate) wall seconds and peak RSS.
#
#   go build -o /tmp/ctxfold-new . && bench/compactions.sh /tmp/ctxfold-old /tmp/ctxfold-new 30 "0 1 10 100 1000"
set -euo pipefail
old=$1; new=$2; mb=${3:-30}; counts=${4:-"0 1 10 100 1000"}
work=$(mktemp -d /tmp/compactions-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gen" ./bench/claudecode-gen
src=/work/shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
[ -f "$src" ] || src=$(pwd)/../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
echo "uptime: $(uptime)"
printf '%-6s %-4s %14s %14s %13s %9s %10s %9s %10s\n' K bin transcript nodes.jsonl summary-bytes import-s import-KB est-s est-KB
for k in $counts; do
	every=0
	[ "$k" -gt 0 ] && every=$((mb * 1000000 / (k + 1)))
	"$work/gen" -src "$src" -mb "$mb" -compact-every "$every" -o "$work/s.jsonl"
	got=$(grep -c '"compact_boundary"' "$work/s.jsonl" || true)
	for b in old new; do
		bin=$old; [ $b = new ] && bin=$new
		rm -rf "$work/imp" "$work/cache"
		/usr/bin/time -f '%e %M' -o "$work/t" "$bin" import "$work/s.jsonl" -o "$work/imp" >/dev/null
		read -r iw ik <"$work/t"
		sb=$( (grep '"compaction":true' "$work/imp/nodes.jsonl" || true) | wc -c)
		cp "$work/s.jsonl" "$work/f.jsonl"
		XDG_CACHE_HOME=$work/cache /usr/bin/time -f '%e %M' -o "$work/t" "$bin" estimate "$work/f.jsonl" --json >/dev/null
		read -r ew ek <"$work/t"
		printf '%-6s %-4s %14s %14s %13s %9s %10s %9s %10s\n' "$got" $b "$(stat -c %s "$work/s.jsonl")" "$(stat -c %s "$work/imp/nodes.jsonl")" "$sb" "$iw" "$ik" "$ew" "$ek"
	done
done
echo "uptime: $(uptime)"
