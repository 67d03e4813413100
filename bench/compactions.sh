#!/usr/bin/env bash
# bench/compactions.sh OLD NEW [MB] [COUNTS] — issue 44's storage and memory
# against the number of compactions: a generated Claude Code transcript of
# MB megabytes (default 130) with about K compactions spread evenly over it
# (claudecode-gen -compact-every MB/(K+1); "all" compacts after every turn,
# about 1,000 for 130 MB), imported by the old and the new binary. Prints,
# per K and binary: the compactions written, nodes.jsonl bytes, the bytes
# of its summary lines, and the import's wall and CPU seconds and peak RSS.
# With EST=1 it also times `estimate FILE` (a fresh cache: import +
# estimate).
#
#   go build -o /tmp/ctxfold-new . && bench/compactions.sh /tmp/ctxfold-old /tmp/ctxfold-new 130 "0 1 10 100 all"
set -euo pipefail
old=$1; new=$2; mb=${3:-130}; counts=${4:-"0 1 10 100 all"}
work=$(mktemp -d /tmp/compactions-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gen" ./bench/claudecode-gen
src=/work/shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
[ -f "$src" ] || src=$(pwd)/../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
echo "uptime: $(uptime)"
printf '%-6s %-4s %11s %11s %11s %8s %7s %9s' K bin transcript nodes.jsonl summaries wall-s cpu-s peak-KB
[ "${EST:-}" = 1 ] && printf ' %8s %9s' est-s est-KB
echo
for k in $counts; do
	case $k in
	all) every=1 ;;
	0) every=0 ;;
	*) every=$((mb * 1000000 / (k + 1))) ;;
	esac
	"$work/gen" -src "$src" -mb "$mb" -compact-every "$every" -o "$work/s.jsonl"
	got=$(grep -c '"compact_boundary"' "$work/s.jsonl" || true)
	for b in old new; do
		bin=$old; [ $b = new ] && bin=$new
		rm -rf "$work/imp" "$work/cache"
		/usr/bin/time -f '%e %U %S %M' -o "$work/t" "$bin" import "$work/s.jsonl" -o "$work/imp" >/dev/null
		read -r iw iu is ik <"$work/t"
		sb=$( (grep '"compaction":true' "$work/imp/nodes.jsonl" || true) | wc -c)
		printf '%-6s %-4s %11s %11s %11s %8s %7s %9s' "$got" $b "$(stat -c %s "$work/s.jsonl")" "$(stat -c %s "$work/imp/nodes.jsonl")" "$sb" "$iw" "$(echo "$iu + $is" | bc)" "$ik"
		if [ "${EST:-}" = 1 ]; then
			cp "$work/s.jsonl" "$work/f.jsonl"
			XDG_CACHE_HOME=$work/cache /usr/bin/time -f '%e %M' -o "$work/t" "$bin" estimate "$work/f.jsonl" --json >/dev/null
			read -r ew ek <"$work/t"
			printf ' %8s %9s' "$ew" "$ek"
		fi
		echo
	done
done
echo "uptime: $(uptime)"
